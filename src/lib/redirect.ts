import { base64url } from "jose";
import type { Config } from "../config";
import { timingSafeEqualString } from "./crypto";
import { hmacSubkey } from "./subkeys";

/**
 * The redirect allow-list of contract §8: `AUTH_CLIENT_URL` plus `AUTH_ACCESS_CONTROL_ALLOWED_REDIRECT_URLS`.
 * An entry allows itself and its sub-paths; `*` in the host matches exactly one DNS label; default ports are
 * normalised by the URL parser; custom app schemes are allowed. Open redirects are the failure this prevents
 * (OWASP Unvalidated Redirects and Forwards), so anything that does not parse cleanly is refused.
 */

const REFUSED_SCHEMES = new Set(["javascript:", "data:", "vbscript:", "file:", "blob:"]);

function parse(value: string): URL | null {
  // Scheme-relative ("//evil.example") and backslash tricks are refused before parsing.
  if (!/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(value) || value.includes("\\")) return null;
  try {
    const url = new URL(value);
    if (REFUSED_SCHEMES.has(url.protocol) || url.username || url.password) return null;
    return url;
  } catch {
    return null;
  }
}

function hostMatches(pattern: string, host: string): boolean {
  const want = pattern.split(".");
  const have = host.split(".");
  return want.length === have.length && want.every((label, i) => label === "*" || label === have[i]);
}

function pathMatches(pattern: string, path: string): boolean {
  if (pattern === "/" || pattern === "" || path === pattern) return true;
  const base = pattern.endsWith("/") ? pattern : `${pattern}/`;
  return path.startsWith(base);
}

export function matchesAllowedUrl(candidate: string, allowed: string): boolean {
  const url = parse(candidate);
  const rule = parse(allowed);
  if (!url || !rule) return false;
  return (
    url.protocol === rule.protocol &&
    hostMatches(rule.hostname, url.hostname) &&
    url.port === rule.port &&
    pathMatches(rule.pathname, url.pathname)
  );
}

export function isRedirectAllowed(candidate: string, clientUrl: string, allowed: readonly string[]): boolean {
  return [clientUrl, ...allowed].some((rule) => matchesAllowedUrl(candidate, rule));
}

/** The built-in OAuth2 login page's path under the auth API (src/pages/). */
export const LOGIN_PAGE_PATH = "/oauth2/interaction";

/** Where the person enters a device's user code (RFC 8628 `verification_uri`), under the issuer. */
export const DEVICE_PAGE_PATH = "/oauth2/device";

/** The deployment's allow-list. The service's own pages are not on it: see `signOwnRedirect`. */
export function isRedirectAllowedBy(config: Config, candidate: string): boolean {
  const allowed = config.urls.allowedRedirects;
  return isRedirectAllowed(
    candidate,
    config.urls.client,
    // The development landing page, when it is the default target (config.ts), is a target like the client's.
    config.urls.defaultRedirect === config.urls.client ? allowed : [...allowed, config.urls.defaultRedirect],
  );
}

/**
 * A redirect target under `AUTH_SERVER_URL` that the service itself minted (the OAuth2 page asking for a magic link
 * that comes back to it) carries `own_mac`, an HMAC of the rest of the URL: a follow-up (`/verify`) admits it without
 * the allow-list, and nobody else can mint one. Putting the page on the allow-list instead let anyone aim a magic
 * link of their own account at the page through the API.
 */
const OWN_MAC = "own_mac";

async function ownMac(config: Config, unsigned: string): Promise<string> {
  const key = await hmacSubkey(config.secrets.encryptionKey, "own-redirects");
  const tag = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(unsigned));
  return base64url.encode(new Uint8Array(tag));
}

/** `url` with exactly the parameters `entries`, serialised one way, so that signing and checking agree. */
function canonical(url: URL, entries: [string, string][]): string {
  const copy = new URL(url);
  copy.search = new URLSearchParams(entries).toString();
  copy.hash = "";
  return copy.toString();
}

export async function signOwnRedirect(config: Config, target: string): Promise<string> {
  const url = new URL(target);
  const unsigned = canonical(url, [...url.searchParams]);
  return withQuery(unsigned, { [OWN_MAC]: await ownMac(config, unsigned) });
}

/**
 * Whether `candidate` is a target `signOwnRedirect` minted. Parameters appended after it (what `/verify` adds) are
 * ignored: the MAC covers everything up to and including `own_mac`'s position.
 */
export async function isOwnSignedRedirect(config: Config, candidate: string): Promise<boolean> {
  if (!candidate.startsWith(config.urls.auth("/"))) return false;
  const url = parse(candidate);
  if (!url) return false;
  const entries = [...url.searchParams];
  const at = entries.findIndex(([name]) => name === OWN_MAC);
  if (at < 0) return false;
  const expected = await ownMac(config, canonical(url, entries.slice(0, at)));
  return timingSafeEqualString(entries[at]![1], expected);
}

/** Adds query parameters to a redirect target, keeping its own query and fragment. */
export function withQuery(target: string, params: Record<string, string>): string {
  const url = new URL(target);
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  return url.toString();
}
