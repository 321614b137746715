/**
 * What a request has shown about its sender, kept on it (`Deps.visitor`) for its whole length: one solved Turnstile
 * challenge serves the request (tokens are single use), and it counts once in the sign-up limit (sign-up-gate.ts).
 */

import { type CfSignals, cfSignalsOf } from "./cf-signals";
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
  /** What `request.cf` says of the sender (country, network, coordinates, bot score); null as `place` is. */
  readonly signals: CfSignals | null;
  /** The device cookie it carries (`edge_auth_device`, of our shape), or null: the lockout's known devices. */
  readonly deviceCookie: string | null;
  /** A Turnstile challenge was passed in this request. */
  passedChallenge: boolean;
  /** The request was counted in the `SIGNUPS` bucket. */
  countedSignUp: boolean;
  /**
   * The risk level a sign-in gate gave this request's sign-in (src/auth/sign-in/hooks.ts `SessionGate`), for what
   * follows the session (the new-device mail); null when none assessed it.
   */
  riskLevel: string | null;
}

/**
 * `readCf` reads `request.cf`. workerd builds `request.cf` anew on each read (from its JSON), which was the largest
 * cost of a session check's own code (docs/performance.md, "Issue 48: per-request overhead"): a request reads it only
 * when something asks for its place (a new session, a new-device mail), once. Whatever else derives from `cf` should
 * read it the same way, lazily.
 */
export function visitorOf(
  headers: { get(name: string): string | null },
  readCf?: () => object | undefined,
): Visitor {
  const address = headers.get("cf-connecting-ip");
  // Read once, when something first asks for the place or the signals (a new session, a risk gate, a mail).
  let read: { cf: object | undefined } | null = null;
  const cfOnce = () => {
    read ??= { cf: isNonPublicAddress(address) ? undefined : readCf?.() };
    return read.cf;
  };
  let place: string | null | undefined;
  let signals: CfSignals | null | undefined;
  return {
    turnstileToken: headers.get(TURNSTILE_HEADER)?.trim() || null,
    address,
    get place() {
      if (place === undefined) place = isNonPublicAddress(address) ? null : placeOf(cfOnce());
      return place;
    },
    // The same placeholder `request.cf` as the place's: a loopback address has no country, network or coordinates.
    get signals() {
      if (signals === undefined) signals = isNonPublicAddress(address) ? null : cfSignalsOf(cfOnce());
      return signals;
    },
    deviceCookie: deviceCookieIn(headers.get("cookie")),
    passedChallenge: false,
    countedSignUp: false,
    riskLevel: null,
  };
}

/**
 * Whether the address is one no geolocation can place: loopback, private (RFC 1918, RFC 4193), link-local, in either
 * spelling (IPv4-mapped IPv6 too). `wrangler dev` hands the Worker the browser's loopback address with a `request.cf`
 * that is the same for every request: miniflare's placeholder (Austin, Texas) or the developer's own machine, fetched
 * once. A place shown beside such an address would be made up, so a session from one has none (docs/protection.md).
 */
export function isNonPublicAddress(address: string | null): boolean {
  if (!address) return false;
  const ip = address
    .trim()
    .toLowerCase()
    .replace(/^::ffff:(?=\d+\.)/, "");
  const v4 = /^(\d+)\.(\d+)\.\d+\.\d+$/.exec(ip);
  if (v4) {
    const [a, b] = [Number(v4[1]), Number(v4[2])];
    return (
      a === 127 ||
      a === 10 ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 169 && b === 254)
    );
  }
  return ip === "::1" || /^f[cd][0-9a-f]{0,2}:/.test(ip) || /^fe[89ab][0-9a-f]?:/.test(ip);
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
