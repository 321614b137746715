import type { z } from "zod";
import { actorOfToken } from "../../../audit/actor";
import { liveSession } from "../../../auth";
import type { AppEnv } from "../../../http/app-env";
import { actorOf, impersonationRefusal } from "../../../http/impersonation";
import { notWellFormed } from "../../../http/validation";
import { loneSurrogatePath } from "../../../lib/well-formed";
import { GoTrueError } from "./errors";
import { importedGoTrueClaims, refuseUnlessRead } from "./imported-tokens";
import { type GoTrueClaims, verifyGoTrueToken } from "./tokens";

/** What every GoTrue route reads of its request: a JSON body, and, on an authenticated route, the signed-in user. */

/** A JSON body checked against `schema`, or GoTrue's 400 `validation_failed` naming what is wrong. */
export async function bodyOf<T extends z.ZodType>(
  c: { req: { json(): Promise<unknown> } },
  schema: T,
): Promise<z.output<T>> {
  let raw: unknown;
  try {
    raw = await c.req.json();
  } catch {
    throw new GoTrueError(400, "bad_json", "Could not parse request body as JSON");
  }
  // As the Nhost API refuses it (src/http/validation.ts `notWellFormed`): text no UTF-8 writer takes.
  const path = loneSurrogatePath(raw);
  if (path !== null) throw new GoTrueError(400, "validation_failed", notWellFormed(path));
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path.map(String).join(".");
  throw new GoTrueError(
    400,
    "validation_failed",
    field ? `${field}: ${issue?.message}` : "Invalid request body",
  );
}

type SessionUserRow = NonNullable<Awaited<ReturnType<typeof liveSession>>>;
/** What these checks read of a request; its variables by `get`, which reads one (Hono's `c.var` copies them all). */
type RequestOf = {
  req: { header(name: string): string | undefined; method: string; path: string };
  get<Key extends keyof AppEnv["Variables"]>(key: Key): AppEnv["Variables"][Key];
};

/** The token's user and session, alive: GoTrue's check on every authenticated route. */
export async function signedIn(c: RequestOf) {
  const claims = await bearerClaims(c);
  return { claims, user: liveOrRefusal(claims, await liveSession(c.get("deps"), claims.session_id)) };
}

/**
 * The bearer token's claims, its signature verified (the session is not checked yet); the audit's actor is its user,
 * or the impersonator its `act` names (src/audit/actor.ts).
 */
export async function bearerClaims(c: RequestOf): Promise<GoTrueClaims> {
  const claims = await verifiedBearerClaims(c);
  c.get("deps").audit.actAs(actorOfToken(claims));
  return claims;
}

async function verifiedBearerClaims(c: RequestOf): Promise<GoTrueClaims> {
  const header = c.req.header("authorization") ?? "";
  const token = /^Bearer (\S+)$/i.exec(header)?.[1];
  if (!token) throw new GoTrueError(401, "no_authorization", "This endpoint requires a valid Bearer token");
  let claims: GoTrueClaims;
  try {
    claims = await verifyGoTrueToken(c.get("config"), token);
  } catch (error) {
    // The old Supabase project's token, after a move: admitted read-only (imported-tokens.ts), else this face's 403.
    const old = await importedGoTrueClaims(c.get("deps"), token);
    if (!old) throw error;
    refuseUnlessRead(c.req.method, c.req.path);
    return old;
  }
  // An impersonation's token (contract operators.md §1) reads and signs out, and changes nothing: the face's every
  // authenticated write (the user, factors, identities) is a credential or a link, and `reauthenticate` (a GET that
  // mails a code) is a step-up. The one rule, src/http/impersonation.ts, in GoTrue's error shape.
  const reads =
    ((c.req.method === "GET" || c.req.method === "HEAD") && !c.req.path.endsWith("/reauthenticate")) ||
    c.req.path.endsWith("/logout");
  if (actorOf(claims) && !reads) {
    throw new GoTrueError(403, "forbidden", impersonationRefusal(`${c.req.method} ${c.req.path}`).message);
  }
  return claims;
}

/** The token's session as read, if it is live and the token's user's, and the user not banned; else GoTrue's 403. */
export function liveOrRefusal(claims: GoTrueClaims, live: SessionUserRow | undefined): SessionUserRow {
  if (!live || live.id !== claims.sub) {
    throw new GoTrueError(403, "session_not_found", "Session from session_id claim in JWT does not exist");
  }
  if (live.disabled) throw new GoTrueError(403, "user_banned", "User is banned");
  return live;
}
