import { and, desc, eq, gt } from "drizzle-orm";
import { z } from "zod";
import { sessions } from "../../db/schema";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { revokeAllSessions, revokeSessionOfUser } from "../revocation";

/**
 * The user's own sessions (contract §13): the list a person reads to spot a sign-in that was not theirs, "sign out
 * that one", and "sign out everywhere else". Used by the API (list-routes.ts) and the account center.
 */

/** One session as the list shows it: where and how it began, when it was last used. */
export const userSessionSchema = z.object({
  id: z
    .string()
    .describe("The session's id (`refreshTokenId` of its sessions); `DELETE /user/sessions/{id}` ends it"),
  current: z
    .boolean()
    .describe(
      "The session of the access token that asked (its `sid` claim); false everywhere for a token without one",
    ),
  createdAt: z.iso.datetime().describe("When the session began (the sign-in)"),
  lastUsedAt: z.iso.datetime().describe("Its last refresh, accurate to the hour"),
  expiresAt: z.iso.datetime().describe("When its refresh token expires unless used again"),
  userAgent: z.string().nullable().describe("The `User-Agent` of the sign-in; null if unknown"),
  ip: z
    .string()
    .nullable()
    .describe("The client address of the sign-in; null for sessions from before it was kept"),
  place: z
    .string()
    .nullable()
    .describe('Roughly where that address is ("city, region, country" from Cloudflare); null if unknown'),
  method: z
    .string()
    .nullable()
    .describe(
      "How the session began: `email-password`, `webauthn`, `provider:github`, `pat`, …, `import:nhost` for a " +
        "session carried from Nhost by the import; null if unknown",
    ),
  impersonatedBy: z
    .string()
    .nullable()
    .optional()
    .describe(
      "Who acted as the user in this session (an impersonation by support, contract operators.md §1, `method` " +
        "`impersonation`); absent or null for the user's own",
    ),
});

export type UserSession = z.infer<typeof userSessionSchema>;

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The user's unexpired sessions, newest first. Read from the user's shard itself, not a replica: a list read right
 * after "sign out that one" must not show it again. `currentSessionId`: the asking token's `sid`, if any.
 */
export async function listUserSessions(
  deps: Deps,
  userId: string,
  currentSessionId: string | undefined,
): Promise<UserSession[]> {
  const rows = await deps.shards
    .ofUser(userId)
    .select()
    .from(sessions)
    .where(and(eq(sessions.userId, userId), gt(sessions.expiresAt, deps.now())))
    .orderBy(desc(sessions.createdAt), desc(sessions.id))
    // Every session: a user has at most this many (src/auth/session-cap.ts).
    .limit(deps.config.tokens.maxSessionsPerUser)
    .all();
  return rows.map((row) => ({
    id: row.id,
    current: row.id === currentSessionId,
    createdAt: iso(row.createdAt),
    lastUsedAt: iso(row.lastUsedAt),
    expiresAt: iso(row.expiresAt),
    // Sessions from before an import or from before this list existed show what is known: nulls.
    userAgent: row.userAgent,
    ip: row.ip,
    place: row.place,
    method: row.method,
    ...(row.actor ? { impersonatedBy: row.actor } : {}),
  }));
}

/**
 * Ends one of the user's sessions at once: its next refresh fails (src/auth/revocation.ts also revokes its token
 * family and, through the row's deletion, emits `session.revoked`). Another user's session or an unknown id is the
 * same 404: the answer never tells whether an id exists for someone else.
 */
export async function revokeUserSession(deps: Deps, userId: string, sessionId: string): Promise<void> {
  const ended = sessionId.length <= 100 && (await revokeSessionOfUser(deps, userId, sessionId));
  if (!ended) throw new AppError("not-found", "no session with this id");
  deps.audit({ type: "session.revoke", userId, detail: { sessionId } });
}

/**
 * Ends every session of the user but `currentSessionId` (the asking token's). A token without a session id (one
 * issued by Nhost before an import) keeps none: there is no session to tell apart as the caller's.
 */
export async function revokeOtherUserSessions(
  deps: Deps,
  userId: string,
  currentSessionId: string | undefined,
): Promise<void> {
  await revokeAllSessions(deps, userId, currentSessionId);
  deps.audit({ type: "session.revoke-others", userId, detail: { kept: currentSessionId ?? null } });
}
