import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { base64url } from "jose";
import type { AppEnv } from "../../http/app-env";

/**
 * The device cookie: a random name for this browser, so a sign-in from it again is not "a new device" (contract
 * §13). It authenticates nothing: it only keeps the notice quiet, and a stranger who had it would already have the
 * browser. First party, HttpOnly (no script reads it), SameSite=Lax (sent on the top-level redirects a provider or
 * a mailed link makes), scoped to the auth API's path, Secure on https.
 */
const COOKIE = "edge_auth_device";

/** 400 days: the longest a browser keeps a cookie (RFC 6265bis §5.5); each sign-in starts it again. */
const MAX_AGE_SECONDS = 400 * 86_400;

/** 16 random bytes (128 bits), base64url: what we set, and the only shape we read back. */
const SHAPE = /^[A-Za-z0-9_-]{22}$/;

/** The device cookie the request carries, or null when it has none or one we did not make. */
export function readDeviceCookie(c: Context<AppEnv>): string | null {
  const value = getCookie(c, COOKIE);
  return value && SHAPE.test(value) ? value : null;
}

export function newDeviceCookie(): string {
  return base64url.encode(crypto.getRandomValues(new Uint8Array(16)));
}

/** (Re)sets the cookie on the answer, so a browser that keeps signing in keeps its name. */
export function writeDeviceCookie(c: Context<AppEnv>, value: string): void {
  const server = new URL(c.var.config.AUTH_SERVER_URL);
  setCookie(c, COOKIE, value, {
    path: server.pathname.replace(/\/$/, "") || "/",
    httpOnly: true,
    secure: server.protocol === "https:",
    sameSite: "Lax",
    maxAge: MAX_AGE_SECONDS,
  });
}
