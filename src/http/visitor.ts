/**
 * What a request has shown about its sender, kept on it (`Deps.visitor`) for its whole length: one solved Turnstile
 * challenge serves the request (tokens are single use), and it counts once in the sign-up limit (sign-up-gate.ts).
 */

import type { UserRow } from "../db/schema";
import { deviceCookieIn } from "./device-cookie-name";

/** The header Nhost's clients send the Turnstile widget's token in (contract §9). */
export const TURNSTILE_HEADER = "x-cf-turnstile-response";

/** What a request has shown about its sender, kept for the length of the request. */
export interface Visitor {
  /** The Turnstile token the request carries (`x-cf-turnstile-response`), if any. */
  readonly turnstileToken: string | null;
  /** The client address (`cf-connecting-ip`). */
  readonly address: string | null;
  /** Where that address is, roughly: "city, region, country" from `request.cf` (null without it: tests, some dev). */
  readonly place: string | null;
  /** The device cookie it carries (`edge_auth_device`, of our shape), or null: the lockout's known devices. */
  readonly deviceCookie: string | null;
  /** A Turnstile challenge was passed in this request. */
  passedChallenge: boolean;
  /** The request was counted in the `SIGNUPS` bucket. */
  countedSignUp: boolean;
  /** The user a session was started for in this request (`createSession`): the new-device notice reads it. */
  signedIn: UserRow | null;
}

export function visitorOf(headers: { get(name: string): string | null }, cf?: object): Visitor {
  return {
    turnstileToken: headers.get(TURNSTILE_HEADER)?.trim() || null,
    address: headers.get("cf-connecting-ip"),
    place: placeOf(cf),
    deviceCookie: deviceCookieIn(headers.get("cookie")),
    passedChallenge: false,
    countedSignUp: false,
    signedIn: null,
  };
}

/**
 * A readable rough place from Cloudflare's geolocation of the address (`request.cf`, set by Cloudflare, not by the
 * client): the parts it knows, most precise first, without repeats ("Berlin, Land Berlin, DE"). Null when it knows
 * none.
 */
export function placeOf(cf?: object): string | null {
  const { city, region, country } = (cf ?? {}) as Record<string, unknown>;
  const parts = [city, region, country]
    .filter((part): part is string => typeof part === "string" && part.trim() !== "")
    .map((part) => part.trim());
  const place = [...new Set(parts)].join(", ");
  return place ? place.slice(0, 200) : null;
}
