import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { base64url } from "jose";
import type { AppEnv } from "../../app-env";
import { sha256Hex, timingSafeEqualString } from "../../lib/crypto";
import { hmacSubkey } from "../../lib/subkeys";

/**
 * Who may use the admin console in this browser tab. Signing in with the admin secret sets a cookie holding an expiry
 * and a MAC over it and over a hash of the admin secret (a subkey of `AUTH_ENCRYPTION_KEY`): the secret itself is
 * never stored in the browser or put in a URL, and changing `AUTH_ADMIN_SECRET` ends every console session. The
 * cookie is HttpOnly, Secure, SameSite=Strict, scoped to the console's path, and has no Max-Age (it ends with the
 * browser session); the server also refuses it after eight hours.
 */
const COOKIE = "admin_console";
const LIFETIME_MS = 8 * 3600 * 1000;

type Ctx = Context<AppEnv>;

async function mac(c: Ctx, payload: string): Promise<string> {
  const key = await hmacSubkey(c.var.config.AUTH_ENCRYPTION_KEY!, "admin-console");
  const secretHash = await sha256Hex(c.var.config.AUTH_ADMIN_SECRET ?? "");
  const signed = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${payload}|${secretHash}`));
  return base64url.encode(new Uint8Array(signed));
}

export function consolePath(c: Ctx): string {
  return `${c.var.config.AUTH_API_PREFIX.replace(/\/$/, "")}/admin/console`;
}

export async function startConsoleSession(c: Ctx): Promise<void> {
  const expires = String(c.var.deps.now() + LIFETIME_MS);
  setCookie(c, COOKIE, `${expires}.${await mac(c, expires)}`, {
    path: consolePath(c),
    httpOnly: true,
    secure: true,
    sameSite: "Strict",
  });
}

export function endConsoleSession(c: Ctx): void {
  deleteCookie(c, COOKIE, { path: consolePath(c), secure: true });
}

/** The cookie's value when it is ours, unexpired and made under the current admin secret; else null. */
export async function consoleSession(c: Ctx): Promise<string | null> {
  const value = getCookie(c, COOKIE);
  const [expires, given] = value?.split(".") ?? [];
  if (!expires || !given || !(Number(expires) > c.var.deps.now())) return null;
  return timingSafeEqualString(given, await mac(c, expires)) ? value! : null;
}

/** The token every console form carries, bound to the session: a form built for another session is refused. */
export const csrfToken = (c: Ctx, session: string) => mac(c, `csrf.${session}`);

/**
 * A console form post must come from the console's own origin (browsers name it in `Origin`) and carry the session's
 * token: SameSite=Strict already keeps the cookie off cross-site posts; these two close what remains.
 */
export async function isGenuinePost(c: Ctx, session: string, token: string | undefined): Promise<boolean> {
  if (c.req.header("origin") !== new URL(c.req.url).origin) return false;
  return token !== undefined && timingSafeEqualString(token, await csrfToken(c, session));
}
