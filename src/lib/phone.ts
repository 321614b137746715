import { parsePhoneNumberFromString } from "libphonenumber-js/min";

/**
 * A phone number in E.164 (`+14155550123`), the one form stored and sent to providers, or null when it is not a
 * valid number. Numbers are taken in international form only (with `+` and the country code): without a country
 * the national forms are ambiguous.
 */
export function toE164(input: string): string | null {
  const parsed = parsePhoneNumberFromString(input.trim());
  return parsed?.isValid() ? parsed.number : null;
}
