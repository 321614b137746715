import { and, eq, gt } from "drizzle-orm";
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { base64url } from "jose";
import { sessions, type UserRow, users } from "../db/schema";
import type { AppEnv } from "../http/app-env";
import type { Deps } from "../http/deps";
import { timingSafeEqualString } from "../lib/crypto";
import { hmacSubkey } from "../lib/subkeys";
import type { SignIn } from "./tokens";

/**
 * Who is signed in to the built-in login page, in this browser. The cookie holds a session id, the user and the
 * time of the sign-in, MACed with a subkey of `AUTH_ENCRYPTION_KEY`; it is HttpOnly, SameSite=Lax and scoped to
 * `/oauth2`. It is only as good as the session row it names: sign-out everywhere, a password change or disabling the
 * user ends it like any other session.
 */
const COOKIE = "oauth2_session";

export interface BrowserSession {
  user: UserRow;
  sessionId: string;
  /** When the user signed in, ms (the ID token's `auth_time`). */
  authTime: number;
}

interface CookieClaims {
  sid: string;
  sub: string;
  at: number;
}

async function mac(deps: Deps, payload: string): Promise<string> {
  const key = await hmacSubkey(deps.config.AUTH_ENCRYPTION_KEY!, "oauth2-browser-session");
  return base64url.encode(
    new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(payload))),
  );
}

function cookieOptions(deps: Deps) {
  const server = new URL(deps.config.AUTH_SERVER_URL);
  return {
    path: `${server.pathname.replace(/\/$/, "")}/oauth2`,
    httpOnly: true,
    secure: server.protocol === "https:",
    sameSite: "Lax" as const,
  };
}

/** Signs the user in to the page: the cookie names the session the sign-in just created. */
export async function startBrowserSession(
  c: Context<AppEnv>,
  userId: string,
  sessionId: string,
): Promise<void> {
  const deps = c.var.deps;
  const claims: CookieClaims = { sid: sessionId, sub: userId, at: deps.now() };
  const payload = base64url.encode(JSON.stringify(claims));
  setCookie(c, COOKIE, `${payload}.${await mac(deps, payload)}`, {
    ...cookieOptions(deps),
    maxAge: deps.config.AUTH_REFRESH_TOKEN_EXPIRES_IN,
  });
}

/** The sign-in a code or device approval is made from: this browser's session at the service (`sid`). */
export function signInOf(session: BrowserSession): SignIn {
  return { authTime: session.authTime, sid: session.sessionId };
}

export function endBrowserSession(c: Context<AppEnv>): void {
  deleteCookie(c, COOKIE, cookieOptions(c.var.deps));
}

/** The signed-in user of this browser, if the cookie is ours, its session stands and the user is enabled. */
export async function readBrowserSession(c: Context<AppEnv>): Promise<BrowserSession | null> {
  const deps = c.var.deps;
  const value = getCookie(c, COOKIE);
  if (!value || value.length > 1024) return null;
  const [payload, tag] = value.split(".");
  if (!payload || !tag || !timingSafeEqualString(tag, await mac(deps, payload))) return null;
  let claims: CookieClaims;
  try {
    claims = JSON.parse(new TextDecoder().decode(base64url.decode(payload))) as CookieClaims;
  } catch {
    return null;
  }
  if (typeof claims?.sub !== "string" || typeof claims.sid !== "string") return null;
  // The session is a row of its user's, in the user's shard; the MAC vouches for the pair.
  const row = await deps.shards
    .ofUser(claims.sub)
    .select({ user: users })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(
      and(eq(sessions.id, claims.sid), eq(sessions.userId, claims.sub), gt(sessions.expiresAt, deps.now())),
    )
    .get();
  if (!row || row.user.disabled) return null;
  return { user: row.user, sessionId: claims.sid, authTime: claims.at };
}
