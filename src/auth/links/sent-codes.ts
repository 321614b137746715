import type { Deps } from "../../http/deps";
import { codeHash, generateCode } from "../../lib/short-codes";
import { TICKET_TYPES, type TicketType } from "./tickets";

/**
 * Six-digit codes sent to a person (email OTP, SMS): one `OneTimeCode` Durable Object per scope
 * (`email-otp:<address>`, `sms-otp:<number>`) holds the newest code as an HMAC and counts wrong tries atomically.
 */
function challenge(deps: Deps, scope: string) {
  return deps.env.ONE_TIME_CODES.get(deps.env.ONE_TIME_CODES.idFromName(scope));
}

/** A new code for `scope`, replacing the previous one; the caller sends it. */
export async function issueOneTimeCode(
  deps: Deps,
  scope: string,
  lifetimeMs: number,
  /** What the code is for, answered by `redeemOneTimeCode` (never a secret: the object's storage is no vault). */
  tag?: string,
): Promise<string> {
  const code = generateCode();
  await challenge(deps, scope).issue(
    await codeHash(deps.config.secrets.encryptionKey, "one-time-codes", scope, code),
    deps.now() + lifetimeMs,
    tag,
  );
  return code;
}

/** The right code's tag, once; null for wrong, expired, used and exhausted codes. */
export async function redeemOneTimeCode(deps: Deps, scope: string, code: string): Promise<string | null> {
  return challenge(deps, scope).redeem(
    await codeHash(deps.config.secrets.encryptionKey, "one-time-codes", scope, code),
    deps.now(),
  );
}

/** True once for the right code; wrong, expired, used and exhausted codes are all false. */
export async function checkOneTimeCode(deps: Deps, scope: string, code: string): Promise<boolean> {
  const outcome = await challenge(deps, scope).verify(
    await codeHash(deps.config.secrets.encryptionKey, "one-time-codes", scope, code),
    deps.now(),
  );
  return outcome === "ok";
}

const HOUR = 3600 * 1000;

/** The code object of a link's mail that carries a code too (mailed-codes.ts): one per address mailed to. */
export const mailedCodeScope = (address: string) => `mailed-code:${address.toLowerCase()}`;

/** A code for the ticket just issued to `userId`, tagged with it, replacing the previous code mailed to `to`. */
export async function issueMailedCode(
  deps: Deps,
  to: string,
  type: TicketType,
  userId: string,
): Promise<string> {
  // No longer than GoTrue's codes live (an hour): the 30-day sign-up link need not bring a 30-day code.
  const lifetime = Math.min(TICKET_TYPES[type].lifetimeMs, HOUR);
  return issueOneTimeCode(deps, mailedCodeScope(to), lifetime, `${type}:${userId}`);
}
