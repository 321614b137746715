import { and, desc, eq } from "drizzle-orm";
import { revokeSession } from "../auth";
import { shardOfMinted } from "../db/directory";
import { sessions } from "../db/schema";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { type Page, pastCursor, toPage } from "../http/paging";
import type { AdminSession } from "./wire";

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * A user's sessions, newest first. `lastUsedAt` is written at most once an hour per session (a refresh writes no D1
 * row, docs/scaling.md), so it is accurate to the hour.
 */
export async function listSessions(
  deps: Deps,
  userId: string,
  page: { limit: number; cursor?: string },
): Promise<Page<AdminSession>> {
  const rows = await deps.shards
    .ofUser(userId)
    .select()
    .from(sessions)
    .where(and(eq(sessions.userId, userId), pastCursor(page.cursor, sessions.createdAt, sessions.id, "desc")))
    .orderBy(desc(sessions.createdAt), desc(sessions.id))
    .limit(page.limit + 1)
    .all();
  return toPage(
    rows,
    page.limit,
    (row) => [row.createdAt, row.id],
    (row) => ({
      id: row.id,
      createdAt: iso(row.createdAt),
      lastUsedAt: iso(row.lastUsedAt),
      expiresAt: iso(row.expiresAt),
      userAgent: row.userAgent,
    }),
  );
}

/**
 * `DELETE /admin/sessions/{id}`: the session ends at once (its next refresh fails); returns its user. The session's
 * shard is the one its id names (minted with the slot), or the directory's for a session imported from Nhost.
 */
export async function revokeSessionById(deps: Deps, sessionId: string): Promise<string> {
  const db = await shardOfMinted(deps.shards, sessionId, { kind: "session", value: sessionId });
  const row = await db
    ?.select({ userId: sessions.userId })
    .from(sessions)
    .where(eq(sessions.id, sessionId))
    .get();
  if (!row) throw new AppError("not-found", "no session with this id");
  await revokeSession(deps, sessionId);
  return row.userId;
}
