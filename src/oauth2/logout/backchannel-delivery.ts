import { eq } from "drizzle-orm";
import type { Config } from "../../config";
import type { Db } from "../../db/client";
import { oauth2Clients } from "../../db/schema";
import { retryDelaySeconds } from "../../events/retry";
import { OutboundFetchError, OutboundUrlRefused, postOutbound } from "../../lib/outbound-fetch";
import { outboundPolicy } from "../../lib/outbound-url";
import type { LogoutDeliveryMessage } from "./backchannel-fan-out";
import { signLogoutToken } from "./logout-token";

/**
 * The LOGOUT_DELIVERIES queue's consumer (Back-Channel Logout 1.0 §2.5): each message is one client to tell that a
 * session ended. Each attempt signs a fresh logout token (its `exp` is short) and POSTs it as
 * `application/x-www-form-urlencoded` `logout_token=…` to the client's `backchannelLogoutUri`, under the outbound-URL
 * policy (contract §1: the URI is the client's say-so, checked again now: what counts is the URL when the post goes
 * out). A 2xx answer is done (§2.8: 200, and 204 from frameworks that send it); anything else, or no answer within
 * 10 s, is retried with the webhooks' growing delay (src/events/retry.ts) until the queue's retries run out and the
 * message becomes a dead letter (wrangler.toml). A URI the policy refuses is never posted to: no retry can change
 * that, so the message ends there, logged.
 */

export interface LogoutDeliveryDeps {
  /** The home database: clients live there. */
  db: Db;
  config: Config;
  outbound: typeof fetch;
  now: () => number;
  /** Tests shorten the 10 s bound. */
  timeoutMs?: number;
}

export const LOGOUT_DELIVERY_TIMEOUT_MS = 10_000;
/** Deliveries of one batch in flight at once: a Worker has six simultaneous outgoing connections. */
const CONCURRENCY = 6;

type Outcome = "done" | "retry";

function isMessage(body: unknown): body is LogoutDeliveryMessage {
  const fields = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
  return (
    fields.kind === "backchannel-logout" &&
    typeof fields.clientId === "string" &&
    typeof fields.userId === "string" &&
    typeof fields.sid === "string"
  );
}

const log = (level: "error" | "warn", what: string, detail: Record<string, unknown>) =>
  (level === "error" ? console.error : console.warn)(JSON.stringify({ level, what, ...detail }));

async function attempt(deps: LogoutDeliveryDeps, message: LogoutDeliveryMessage): Promise<Outcome> {
  const client = await deps.db
    .select({ uri: oauth2Clients.backchannelLogoutUri })
    .from(oauth2Clients)
    .where(eq(oauth2Clients.clientId, message.clientId))
    .get();
  // The client was deleted, or no longer listens: nobody to tell.
  if (!client?.uri) return "done";
  const token = await signLogoutToken(deps.config, message, deps.now());
  try {
    const answer = await postOutbound(deps.outbound, client.uri, outboundPolicy(deps.config), {
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ logout_token: token }).toString(),
      timeoutMs: deps.timeoutMs ?? LOGOUT_DELIVERY_TIMEOUT_MS,
      keepBytes: 256,
    });
    if (answer.status >= 200 && answer.status < 300) return "done";
    log("warn", "back-channel logout refused", { client: message.clientId, status: answer.status });
    return "retry";
  } catch (error) {
    if (error instanceof OutboundUrlRefused) {
      log("error", "back-channel logout URI refused by the outbound-URL policy", {
        client: message.clientId,
        reason: error.reason,
      });
      return "done";
    }
    if (error instanceof OutboundFetchError) {
      log("warn", "back-channel logout not delivered", { client: message.clientId, reason: error.reason });
      return "retry";
    }
    throw error;
  }
}

export async function deliverLogoutTokens(
  batch: MessageBatch<unknown>,
  deps: LogoutDeliveryDeps,
): Promise<void> {
  const queue = [...batch.messages];
  const lane = async () => {
    for (let message = queue.shift(); message; message = queue.shift()) {
      const retry = () =>
        message!.retry({
          delaySeconds: retryDelaySeconds(message!.attempts, deps.config.events.retryDelaySeconds),
        });
      if (!isMessage(message.body)) {
        // Not a message this code sends: there is nothing to deliver, and no retry would change that.
        log("error", "back-channel logout: malformed message", { id: message.id });
        message.ack();
        continue;
      }
      try {
        if ((await attempt(deps, message.body)) === "done") message.ack();
        else retry();
      } catch (error) {
        // D1 or the signing key failed us, not the receiver: the message comes again.
        log("error", "back-channel logout failed", { client: message.body.clientId, detail: String(error) });
        retry();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, queue.length) }, lane));
}
