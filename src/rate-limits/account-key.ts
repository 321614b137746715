import { toE164 } from "../lib/phone";

/**
 * One account, one key: the identifier as the service stores it (emails lower-cased, phone numbers in E.164), so that
 * writing it differently does not buy a fresh window. `field` says how it is written: GoTrue's `phone` is a number
 * without its `+` (the Supabase face adds it); Nhost's `phoneNumber` and a stored number carry it; anything else is an
 * address. The key of a `RateLimiter` object's count for the account, whoever counts it (a route's limit, a flow's
 * own count of a mail or text it is about to send).
 */
export function accountKey(field: string, value: string): string {
  return `id:${identifierKey(field, value)}`;
}

function identifierKey(field: string, value: string): string {
  if (field === "phone")
    return identifierKey("phoneNumber", value.trim().startsWith("+") ? value : `+${value.trim()}`);
  if (field === "phoneNumber") return toE164(value) ?? value;
  return value.toLowerCase();
}
