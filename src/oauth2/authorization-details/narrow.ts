import { type AuthorizationDetail, authorizationDetailsError } from "./parse";

/**
 * RFC 9396 §6 and §6.1 (a token request, a refresh too): a client may ask for the same authorization details it
 * was granted or fewer, never more. Types define their own meaning, which this server does not know, so "fewer" is the part that
 * holds whatever the type: a requested detail is covered by a granted one of the same type when it has exactly the
 * same members and each value is the same, but an array may keep only some of its elements (fewer `actions`, fewer
 * `locations`). A member left out is not taken as narrower (for many types an absent limit means none), nor is a
 * smaller number (it could be a minimum). See docs/decisions.md, "Issue 46: rich authorization requests".
 */

function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const aKeys = Object.keys(a);
  const bKeys = Object.keys(b);
  if (aKeys.length !== bKeys.length) return false;
  return aKeys.every(
    (key) =>
      Object.hasOwn(b, key) && same((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]),
  );
}

function covers(granted: unknown, requested: unknown): boolean {
  if (Array.isArray(granted) && Array.isArray(requested))
    return requested.length > 0 && requested.every((item) => granted.some((held) => covers(held, item)));
  if (
    granted === null ||
    requested === null ||
    typeof granted !== "object" ||
    typeof requested !== "object" ||
    Array.isArray(granted) ||
    Array.isArray(requested)
  )
    return same(granted, requested);
  const grantedKeys = Object.keys(granted);
  if (grantedKeys.length !== Object.keys(requested).length) return false;
  return grantedKeys.every(
    (key) =>
      Object.hasOwn(requested, key) &&
      covers((granted as Record<string, unknown>)[key], (requested as Record<string, unknown>)[key]),
  );
}

/** Whether every requested detail is covered by some granted one. */
export function isNarrowerOrSame(granted: AuthorizationDetail[], requested: AuthorizationDetail[]): boolean {
  return requested.every((detail) => granted.some((held) => covers(held, detail)));
}

/**
 * The details a token request may get: what was granted when it asks for none, what it asks for when that is
 * covered, else `invalid_authorization_details` (RFC 9396 §6.1). A grant without details grants none: any asked
 * for are refused.
 */
export function narrowAuthorizationDetails(
  granted: AuthorizationDetail[] | null | undefined,
  requested: AuthorizationDetail[] | undefined,
): AuthorizationDetail[] | undefined {
  const held = granted && granted.length > 0 ? granted : undefined;
  if (!requested) return held;
  if (!held || !isNarrowerOrSame(held, requested))
    throw authorizationDetailsError("authorization_details asks for more than was granted");
  return requested;
}
