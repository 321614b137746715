import { eq, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { shardOfEntry } from "../db/directory";
import { auditEvents, users } from "../db/schema";
import type { Shards } from "../db/shards";
import { sha256Hex } from "../lib/crypto";
import { toHex } from "../lib/hex";
import { hmacSubkey } from "../lib/subkeys";
import { type Actor, actorName } from "./actor";
import type { RequestOrigin, SignInAttempt } from "./events";
import { auditStreamData } from "./stream";

/**
 * Failed sign-ins in the audit log (contract §10 `signin.failure`), with two bounds:
 * - The email typed is kept only when it is an account's address. An address with no account (a typo, or a list an
 *   attacker tries) is kept as a keyed hash (`emailHash`, HMAC-SHA256 under a subkey of `AUTH_ENCRYPTION_KEY`): the
 *   same address gives the same hash, so repeated tries still show, but the log holds no address of a stranger.
 * - Per client address and 10-minute window, the first `INDIVIDUAL_PER_WINDOW` failures are events of their own;
 *   the rest increment one `signin.failure.repeated` event of that address and window (`count`, `lastAt`), so a
 *   flood from one address adds one row, not thousands that bury the events around them.
 * All of it runs after the answer (the account lookup must not make failures for known addresses slower).
 */
export const INDIVIDUAL_PER_WINDOW = 10;
export const FAILURE_WINDOW_MS = 10 * 60_000;

export async function emailHash(encryptionKey: string, email: string): Promise<string> {
  const key = await hmacSubkey(encryptionKey, "audit-emails");
  const tag = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(email.trim().toLowerCase()));
  return toHex(tag).slice(0, 32);
}

async function emailDetail(shards: Shards, encryptionKey: string, email: string | undefined) {
  if (!email) return {};
  const address = email.trim().toLowerCase().slice(0, 254);
  const db: Db | undefined = await shardOfEntry(shards, { kind: "email", value: address });
  const account = await db?.select({ id: users.id }).from(users).where(eq(users.email, address)).get();
  return account ? { email: address } : { emailHash: await emailHash(encryptionKey, address) };
}

export async function recordSignInFailure(
  deps: {
    shards: Shards;
    encryptionKey: string;
    origin: RequestOrigin;
    eventId: (at: number) => string;
    actor: Actor;
    /** Whether each kept event also goes to the outbox for the export (record.ts). */
    exported: boolean;
  },
  at: number,
  attempt: SignInAttempt,
): Promise<void> {
  const { origin } = deps;
  // Counted per client address whoever's account was tried, so kept in one database: the home one.
  const db = deps.shards.home;
  const detail = {
    method: attempt.method,
    error: attempt.error,
    ...(await emailDetail(deps.shards, deps.encryptionKey, attempt.email)),
  };
  const userId = attempt.userId ?? null;
  const actor = { actor: deps.actor.kind, actorName: actorName(deps.actor.name) };
  const row = {
    id: deps.eventId(at),
    at,
    type: "signin.failure",
    userId,
    ...actor,
    outcome: "failure",
    reason: attempt.error,
    ip: origin.ip,
    userAgent: origin.userAgent,
    detail,
  };
  console.log(JSON.stringify({ level: "info", what: "audit", ...row }));
  const windowStart = at - (at % FAILURE_WINDOW_MS);
  // One statement decides and inserts, so parallel failures cannot all see "fewer than ten". D1's own statements:
  // drizzle's batch takes no raw statement with parameters, and this one must share a batch with its export's.
  const d1 = db.$client;
  const insert = d1
    .prepare(
      `INSERT INTO audit_events (id, at, type, user_id, actor, actor_name, outcome, reason, ip, user_agent, detail)
      SELECT ?, ?, 'signin.failure', ?, ?, ?, 'failure', ?, ?, ?, ?
      WHERE (SELECT count(*) FROM (SELECT 1 FROM audit_events WHERE ip IS ? AND type = 'signin.failure'
        AND at >= ? LIMIT ?)) < ?`,
    )
    .bind(
      row.id,
      at,
      userId,
      actor.actor,
      actor.actorName,
      row.reason,
      origin.ip,
      origin.userAgent,
      JSON.stringify(detail),
      origin.ip,
      windowStart,
      INDIVIDUAL_PER_WINDOW,
      INDIVIDUAL_PER_WINDOW,
    );
  // With the export on, the event goes to the outbox in the same transaction, if and only if it was kept.
  const [inserted] = deps.exported
    ? await d1.batch([insert, ...exportIfKept(d1, row.id, auditStreamData(row))])
    : [await insert.run()];
  if ((inserted?.meta.changes ?? 0) > 0) return;
  const aggregateId = `${windowStart.toString().padStart(14, "0")}-repeated-${(await sha256Hex(origin.ip ?? "")).slice(0, 16)}`;
  await db
    .insert(auditEvents)
    .values({
      id: aggregateId,
      at,
      type: "signin.failure.repeated",
      ...actor,
      outcome: "failure",
      reason: "repeated",
      ip: origin.ip,
      userAgent: origin.userAgent,
      detail: {
        count: 1,
        windowStart: new Date(windowStart).toISOString(),
        lastAt: new Date(at).toISOString(),
      },
    })
    .onConflictDoUpdate({
      target: auditEvents.id,
      set: {
        at,
        userAgent: origin.userAgent,
        detail: sql`json_set(${auditEvents.detail}, '$.count', json_extract(${auditEvents.detail}, '$.count') + 1, '$.lastAt', ${new Date(at).toISOString()})`,
      },
    });
}

/**
 * The outbox statements of an exported failure, each conditional on the audit row `id` being there: the insert before
 * them decided whether the failure is an event of its own or only counted. The roll-up (`signin.failure.repeated`)
 * is not exported: its count changes under it; the individual failures before it, which are, show the flood began.
 */
function exportIfKept(d1: D1Database, id: string, data: Record<string, unknown>): D1PreparedStatement[] {
  const kept = "EXISTS (SELECT 1 FROM audit_events WHERE id = ?)";
  return [
    d1.prepare("INSERT INTO event_sequences (subject, last) VALUES ('audit', 0) ON CONFLICT DO NOTHING"),
    d1.prepare(`UPDATE event_sequences SET last = last + 1 WHERE subject = 'audit' AND ${kept}`).bind(id),
    d1
      .prepare(
        `INSERT INTO event_outbox (type, subject, sequence, data)
        SELECT 'audit.recorded', 'audit', (SELECT last FROM event_sequences WHERE subject = 'audit'), ? WHERE ${kept}`,
      )
      .bind(JSON.stringify(data), id),
  ];
}
