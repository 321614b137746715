import { and, desc, eq, gt, inArray } from "drizzle-orm";
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { base64url } from "jose";
import { type ConsoleSessionRow, consoleSessions } from "../../db/schema";
import type { AppEnv } from "../../http/app-env";
import { randomUuid, sha256Hex, timingSafeEqualString } from "../../lib/crypto";
import { hmacSubkey } from "../../lib/subkeys";

/**
 * Who may use the admin console in this browser tab. Signing in with the admin secret creates a `console_sessions`
 * row and sets a cookie holding its id, its expiry and a MAC over both and over a hash of the admin secret (a subkey
 * of `AUTH_ENCRYPTION_KEY`): the secret itself is never stored in the browser or put in a URL. A session ends when
 * its row goes (sign-out, "end" in the console's session list), when `AUTH_ADMIN_SECRET` changes (the MAC no longer
 * verifies), or after eight hours. The cookie is HttpOnly, Secure, SameSite=Strict, scoped to the console's path,
 * and has no Max-Age (it also ends with the browser session).
 */
const COOKIE = "admin_console";
const LIFETIME_MS = 8 * 3600 * 1000;

type Ctx = Context<AppEnv>;

async function mac(c: Ctx, payload: string): Promise<string> {
  const key = await hmacSubkey(c.var.config.secrets.encryptionKey, "admin-console");
  const secretHash = await sha256Hex(c.var.config.secrets.adminSecret ?? "");
  const signed = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${payload}|${secretHash}`));
  return base64url.encode(new Uint8Array(signed));
}

export function consolePath(c: Ctx): string {
  return `${c.var.config.urls.authPrefix.replace(/\/$/, "")}/admin/console`;
}

export async function startConsoleSession(c: Ctx): Promise<void> {
  const { db, now } = c.var.deps;
  const id = randomUuid();
  const expires = now() + LIFETIME_MS;
  await db.insert(consoleSessions).values({
    id,
    createdAt: now(),
    expiresAt: expires,
    ip: c.req.header("cf-connecting-ip") ?? null,
    userAgent: c.req.header("user-agent")?.slice(0, 512) ?? null,
  });
  const payload = `${id}.${expires}`;
  setCookie(c, COOKIE, `${payload}.${await mac(c, payload)}`, {
    path: consolePath(c),
    httpOnly: true,
    secure: true,
    sameSite: "Strict",
  });
}

/** Sign-out: this session's row goes, and the cookie with it. */
export async function endConsoleSession(c: Ctx, session: ConsoleSession): Promise<void> {
  await endConsoleSessions(c, [session.id]);
  deleteCookie(c, COOKIE, { path: consolePath(c), secure: true });
}

export async function endConsoleSessions(c: Ctx, ids: string[]): Promise<void> {
  if (ids.length > 0) await c.var.deps.db.delete(consoleSessions).where(inArray(consoleSessions.id, ids));
}

/** The console sessions that stand, newest first. */
export function listConsoleSessions(c: Ctx): Promise<ConsoleSessionRow[]> {
  return c.var.deps.db
    .select()
    .from(consoleSessions)
    .where(gt(consoleSessions.expiresAt, c.var.deps.now()))
    .orderBy(desc(consoleSessions.createdAt))
    .limit(100)
    .all();
}

/** A console session of this browser: the cookie's value (what the CSRF token is bound to) and its row's id. */
export interface ConsoleSession {
  id: string;
  cookie: string;
}

/** The session when the cookie is ours, unexpired, made under the current admin secret and its row stands. */
export async function consoleSession(c: Ctx): Promise<ConsoleSession | null> {
  const value = getCookie(c, COOKIE);
  const [id, expires, given] = value?.split(".") ?? [];
  if (!id || !expires || !given || !(Number(expires) > c.var.deps.now())) return null;
  if (!timingSafeEqualString(given, await mac(c, `${id}.${expires}`))) return null;
  const row = await c.var.deps.db
    .select({ id: consoleSessions.id })
    .from(consoleSessions)
    .where(and(eq(consoleSessions.id, id), gt(consoleSessions.expiresAt, c.var.deps.now())))
    .get();
  return row ? { id, cookie: value! } : null;
}

/** The token every console form carries, bound to the session: a form built for another session is refused. */
export const csrfToken = (c: Ctx, session: ConsoleSession) => mac(c, `csrf.${session.cookie}`);

/**
 * A console form post must come from the console's own origin (browsers name it in `Origin`) and carry the session's
 * token: SameSite=Strict already keeps the cookie off cross-site posts; these two close what remains.
 */
export async function isGenuinePost(
  c: Ctx,
  session: ConsoleSession,
  token: string | undefined,
): Promise<boolean> {
  if (c.req.header("origin") !== new URL(c.req.url).origin) return false;
  return token !== undefined && timingSafeEqualString(token, await csrfToken(c, session));
}
