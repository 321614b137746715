import type { Context } from "hono";
import { setCookie } from "hono/cookie";
import { base64url } from "jose";
import type { AppEnv } from "../../http/app-env";
import { DEVICE_COOKIE, deviceCookieIn } from "../../http/device-cookie-name";

/*
 * The device cookie: a random name for this browser, so a sign-in from it again is not "a new device" (contract
 * §13), and a sign-in from a browser the account signed in on before is not locked out by a stranger's guesses (it
 * is counted apart: auth/lockout/known-devices.ts). It opens nothing by itself. First party, HttpOnly (no script
 * reads it), SameSite=Lax (sent on the top-level redirects a provider or a mailed link makes), scoped to the auth
 * API's path, Secure on https. Its name and shape: http/device-cookie-name.ts.
 */

/** 400 days: the longest a browser keeps a cookie (RFC 6265bis §5.5); each sign-in starts it again. */
const MAX_AGE_SECONDS = 400 * 86_400;

/** The device cookie the request carries, or null when it has none or one we did not make. */
export function readDeviceCookie(c: Context<AppEnv>): string | null {
  return deviceCookieIn(c.req.header("cookie"));
}

export function newDeviceCookie(): string {
  return base64url.encode(crypto.getRandomValues(new Uint8Array(16)));
}

/** (Re)sets the cookie on the answer, so a browser that keeps signing in keeps its name. */
export function writeDeviceCookie(c: Context<AppEnv>, value: string): void {
  const server = new URL(c.var.config.urls.server);
  setCookie(c, DEVICE_COOKIE, value, {
    path: server.pathname.replace(/\/$/, "") || "/",
    httpOnly: true,
    secure: server.protocol === "https:",
    sameSite: "Lax",
    maxAge: MAX_AGE_SECONDS,
  });
}
