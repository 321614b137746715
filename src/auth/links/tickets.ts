import { and, eq, gt } from "drizzle-orm";
import type { Db } from "../../db/client";
import { type DirectoryEntry, releaseEntries, shardOfMinted } from "../../db/directory";
import { idForUser, slotOfRouted } from "../../db/routed-ids";
import { tickets } from "../../db/schema";
import type { Deps } from "../../http/deps";
import { sha256Hex } from "../../lib/crypto";
import { type Claimed, onFaultPutBack, type PutBack, putBackWith } from "../../lib/put-back";
import type { LinkTicketType } from "../link-form";

const HOUR = 3600 * 1000;

/**
 * Ticket kinds of contract §8: lifetime, the `type` the verify link and its redirect carry, and the mail template.
 * The wire form is `<kind>:<uuid>`; the uuid carries its user's slot (src/db/routed-ids.ts), so a followed link
 * reaches the user's shard without a lookup. A ticket imported from Nhost has a random one: the directory knows it.
 */
export const TICKET_TYPES = {
  verifyEmail: { lifetimeMs: 30 * 24 * HOUR, redirectType: "emailVerify", template: "email-verify" },
  passwordlessEmail: {
    lifetimeMs: HOUR,
    redirectType: "signinPasswordless",
    template: "signin-passwordless",
  },
  passwordReset: { lifetimeMs: HOUR, redirectType: "passwordReset", template: "password-reset" },
  emailConfirmChange: {
    lifetimeMs: HOUR,
    redirectType: "emailConfirmChange",
    template: "email-confirm-change",
  },
} as const satisfies Record<LinkTicketType, unknown>;

export type TicketType = keyof typeof TICKET_TYPES;

function isTicketType(value: string): value is TicketType {
  return Object.hasOwn(TICKET_TYPES, value);
}

/**
 * Issues a ticket; a newer ticket of the same type replaces the user's older one. Only its hash is stored. With a
 * PKCE `codeChallenge`, following the link yields a one-time code for that app instead of a refresh token.
 */
export async function issueTicket(
  deps: Deps,
  userId: string,
  type: TicketType,
  codeChallenge: string | null = null,
): Promise<string> {
  const ticket = `${type}:${idForUser(userId)}`;
  const ticketHash = await sha256Hex(ticket);
  const expiresAt = deps.now() + TICKET_TYPES[type].lifetimeMs;
  await deps.shards
    .ofUser(userId)
    .insert(tickets)
    .values({ userId, type, ticketHash, expiresAt, codeChallenge })
    .onConflictDoUpdate({
      target: [tickets.userId, tickets.type],
      set: { ticketHash, expiresAt, codeChallenge },
    });
  return ticket;
}

export interface ConsumedTicket extends Claimed {
  userId: string;
  type: TicketType;
  codeChallenge: string | null;
}

/**
 * Consumes a ticket: the user and type, or null for an unknown, expired or used ticket. The ticket is claimed
 * (`claimTicket`: of two requests with one ticket, one wins, and a fault from its own statement on, its lost answer
 * included, puts it back); its callers run their effect in `spentUnlessPutBack` (src/lib/put-back.ts), which puts it
 * back on a fault and otherwise deletes the claimed row after their answer. A ticket imported from Nhost (no slot in
 * its id) is found through its directory entry, which it keeps until it is spent (`spendImported`).
 */
export async function consumeTicket(
  deps: Deps,
  ticket: string,
  only?: TicketType,
): Promise<ConsumedTicket | null> {
  const type = ticket.slice(0, ticket.indexOf(":"));
  if (!isTicketType(type) || (only && type !== only) || ticket.length > 200) return null;
  const id = ticket.slice(type.length + 1);
  const ticketHash = await sha256Hex(ticket);
  const entry = { kind: "ticket", value: ticketHash } as const;
  const db = await shardOfMinted(deps.shards, id, entry);
  if (!db) return null;
  const claimed = await claimTicket(deps, db, { ticketHash, type });
  if (!claimed) return null;
  const imported = slotOfRouted(id) === undefined;
  return {
    userId: claimed.row.userId,
    codeChallenge: claimed.row.codeChallenge,
    type,
    putBack: claimed.putBack,
    spend: imported ? () => spendImported(deps, claimed, entry) : claimed.spend,
  };
}

