import type { Deps } from "../../http/deps";
import { toHex } from "../../lib/hex";
import { hmacSubkey } from "../../lib/subkeys";

/**
 * The account's known devices for the lockout (docs/protection.md, "The owner's device is not locked out"): a device
 * cookie (`edge_auth_device`, 128 random bits, HttpOnly) this account was given or shown at a sign-in that started a
 * session. A later attempt presenting it is counted on that device's own state in the account's `SignInLockout`
 * object, so a stranger's ten guesses lock the account, not the owner's browser.
 *
 * Security state, kept where the count is (the object, one per account), never in the cookie:
 * - the object keeps only a keyed tag of the cookie, an HMAC over the account's object name and the cookie under the
 *   `sign-in-lockout` subkey of `AUTH_ENCRYPTION_KEY`: a cookie made up by a client is no tag of ours, and a cookie
 *   an account knows is a different tag for any other account, so it cannot be carried from one account to another;
 * - a device becomes known only when the account starts a session on it (any method but an anonymous sign-in or a
 *   personal access token: auth/devices/new-device-notice.ts), which already needs a way into the account;
 * - a password reset or change forgets every one of them (`forgetDevices`).
 */

/** The account's object (as attempts.ts names it). */
const objectOf = (deps: Deps, name: string) =>
  deps.env.SIGN_IN_LOCKOUTS.get(deps.env.SIGN_IN_LOCKOUTS.idFromName(name));

/** The tag of a device cookie for one account's object (`user:<id>`, or the keyed name of an unknown identifier). */
export async function deviceTag(deps: Deps, objectName: string, cookie: string): Promise<string> {
  const key = await hmacSubkey(deps.config.secrets.encryptionKey, "sign-in-lockout");
  const tag = await crypto.subtle.sign(
    "HMAC",
    key,
    new TextEncoder().encode(`device\0${objectName}\0${cookie}`),
  );
  return toHex(tag).slice(0, 32);
}

/** A session was started for `userId` on the device whose cookie is `cookie`: it is a known device from now on. */
export async function rememberDevice(deps: Deps, userId: string, cookie: string): Promise<void> {
  const name = `user:${userId}`;
  await objectOf(deps, name).rememberDevice(await deviceTag(deps, name, cookie), deps.now());
}

/** Every known device of the user forgotten (a password reset or change). Answers how many there were. */
export function forgetDevices(deps: Deps, userId: string): Promise<number> {
  return objectOf(deps, `user:${userId}`).forgetDevices();
}
