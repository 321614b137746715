import type { Deps } from "../../http/deps";
import { sha256Hex } from "../../lib/crypto";
import { userLockout } from "./attempts";
import type { FactorLock, LockoutFactor } from "./sign-in-lockout";

/** The mailed ticket `<userId>.<64 hex>`: its user names the object, its secret is what the object holds hashed. */
const TICKET = /^([0-9a-f-]{36})\.([0-9a-f]{64})$/;

/**
 * Follows a mailed unlock link (docs/protection.md "Lockout"): the factor whose lock the link was sent for is
 * unlocked and its count forgotten, in the object's one synchronous call, so a link works once. Answers the user and
 * the factor, or null for a link that is malformed, unknown, used, or more than a day old.
 */
export async function unlockWithTicket(
  deps: Deps,
  ticket: string,
): Promise<{ userId: string; factor: LockoutFactor } | null> {
  const parsed = TICKET.exec(ticket);
  if (!parsed) return null;
  const [, userId, secret] = parsed as unknown as [string, string, string];
  const factor = await userLockout(deps, userId).redeem(await sha256Hex(secret), deps.now());
  if (!factor) return null;
  deps.audit({ type: "signin.unlocked", userId, detail: { factor } });
  return { userId, factor };
}

/** The user the ticket names, if it is shaped like one (the page speaks that user's language). */
export const userIdOfTicket = (ticket: string): string | null => TICKET.exec(ticket)?.[1] ?? null;

/** An admin's unlock: every factor of the user unlocked and forgotten. Answers the factors that were locked. */
export function unlockAccount(deps: Deps, userId: string): Promise<LockoutFactor[]> {
  return userLockout(deps, userId).clear(deps.now());
}

/** The user's locked factors and until when (the console's user page). */
export function lockedFactors(deps: Deps, userId: string): Promise<FactorLock[]> {
  return userLockout(deps, userId).locks(deps.now());
}