/**
 * An imported ticket spent: its claimed row deleted and its directory entry released, both after the answer. Never
 * on a put-back, which leaves the row and the entry that finds it for the retry (docs/decisions.md, "A code spent
 * before a fault is put back"). Until then the entry names the row's shard, where its hash, moved to the claim's key,
 * matches nothing: a second use is refused there. Both run whichever fails (best effort, as `spentUnlessPutBack`).
 */
async function spendImported(deps: Deps, claimed: ClaimedTicket, entry: DirectoryEntry): Promise<void> {
  await Promise.all([claimed.spend(), releaseEntries(deps.shards, claimed.row.userId, [entry])]);
}

/**
 * A ticket claimed for its effect: its row as it was before the claim, the put-back that gives it its hash again,
 * and the delete that spends it for good.
 */
export interface ClaimedTicket extends Claimed {
  row: typeof tickets.$inferSelect;
}

/**
 * Claims a live ticket (by its hash and type, and its user when the caller knows it) in one `UPDATE … RETURNING` that
 * moves its hash to a key only this request knows (`taken:<uuid>`; a ticket's hash is a SHA-256 in hex, so no claim
 * ever meets it): of two requests at once, one wins. The claim's own fault (D1 may have run it and lost the answer)
 * puts it back by that key, right whether the claim ran or not; one `DELETE … RETURNING`, whose lost answer left no
 * row to put back, spent the link for nothing. The claimed row keeps its place (one per user and type): a newer
 * ticket of the type takes it over (`issueTicket`'s upsert), and a put-back then loses to it.
 */
export async function claimTicket(
  deps: Deps,
  db: Db,
  of: { ticketHash: string; type: TicketType; userId?: string },
): Promise<ClaimedTicket | null> {
  const now = deps.now();
  const claim = `taken:${crypto.randomUUID()}`;
  const ofClaim = eq(tickets.ticketHash, claim);
  const claimLost = putBackWith("ticket", () =>
    db.update(tickets).set({ ticketHash: of.ticketHash }).where(ofClaim).run(),
  );
  const claimed = await onFaultPutBack({ putBack: claimLost }, () =>
    db
      .update(tickets)
      .set({ ticketHash: claim })
      .where(
        and(
          eq(tickets.ticketHash, of.ticketHash),
          eq(tickets.type, of.type),
          of.userId === undefined ? undefined : eq(tickets.userId, of.userId),
          gt(tickets.expiresAt, now),
        ),
      )
      .returning()
      .get(),
  );
  if (!claimed) return null;
  const row = { ...claimed, ticketHash: of.ticketHash };
  return {
    row,
    putBack: putBackClaimed(db, row, claim),
    spend: () => db.delete(tickets).where(ofClaim).run(),
  };
}

/**
 * The claimed ticket given its hash again, in one upsert: the claimed row renamed back; or, where the work after the
 * claim ended the user's tickets (a reset's `endOutstandingGrants`), the row inserted again for the retry; but never
 * over a newer ticket of its type in its place (the rename is only of this request's claim).
 */
function putBackClaimed(db: Db, row: typeof tickets.$inferSelect, claim: string): PutBack["putBack"] {
  return putBackWith("ticket", () =>
    db
      .insert(tickets)
      .values(row)
      .onConflictDoUpdate({
        target: [tickets.userId, tickets.type],
        set: { ticketHash: row.ticketHash },
        setWhere: eq(tickets.ticketHash, claim),
      })
      .run(),
  );
}
