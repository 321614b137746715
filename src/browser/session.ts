import { and, eq, gt } from "drizzle-orm";
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { base64url } from "jose";
import { sessions, type UserRow, users } from "../db/schema";
import type { AppEnv } from "../http/app-env";
import type { Deps } from "../http/deps";
import { refuseWhileImpersonating } from "../http/impersonation";
import { timingSafeEqualString } from "../lib/crypto";
import { hmacSubkey } from "../lib/subkeys";
import { type MethodTimes, methodsOf, SIGN_IN_METHODS, type SignInMethod } from "./acr";
import { noteImpersonation } from "./impersonation-banner";

/**
 * Who is signed in to the built-in login page, in this browser, and how. The cookie holds a session id, the user, the
 * time of the sign-in and the time each sign-in method was last performed in this browser (the sign-in's, then every
 * step-up's: acr.ts), MACed with a subkey of `AUTH_ENCRYPTION_KEY`, so neither the user nor the methods can be
 * changed; it is HttpOnly, SameSite=Lax and scoped to `/oauth2`. It is only as good as the session row it names:
 * sign-out everywhere, a password change or disabling the user ends it like any other session.
 */
const COOKIE = "oauth2_session";

export interface BrowserSession {
  user: UserRow;
  sessionId: string;
  /** When the user signed in to the page, ms. */
  signedInAt: number;
  /** When the user last authenticated in this browser (sign-in or step-up), ms. */
  authTime: number;
  /** When each method was last performed in this browser, ms. */
  methods: MethodTimes;
  /** Who acts, when the session is an impersonation (contract operators.md §1): the pages show it, and grant nothing. */
  actor: string | null;
}

interface CookieClaims {
  sid: string;
  sub: string;
  /** The sign-in, ms. */
  at: number;
  /** The methods, ms; absent in cookies from before this record (a sign-in of unknown way at `at`). */
  m?: MethodTimes;
}

async function mac(deps: Deps, payload: string): Promise<string> {
  const key = await hmacSubkey(deps.config.secrets.encryptionKey, "oauth2-browser-session");
  return base64url.encode(
    new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(payload))),
  );
}

/**
 * Scoped to the auth API's path (`AUTH_SERVER_URL`'s), not only `/oauth2`: the hosted pages of a first-party app
 * (`/signin`) and the account center (`/account`, contract §13) read the same sign-in. Nothing but those pages reads
 * the cookie; the API authenticates by bearer tokens.
 */
function cookieOptions(deps: Deps) {
  const server = new URL(deps.config.urls.server);
  return {
    path: server.pathname.replace(/\/$/, "") || "/",
    httpOnly: true,
    secure: server.protocol === "https:",
    sameSite: "Lax" as const,
  };
}

/** Where the cookie lived before the account center (`/oauth2` under the API): removed whenever it is written. */
function formerCookieOptions(deps: Deps) {
  return {
    ...cookieOptions(deps),
    path: `${deps.config.urls.authPath}/oauth2`,
  };
}

/**
 * The same session for the browser's own sign-in prompt (W3C FedCM, src/fedcm/): Chrome sends the accounts and ID
 * assertion endpoints only cookies marked `SameSite=None`, so the Lax cookie above never reaches them. This twin
 * carries the same MACed value, but only to the FedCM endpoints (its path), which answer only a request the browser
 * made for its prompt (`Sec-Fetch-Dest: webidentity`, a header no page can set); no page reads it, so the pages'
 * protection by SameSite=Lax stays whole. `Secure`, as SameSite=None requires (Chrome keeps it on http://localhost).
 */
export const FEDCM_SESSION_COOKIE = "fedcm_session";
export const FEDCM_PATH = "/fedcm";

function fedcmCookieOptions(deps: Deps) {
  return {
    path: `${deps.config.urls.authPath}${FEDCM_PATH}`,
    httpOnly: true,
    secure: true,
    sameSite: "None" as const,
  };
}

/**
 * The Login Status API (W3C FedCM §5): tells the browser whether someone is signed in to this identity provider, so
 * that its prompt knows whether to ask the accounts endpoint at all.
 */
const LOGIN_STATUS_HEADER = "Set-Login";

async function writeCookie(c: Context<AppEnv>, claims: CookieClaims): Promise<void> {
  const deps = c.var.deps;
  const payload = base64url.encode(JSON.stringify(claims));
  if (getCookie(c, COOKIE)) deleteCookie(c, COOKIE, formerCookieOptions(deps));
  const value = `${payload}.${await mac(deps, payload)}`;
  setCookie(c, COOKIE, value, { ...cookieOptions(deps), maxAge: deps.config.tokens.refreshTtl });
  setCookie(c, FEDCM_SESSION_COOKIE, value, {
    ...fedcmCookieOptions(deps),
    maxAge: deps.config.tokens.refreshTtl,
  });
  c.header(LOGIN_STATUS_HEADER, "logged-in");
}

/** Signs the user in to the page: the cookie names the session the sign-in just created, and how it was made. */
export async function startBrowserSession(
  c: Context<AppEnv>,
  userId: string,
  sessionId: string,
  methods: SignInMethod[],
): Promise<void> {
  const now = c.var.deps.now();
  const times: MethodTimes = Object.fromEntries(methods.map((method) => [method, now]));
  await writeCookie(c, { sid: sessionId, sub: userId, at: now, m: times });
}

