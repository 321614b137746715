import { and, eq, gt } from "drizzle-orm";
import type { Db } from "../../db/client";
import { releaseEntries, shardOfMinted } from "../../db/directory";
import { idForUser, slotOfRouted } from "../../db/routed-ids";
import { tickets } from "../../db/schema";
import type { Deps } from "../../http/deps";
import { sha256Hex } from "../../lib/crypto";
import { NOTHING_TO_PUT_BACK, type PutBack, putBackWith } from "../../lib/put-back";
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

export interface ConsumedTicket extends PutBack {
  userId: string;
  type: TicketType;
  codeChallenge: string | null;
}

/**
 * Consumes a ticket in one conditional statement (DELETE … RETURNING), so two requests racing with the same ticket
 * cannot both succeed. Returns the user and type, or null for an unknown, expired or used ticket.
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
  const row = await db
    ?.delete(tickets)
    .where(and(eq(tickets.ticketHash, ticketHash), eq(tickets.type, type), gt(tickets.expiresAt, deps.now())))
    .returning()
    .get();
  if (!db || !row) return null;
  const consumed = { userId: row.userId, codeChallenge: row.codeChallenge, type };
  if (slotOfRouted(id) !== undefined) return { ...consumed, putBack: putBackTicket(db, row) };
  // An imported ticket (Nhost's, found through the directory) is spent with its directory entry, released now. It is
  // not put back after a fault: without its entry the row could not be found again (docs/decisions.md, "A code
  // spent before a fault is put back").
  deps.background(releaseEntries(deps.shards, row.userId, [entry]));
  return { ...consumed, ...NOTHING_TO_PUT_BACK };
}

/** The ticket's row inserted again (a newer ticket of its type in its place wins: one row per user and type). */
export function putBackTicket(db: Db, row: typeof tickets.$inferSelect): PutBack["putBack"] {
  return putBackWith("ticket", () => db.insert(tickets).values(row).onConflictDoNothing().run());
}
