import { and, eq, inArray, isNotNull } from "drizzle-orm";
import { oauth2Clients, oauth2Grants } from "../../db/schema";
import type { Shards } from "../../db/shards";
import type { EventConsumer } from "../../events/consume";
import type { StreamEvent } from "../../events/types";
import type { LogoutNotice } from "./logout-token";

/**
 * Back-Channel Logout 1.0 §2.7 as a consumer of the event stream: every session of this service that ends (sign-out,
 * sign-out everywhere, an admin revoking, a replayed refresh token, RP-initiated logout: each deletes a `sessions` row,
 * whose trigger writes `session.revoked`, docs/events.md) tells the clients that hold a grant from that session.
 * The stream is the one place every way of ending a session passes through, today's and tomorrow's.
 *
 * Per event: the grants whose `sid` is the ended session (in the user's shard), their clients that registered a
 * `backchannelLogoutUri`, and one message per client on LOGOUT_DELIVERIES, whose consumer signs and posts the logout
 * token with retries (backchannel-delivery.ts). Every such client is told, the one that asked for an RP-initiated
 * logout too: it may run the back end that keeps the session while its front end asked (§2.7 allows skipping it;
 * a second notice of the same logout costs the RP nothing).
 *
 * Then the session's grants without `offline_access` end with it (as Keycloak ends a session's online tokens): a
 * refresh token that outlived a logout would let the app go on as the person after they signed out (or after the
 * admin ended the session, or after a replay showed it stolen). A grant with `offline_access` was asked for exactly
 * to act while the person is away, so it stays (its client is still told, and can drop it at `/oauth2/revoke`).
 *
 * Idempotent as the stream asks: a retried event finds the offline grants again (its clients are told twice at
 * worst: delivery is at least once) and the online ones gone. The messages go out before the grants are deleted, so a
 * failure between the two loses no notice.
 */

/** One logout token to deliver, as the LOGOUT_DELIVERIES queue carries it (dead-letters.ts recognizes `kind`). */
export interface LogoutDeliveryMessage extends LogoutNotice {
  kind: "backchannel-logout";
}

/** D1 binds at most 100 parameters a statement. */
const IDS_PER_QUERY = 90;

const chunks = <T>(items: T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));

/**
 * The ended session, and the clients its trigger saw holding a grant from it (`oauth2Clients`, migration 0024): a
 * password change or a disabled or deleted user ends those grants in the same request, before this event is read.
 */
function endedSession(event: StreamEvent): { sid: string; userId: string; clients: string[] } | null {
  if (event.type !== "session.revoked") return null;
  const session = event.data.session as
    | { id?: unknown; userId?: unknown; oauth2Clients?: unknown }
    | undefined;
  if (typeof session?.id !== "string" || typeof session.userId !== "string") return null;
  const clients = Array.isArray(session.oauth2Clients)
    ? session.oauth2Clients.filter((id): id is string => typeof id === "string")
    : [];
  return { sid: session.id, userId: session.userId, clients };
}

export function backchannelLogoutFanOut(deps: { shards: Shards; queue: Queue }): EventConsumer {
  return {
    name: "backchannel-logout",
    async consume(event) {
      const ended = endedSession(event);
      if (!ended) return;
      const db = deps.shards.ofUser(ended.userId);
      const grants = await db
        .select({ id: oauth2Grants.id, clientId: oauth2Grants.clientId, scopes: oauth2Grants.scopes })
        .from(oauth2Grants)
        .where(and(eq(oauth2Grants.sid, ended.sid), eq(oauth2Grants.userId, ended.userId)))
        .all();
      const holders = new Set([...ended.clients, ...grants.map((grant) => grant.clientId)]);
      if (holders.size === 0) return;
      const listening: string[] = [];
      for (const ids of chunks([...holders], IDS_PER_QUERY)) {
        const rows = await deps.shards.home
          .select({ clientId: oauth2Clients.clientId })
          .from(oauth2Clients)
          .where(and(inArray(oauth2Clients.clientId, ids), isNotNull(oauth2Clients.backchannelLogoutUri)))
          .all();
        listening.push(...rows.map((row) => row.clientId));
      }
      if (listening.length > 0) {
        // At most 100 messages a sendBatch; a session rarely has grants of more than a handful of clients.
        for (const part of chunks(listening, 100)) {
          await deps.queue.sendBatch(
            part.map((clientId) => ({
              body: {
                kind: "backchannel-logout",
                clientId,
                sid: ended.sid,
                userId: ended.userId,
              } satisfies LogoutDeliveryMessage,
              contentType: "json" as const,
            })),
          );
        }
      }
      const online = grants
        .filter((grant) => !grant.scopes.includes("offline_access"))
        .map((grant) => grant.id);
      for (const ids of chunks(online, IDS_PER_QUERY)) {
        await db.delete(oauth2Grants).where(inArray(oauth2Grants.id, ids));
      }
    },
  };
}
