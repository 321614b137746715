import { and, asc, eq, gt } from "drizzle-orm";
import { base64url } from "jose";
import { findUserById } from "../auth";
import { type OrgInvitationRow, organizations, orgInvitations } from "../db/schema";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { type Page, pastCursor, toPage } from "../http/paging";
import { randomUuid, sha256Hex } from "../lib/crypto";
import { mailInvitation } from "./invitation-mail";
import { addMember, checkRole } from "./members";
import { getOrg, type PageRequest } from "./organizations";
import { toWireInvitation } from "./wire";

/**
 * Invitations by email (contract organizations.md §1): single use, seven days, bound to the invited address. The
 * ticket is mailed and kept only as its SHA-256 (a high-entropy secret: no dictionary to attack); accepting consumes
 * it in one conditional `DELETE … RETURNING`, never read-then-write.
 */

export const INVITATION_LIFETIME_MS = 7 * 24 * 3600 * 1000;
export const INVITATION_TICKET_PREFIX = "orgInvitation:";

/** 256 random bits, prefixed like Nhost's tickets so that a ticket says what it is for. */
function newTicket(): string {
  return `${INVITATION_TICKET_PREFIX}${base64url.encode(crypto.getRandomValues(new Uint8Array(32)))}`;
}

export interface Invite {
  email: string;
  role: string;
  /** Where the mailed link leads (allow-listed); default: the client URL. */
  redirectTo: string;
}

/**
 * Invites `email` with `role` and mails the link. An earlier invitation of the same address to this org is replaced
 * (its ticket stops working) in the same batch. Only an owner may invite an owner. Answers the invitation (without
 * its ticket) and the ticket, for the admin API's caller and the tests' eyes only when no mail can be sent.
 */
export async function createInvitation(
  deps: Deps,
  orgId: string,
  invite: Invite,
  invitedBy: { userId: string | null; role?: string },
) {
  checkRole(deps, invite.role);
  if (invite.role === "owner" && invitedBy.role !== undefined && invitedBy.role !== "owner")
    throw new AppError("insufficient-org-role", "only an owner may invite an owner");
  const org = await getOrg(deps, orgId);
  const email = invite.email.toLowerCase();
  const ticket = newTicket();
  const now = deps.now();
  const row: OrgInvitationRow = {
    id: randomUuid(),
    orgId,
    email,
    role: invite.role,
    ticketHash: await sha256Hex(ticket),
    invitedBy: invitedBy.userId,
    createdAt: now,
    expiresAt: now + INVITATION_LIFETIME_MS,
  };
  await deps.db.batch([
    deps.db
      .delete(orgInvitations)
      .where(and(eq(orgInvitations.orgId, orgId), eq(orgInvitations.email, email))),
    deps.db.insert(orgInvitations).values(row),
  ]);
  await mailInvitation(
    deps,
    { org, email, role: invite.role, ticket, redirectTo: invite.redirectTo },
    invitedBy.userId,
  );
  return toWireInvitation(row);
}

/** The org's pending (unexpired) invitations, oldest first. */
export async function listInvitations(
  deps: Pick<Deps, "db" | "now">,
  orgId: string,
  page: PageRequest,
): Promise<Page<ReturnType<typeof toWireInvitation>>> {
  const rows = await deps.db
    .select()
    .from(orgInvitations)
    .where(
      and(
        eq(orgInvitations.orgId, orgId),
        gt(orgInvitations.expiresAt, deps.now()),
        pastCursor(page.cursor, orgInvitations.createdAt, orgInvitations.id, "asc"),
      ),
    )
    .orderBy(asc(orgInvitations.createdAt), asc(orgInvitations.id))
    .limit(page.limit + 1)
    .all();
  return toPage(rows, page.limit, (row) => [row.createdAt, row.id], toWireInvitation);
}

