import { decodeJwt, SignJWT } from "jose";
import { liveSession } from "../../../auth";
import type { Config } from "../../../config";
import type { Deps } from "../../../http/deps";
import { verifyAccessToken } from "../../../signing-keys/jwt";
import {
  AUDIENCE,
  aalOf,
  amrMethod,
  GoTrueError,
  goTrueIssuer,
  providerOf,
  verifyGoTrueToken,
} from "../gotrue";

/**
 * The token exchange of the forwarded data calls (contract supabase.md §4). The upstream (a Supabase project, or a
 * self-hosted PostgREST or Realtime) trusts only tokens its own JWT secret signs, and its RLS policies read `auth.uid()`
 * and `auth.jwt()` from them: so a caller's first-party session token is swapped for a short HS256 token with the
 * same identity, and the face's keys for the project's. Nothing else is exchanged: an OAuth2 client's token (`at+jwt`,
 * with a client audience; exchanged and CIBA tokens are of that kind), an old system's imported token, a token of a
 * dead session — each would carry a person's authority to a database that cannot tell who holds it.
 */

/** At most this long, and never past the presented token's own expiry: a leaked upstream token is short-lived. */
export const EXCHANGED_TTL_SECONDS = 300;

/** Who a data call runs as upstream. */
export type UpstreamRole =
  | { role: "anon" }
  | { role: "service_role" }
  /** A person, with the claims their upstream token carries and when their own token expires (seconds). */
  | { role: "authenticated"; claims: Record<string, unknown>; expiresAt: number };

const refused = (message: string) => new GoTrueError(401, "no_authorization", message);

/** The claims GoTrue's tokens carry that the upstream token repeats (RLS reads them through `auth.jwt()`). */
const CARRIED = [
  "aud",
  "role",
  "email",
  "phone",
  "app_metadata",
  "user_metadata",
  "session_id",
  "aal",
  "amr",
  "is_anonymous",
  "act",
] as const;

/** The session's user, alive and not banned, whose token says `sub`: one primary-key read. */
async function liveUser(deps: Deps, sessionId: unknown, sub: string) {
  if (typeof sessionId !== "string") throw refused("This token belongs to no session");
  const live = await liveSession(deps, sessionId);
  if (!live || live.id !== sub || live.disabled) throw refused("This token's session has ended");
  return live;
}

/** A token of the Supabase face: its GoTrue claims, as they are. */
async function goTrueCaller(deps: Deps, token: string): Promise<UpstreamRole> {
  const payload = (await verifyGoTrueToken(deps.config, token).catch((error: unknown) => {
    // Only GoTrue's verdict on the token is a refusal; the key set unreadable is the face's 503.
    if (!(error instanceof GoTrueError)) throw error;
    throw refused("This token is not a session token of this service");
  })) as unknown as Record<string, unknown> & { sub: string; exp: number };
  if (payload.role !== AUDIENCE || payload.cnf !== undefined) {
    throw refused("This token cannot be used on the data API");
  }
  await liveUser(deps, payload.session_id, payload.sub);
  const claims: Record<string, unknown> = { sub: payload.sub };
  for (const name of CARRIED) if (payload[name] !== undefined) claims[name] = payload[name];
  return { role: "authenticated", claims, expiresAt: payload.exp };
}

/** A token of the Nhost face: the same facts in GoTrue's terms, from its session's row (read for liveness anyway). */
async function nhostCaller(deps: Deps, token: string): Promise<UpstreamRole> {
  const payload = await verifyAccessToken(deps.config, token);
  // A DPoP-bound session (`cnf`) proves its sender to this service only; the upstream could not check a proof.
  if (!payload || payload.cnf) throw refused("This token is not a session token of this service");
  const user = await liveUser(deps, payload.sid, payload.sub);
  const provider = providerOf(user);
  return {
    role: "authenticated",
    claims: {
      sub: payload.sub,
      aud: AUDIENCE,
      role: AUDIENCE,
      email: user.email ?? "",
      phone: user.phoneNumber ?? "",
      app_metadata: { provider, providers: [provider] },
      user_metadata: user.metadata ?? {},
      session_id: payload.sid,
      // The same level the face's own token gives the session (a phone or WebAuthn step-up too).
      aal: aalOf(user.sessionMethod),
      amr: [{ method: amrMethod(user.sessionMethod), timestamp: Math.floor(user.sessionStartedAt / 1000) }],
      is_anonymous: user.isAnonymous,
      // An impersonation (contract operators.md §1): the database's policies see who acts, as the face's token says.
      ...(payload.act
        ? { act: payload.act, amr: [{ method: "imp", timestamp: Math.floor(user.sessionStartedAt / 1000) }] }
        : {}),
    },
    expiresAt: payload.exp,
  };
}

/**
 * The person behind a user token, or GoTrue's 401. The issuer read unverified only picks which face's check runs, so
 * each token is verified once; the check itself is the face's own.
 */
export async function userCaller(deps: Deps, token: string): Promise<UpstreamRole> {
  let issuer: unknown;
  try {
    issuer = decodeJwt(token).iss;
  } catch {
    throw refused("This token is not a session token of this service");
  }
  return issuer === goTrueIssuer(deps.config) ? goTrueCaller(deps, token) : nhostCaller(deps, token);
}

/** The secret's key, imported once per isolate: the exchange adds one HMAC to a data call, nothing more. */
const keys = new Map<string, Promise<CryptoKey>>();
function hmacKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey(
      "raw",
      new TextEncoder().encode(secret),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    keys.set(secret, key);
  }
  return key;
}

type Upstream = NonNullable<Config["supabase"]["upstream"]>;

/**
 * The token the upstream gets for `caller`, signed HS256 with the project's secret (its raw UTF-8 bytes, as GoTrue
 * and PostgREST use it), with its expiry in seconds. `anon` and `service_role` are what Supabase's own legacy keys
 * are (`iss: "supabase"`, the role alone); a person's token has the issuer the project's GoTrue would give it.
 */
export async function upstreamToken(
  upstream: Upstream,
  caller: UpstreamRole,
  nowMs: number,
): Promise<{ token: string; exp: number }> {
  const iat = Math.floor(nowMs / 1000);
  const exp =
    caller.role === "authenticated"
      ? Math.min(iat + EXCHANGED_TTL_SECONDS, caller.expiresAt)
      : iat + EXCHANGED_TTL_SECONDS;
  const claims =
    caller.role === "authenticated"
      ? { ...caller.claims, iss: `${new URL(upstream.url).origin}/auth/v1` }
      : { iss: "supabase", role: caller.role };
  const token = await new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .sign(await hmacKey(upstream.jwtSecret));
  return { token, exp };
}
