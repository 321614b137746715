import { eq } from "drizzle-orm";
import type { Config } from "../../config";
import type { Db } from "../../db/client";
import { type DeviceAuthorizationRow, oauth2Clients } from "../../db/schema";
import type { Deps } from "../../http/deps";
import { decrypt } from "../../lib/crypto";
import { OutboundFetchError, OutboundUrlRefused, postOutbound } from "../../lib/outbound-fetch";
import { outboundPolicy } from "../../lib/outbound-url";

/**
 * CIBA ping mode (OpenID CIBA Core 1.0 §10.2): once the user decided, the client is told at its
 * `backchannelClientNotificationEndpoint` with `Authorization: Bearer <client_notification_token>` and
 * `{"auth_req_id": …}`; it then polls the token endpoint once for the outcome. The ping goes through the OAuth2
 * server's delivery queue (LOGOUT_DELIVERIES, beside back-channel logout tokens: the same retries with the webhooks'
 * growing delay, the same dead letters), as a message carrying only the sealed `auth_req_id` and token. The endpoint is
 * read, and checked against the outbound-URL policy, at each attempt: what counts is the URL when the post goes out.
 */

export interface PingMessage {
  kind: "ciba-ping";
  clientId: string;
  /** `{authReqId, token}`, AES-GCM sealed (as stored in the request's row). */
  sealed: string;
}

export const isPingMessage = (body: unknown): body is PingMessage => {
  const fields = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
  return (
    fields.kind === "ciba-ping" && typeof fields.clientId === "string" && typeof fields.sealed === "string"
  );
};

export interface PingDeps {
  db: Db;
  config: Config;
  outbound: typeof fetch;
}

const PING_TIMEOUT_MS = 10_000;

const log = (level: "error" | "warn", what: string, detail: Record<string, unknown>) =>
  (level === "error" ? console.error : console.warn)(JSON.stringify({ level, what, ...detail }));

/** One attempt: `done` (delivered, or never deliverable), or `retry`. D1 or the key failing throws (a retry too). */
export async function deliverPing(deps: PingDeps, message: PingMessage): Promise<"done" | "retry"> {
  const client = await deps.db
    .select({ uri: oauth2Clients.backchannelClientNotificationEndpoint })
    .from(oauth2Clients)
    .where(eq(oauth2Clients.clientId, message.clientId))
    .get();
  // The client was deleted, or no longer takes pings: nobody to tell (a poll still answers).
  if (!client?.uri) return "done";
  const { authReqId, token } = JSON.parse(
    await decrypt(deps.config.secrets.encryptionKey, message.sealed),
  ) as {
    authReqId: string;
    token: string;
  };
  try {
    const answer = await postOutbound(deps.outbound, client.uri, outboundPolicy(deps.config), {
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ auth_req_id: authReqId }),
      timeoutMs: PING_TIMEOUT_MS,
      keepBytes: 256,
    });
    // §10.2: the client answers 204 (any 2xx will do).
    if (answer.status >= 200 && answer.status < 300) return "done";
    log("warn", "CIBA ping refused", { client: message.clientId, status: answer.status });
    return "retry";
  } catch (error) {
    if (error instanceof OutboundUrlRefused) {
      log("error", "CIBA notification endpoint refused by the outbound-URL policy", {
        client: message.clientId,
        reason: error.reason,
      });
      return "done";
    }
    if (error instanceof OutboundFetchError) {
      log("warn", "CIBA ping not delivered", { client: message.clientId, reason: error.reason });
      return "retry";
    }
    throw error;
  }
}

/**
 * After a decision: a ping-mode request's client is to be told. Queued where the delivery queue is bound; else
 * posted once after the answer (a deployment without queues has no retries for anything).
 */
export async function pingClient(deps: Deps, row: DeviceAuthorizationRow): Promise<void> {
  if (row.kind !== "ciba" || !row.pingSealed) return;
  const message: PingMessage = { kind: "ciba-ping", clientId: row.clientId, sealed: row.pingSealed };
  const queue = deps.env.LOGOUT_DELIVERIES;
  if (queue) {
    await queue.send(message);
    return;
  }
  deps.background(
    deliverPing(deps, message).then(
      () => undefined,
      (error) => log("error", "CIBA ping failed", { client: row.clientId, detail: String(error) }),
    ),
  );
}

/** The pings among a batch of the delivery queue: each acknowledged when done, else retried with the growing delay. */
export async function deliverPings(
  messages: readonly Message<unknown>[],
  deps: PingDeps,
  retryDelay: (attempts: number) => number,
): Promise<void> {
  for (const message of messages) {
    if (!isPingMessage(message.body)) continue;
    try {
      if ((await deliverPing(deps, message.body)) === "done") message.ack();
      else message.retry({ delaySeconds: retryDelay(message.attempts) });
    } catch (error) {
      log("error", "CIBA ping failed", { client: message.body.clientId, detail: String(error) });
      message.retry({ delaySeconds: retryDelay(message.attempts) });
    }
  }
}