/** Withdraws an invitation of this org; 404 for an id of another org or none. */
export async function deleteInvitation(deps: Pick<Deps, "db">, orgId: string, id: string): Promise<void> {
  const gone = await deps.db
    .delete(orgInvitations)
    .where(and(eq(orgInvitations.orgId, orgId), eq(orgInvitations.id, id)))
    .returning({ id: orgInvitations.id })
    .get();
  if (!gone) throw new AppError("not-found", "no such invitation");
}

/** A pending invitation as a page shows it, read by its ticket's hash without consuming it. */
export interface PendingInvitation {
  org: { id: string; name: string };
  email: string;
  role: string;
  expiresAt: number;
}

/**
 * The unexpired invitation behind `ticketHash`, or undefined: a read for display only (the hosted page), never what
 * decides an accept (that is `acceptInvitationByHash`'s one statement).
 */
export async function findPendingInvitation(
  deps: Pick<Deps, "db" | "now">,
  ticketHash: string,
): Promise<PendingInvitation | undefined> {
  const row = await deps.db
    .select({
      orgId: organizations.id,
      orgName: organizations.name,
      email: orgInvitations.email,
      role: orgInvitations.role,
      expiresAt: orgInvitations.expiresAt,
    })
    .from(orgInvitations)
    .innerJoin(organizations, eq(organizations.id, orgInvitations.orgId))
    .where(and(eq(orgInvitations.ticketHash, ticketHash), gt(orgInvitations.expiresAt, deps.now())))
    .get();
  if (!row) return undefined;
  return {
    org: { id: row.orgId, name: row.orgName },
    email: row.email,
    role: row.role,
    expiresAt: row.expiresAt,
  };
}

/** Accepts by the ticket itself (`POST /orgs/invitations/accept`): see `acceptInvitationByHash`. */
export async function acceptInvitation(deps: Deps, ticket: string, userId: string) {
  return acceptInvitationByHash(deps, await sha256Hex(ticket), userId);
}

/**
 * Accepts an invitation for the signed-in `userId`: the ticket is consumed only when its address is the user's
 * VERIFIED email (and it has not expired), in one `DELETE … RETURNING` whose conditions say so. Refused, the ticket
 * stays for its real addressee: 403 `invitation-email-mismatch` for another or an unverified address (threat: a
 * forwarded or intercepted mail, or an account that merely claims the address, joining the org); 401
 * `invalid-ticket` for an unknown, used or expired one. A user who already is a member keeps their role. The hosted
 * page (src/pages/) keeps only the ticket's hash, and accepts by it.
 */
export async function acceptInvitationByHash(deps: Deps, ticketHash: string, userId: string) {
  const user = await findUserById(deps.shards, userId);
  if (!user) throw new AppError("unauthorized");
  const now = deps.now();
  const email = user.email?.toLowerCase();
  const consumed =
    email && user.emailVerified
      ? await deps.db
          .delete(orgInvitations)
          .where(
            and(
              eq(orgInvitations.ticketHash, ticketHash),
              eq(orgInvitations.email, email),
              gt(orgInvitations.expiresAt, now),
            ),
          )
          .returning()
          .get()
      : undefined;
  if (!consumed) {
    // Why not, read after the fact (the decision above was one statement): unknown or expired, else not theirs.
    const pending = await deps.db
      .select({ expiresAt: orgInvitations.expiresAt })
      .from(orgInvitations)
      .where(eq(orgInvitations.ticketHash, ticketHash))
      .get();
    if (!pending || pending.expiresAt <= now) throw new AppError("invalid-ticket");
    throw new AppError(
      "invitation-email-mismatch",
      email && !user.emailVerified
        ? "verify your email address first, then accept the invitation"
        : undefined,
    );
  }
  const { member } = await addMember(deps, {
    orgId: consumed.orgId,
    userId,
    role: consumed.role,
    source: "invitation",
  });
  const org = await getOrg(deps, consumed.orgId);
  return { org, role: member.role };
}
