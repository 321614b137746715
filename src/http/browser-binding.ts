import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { base64url } from "jose";
import { sha256Hex } from "../lib/crypto";
import type { AppEnv } from "./app-env";

/**
 * Binds a flow that leaves through a browser and comes back (a provider sign-in, a magic link asked for on the
 * OAuth2 page) to the browser that started it. A random value lives in an HttpOnly cookie of that browser; the
 * flow stores its hash; the return leg is accepted only from a browser presenting the value. A URL of the flow opened
 * anywhere else (login CSRF: an attacker's half-finished flow completed in a victim's browser; RFC 9700 §4.7,
 * OAuth 2.0 Security BCP) completes nothing.
 *
 * SameSite=Lax: sent on top-level GET navigations from other sites (a provider's redirect back), never on their
 * POSTs or subrequests. Over https the name carries the `__Host-` prefix, so a sibling subdomain cannot plant a value
 * of its choosing (RFC 6265bis §4.1.3.2). One value per browser and purpose, reused while it lasts, so that two
 * flows in two tabs both complete.
 */
export type BindingPurpose = "provider-flow" | "oauth2-link" | "sso-flow";

const VALUE_SHAPE = /^[A-Za-z0-9_-]{43}$/;

function cookieOf(c: Context<AppEnv>, purpose: BindingPurpose) {
  const secure = new URL(c.var.config.urls.server).protocol === "https:";
  return { name: secure ? `__Host-${purpose}` : purpose, secure };
}

/** The hash of this browser's value for `purpose`, or null when it has none. */
export async function browserBinding(c: Context<AppEnv>, purpose: BindingPurpose): Promise<string | null> {
  const value = getCookie(c, cookieOf(c, purpose).name);
  return value && VALUE_SHAPE.test(value) ? sha256Hex(value) : null;
}

/** Gives this browser a value for `purpose` (or keeps the one it has) for `lifetimeSeconds`; returns its hash. */
export async function bindBrowser(
  c: Context<AppEnv>,
  purpose: BindingPurpose,
  lifetimeSeconds: number,
): Promise<string> {
  const { name, secure } = cookieOf(c, purpose);
  const present = getCookie(c, name);
  const value =
    present && VALUE_SHAPE.test(present)
      ? present
      : base64url.encode(crypto.getRandomValues(new Uint8Array(32)));
  setCookie(c, name, value, { path: "/", httpOnly: true, secure, sameSite: "Lax", maxAge: lifetimeSeconds });
  return sha256Hex(value);
}