/**
 * A step-up: `method` was just performed by this session's own user (the caller checked the proof was theirs), and
 * counts from now. The session and its sign-in stay what they were; only the record of methods grows.
 */
export async function raiseBrowserSession(
  c: Context<AppEnv>,
  session: BrowserSession,
  method: SignInMethod,
): Promise<void> {
  const now = c.var.deps.now();
  await writeCookie(c, {
    sid: session.sessionId,
    sub: session.user.id,
    at: session.signedInAt,
    m: { ...session.methods, [method]: now },
  });
}

/**
 * The first factor of a sign-in that continues with a TOTP code (the page's `/mfa` form): carried in the form with
 * the ticket, MACed with it, so the form cannot claim a password for what was a magic link. (The MACed text has a
 * colon, which no cookie payload, base64url, can hold: neither MAC stands for the other.)
 */
export async function sealFirstFactor(deps: Deps, ticket: string, method: SignInMethod): Promise<string> {
  return `${method}.${await mac(deps, `first-factor:${ticket}:${method}`)}`;
}

/** The sealed first factor of `ticket`; a sign-in of unknown way when the seal is missing or not ours. */
export async function openFirstFactor(deps: Deps, ticket: string, sealed: string): Promise<SignInMethod> {
  const [method, tag] = sealed.split(".");
  const known = (SIGN_IN_METHODS as readonly string[]).includes(method ?? "");
  if (!known || !tag || !timingSafeEqualString(tag, await mac(deps, `first-factor:${ticket}:${method}`))) {
    return "sign-in";
  }
  return method as SignInMethod;
}

/** Only the catalogue's methods with times: anything else in a (MACed, so our own) cookie is from another version. */
function methodTimes(value: unknown, at: number): MethodTimes {
  if (!value || typeof value !== "object") return { "sign-in": at };
  const times: MethodTimes = {};
  for (const method of SIGN_IN_METHODS) {
    const time = (value as Record<string, unknown>)[method];
    if (typeof time === "number" && Number.isFinite(time)) times[method] = time;
  }
  return methodsOf(times).length ? times : { "sign-in": at };
}

export function endBrowserSession(c: Context<AppEnv>): void {
  deleteCookie(c, COOKIE, cookieOptions(c.var.deps));
  deleteCookie(c, COOKIE, formerCookieOptions(c.var.deps));
  deleteCookie(c, FEDCM_SESSION_COOKIE, fedcmCookieOptions(c.var.deps));
  c.header(LOGIN_STATUS_HEADER, "logged-out");
}

/**
 * The signed-in user of this browser, if the cookie is ours, its session stands and the user is enabled. Every page
 * that acts for the signed-in person reads it here, so here is where an impersonation is refused on every post
 * (contract operators.md §1: a consent, an approval, an invitation accepted, a step-up, a password, a factor, a
 * deletion: 403 `forbidden`), once for all the pages and the account center. `ending`: a sign-out, which an
 * impersonation may do.
 */
export async function readBrowserSession(
  c: Context<AppEnv>,
  { ending = false }: { ending?: boolean } = {},
): Promise<BrowserSession | null> {
  const session = await browserSessionOf(c.var.deps, getCookie(c, COOKIE));
  if (session?.actor) noteImpersonation(c, session.actor);
  if (session && !ending && c.req.method !== "GET" && c.req.method !== "HEAD")
    refuseWhileImpersonating(session.actor, `${c.req.method} ${c.req.path}`);
  return session;
}

/** The browser session cookie's name, for a reader of a raw `Cookie` header (the service binding, src/platform/). */
export const BROWSER_SESSION_COOKIE = COOKIE;

/** `readBrowserSession` of the cookie's value: its MAC checked, then one read of the session and its user. */
export async function browserSessionOf(
  deps: Deps,
  value: string | undefined,
): Promise<BrowserSession | null> {
  if (!value || value.length > 1024) return null;
  const [payload, tag] = value.split(".");
  if (!payload || !tag || !timingSafeEqualString(tag, await mac(deps, payload))) return null;
  let claims: CookieClaims;
  try {
    claims = JSON.parse(new TextDecoder().decode(base64url.decode(payload))) as CookieClaims;
  } catch {
    return null;
  }
  if (typeof claims?.sub !== "string" || typeof claims.sid !== "string" || typeof claims.at !== "number")
    return null;
  // The session is a row of its user's, in the user's shard; the MAC vouches for the pair.
  const row = await deps.shards
    .ofUser(claims.sub)
    .select({ user: users, actor: sessions.actor })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(
      and(eq(sessions.id, claims.sid), eq(sessions.userId, claims.sub), gt(sessions.expiresAt, deps.now())),
    )
    .get();
  if (!row || row.user.disabled) return null;
  const methods = methodTimes(claims.m, claims.at);
  return {
    user: row.user,
    sessionId: claims.sid,
    signedInAt: claims.at,
    authTime: Math.max(...methodsOf(methods).map((method) => methods[method] ?? 0)),
    methods,
    actor: row.actor,
  };
}
