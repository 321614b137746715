import type { Config } from "../config";
import type { Db } from "../db/client";
import type { HookDeps } from "../hooks/call";
import type { SmsSender } from "./sender";
import { devSmsSender } from "./transports/dev-sms";
import { hookSmsSender } from "./transports/hook";
import { twilioSender } from "./transports/twilio";

/** Configuration only allows SMS sign-in with one of these (config.ts); a missing one cannot send at all. */
const noTransport: SmsSender = {
  send: () => Promise.reject(new Error("no SMS transport is configured")),
};

/**
 * The app's `SEND_SMS` hook replaces every transport (contract move-in §5.3); then the development store wins over
 * the provider, as with mail, so local runs never send real messages.
 */
export function createSmsSender(
  config: Config,
  db: Db,
  outbound: typeof fetch,
  audit: HookDeps["audit"],
): SmsSender {
  if (config.hooks.SEND_SMS) return hookSmsSender({ config, outbound, audit });
  if (config.devTransports.sms) return devSmsSender(db);
  if (config.sms.provider === "twilio") return twilioSender(config, outbound);
  return noTransport;
}
