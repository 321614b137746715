import type { Deps } from "../http/deps";
import { codeHash, generateCode } from "../lib/short-codes";

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

/**
 * Puts back a code this request redeemed, when what followed failed for a fault (`onFaultPutBack`): the client's
 * retry with the same code then works. Best effort, and only while no newer code was sent (the object's `restore`).
 */
export async function restoreOneTimeCode(deps: Deps, scope: string, code: string): Promise<void> {
  await challenge(deps, scope).restore(
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
