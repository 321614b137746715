import { and, eq, isNull, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Db } from "../db/client";
import {
  type ImportedParts,
  importLedger,
  personalAccessTokens,
  refreshTokens,
  sessions,
} from "../db/schema";
import type { CheckedUser } from "./user-checks";

type Statement = BatchItem<"sqlite">;

/**
 * A user's refresh tokens and PATs as Nhost has them now, against what earlier runs wrote (`previous`, hash → ref
 * `regular:<session id>` or `pat:<id>`) and every hash any run ever wrote (`imported`, the tombstones).
 *
 * - A hash written before is never written again: spent, signed out or deleted here, it stays so.
 * - Nhost rotates a session's token in place (same row id, a new hash): a session not yet used here follows, its
 *   index row replaced; one that moved here (it has a locator: the client refreshed here) is the service's now.
 * - A token Nhost no longer has (signed out there, expired) ends here too, unless its session moved here: after the
 *   cut-over, Nhost's old rows expire while the clients go on here.
 * Removals come first in the batch: a rotated row's new hash is written after its old one is gone.
 */
export function tokenStatements(
  db: Db,
  user: CheckedUser,
  previous: ImportedParts["tokens"],
  imported: ReadonlySet<string>,
  now: number,
): { statements: Statement[]; tokens: Record<string, string> } {
  const statements: Statement[] = [];
  const tokens: Record<string, string> = {};
  const current = new Map(user.tokens.map((t) => [t.hash, t]));
  const currentRefs = new Set(user.tokens.map((t) => `${t.kind}:${t.id}`));
  const previousRefs = new Set(Object.values(previous));

  for (const [hash, ref] of Object.entries(previous)) {
    if (current.has(hash) || currentRefs.has(ref)) continue;
    const [kind, id] = ref.split(":") as [string, string];
    statements.push(
      kind === "pat"
        ? db
            .delete(personalAccessTokens)
            .where(and(eq(personalAccessTokens.id, id), eq(personalAccessTokens.tokenHash, hash)))
        : db
            .delete(sessions)
            .where(and(eq(sessions.id, id), eq(sessions.userId, user.id), isNull(sessions.locator))),
    );
  }

  for (const t of user.tokens) {
    const ref = `${t.kind}:${t.id}`;
    if (imported.has(t.hash)) {
      if (previous[t.hash]) tokens[t.hash] = ref;
      continue;
    }
    tokens[t.hash] = ref;
    statements.push(
      db
        .insert(importLedger)
        .values({ kind: "token", id: t.hash, fingerprint: ref, owner: user.id, importedAt: now }),
    );
    const rotatedInNhost = previousRefs.has(ref);
    if (t.kind === "pat") {
      statements.push(
        rotatedInNhost
          ? db
              .update(personalAccessTokens)
              .set({ tokenHash: t.hash, expiresAt: t.expiresAt, metadata: t.metadata })
              .where(and(eq(personalAccessTokens.id, t.id), eq(personalAccessTokens.userId, user.id)))
          : db.insert(personalAccessTokens).values({
              id: t.id,
              userId: user.id,
              tokenHash: t.hash,
              createdAt: t.createdAt,
              expiresAt: t.expiresAt,
              metadata: t.metadata,
            }),
      );
    } else if (rotatedInNhost) {
      const unused = sql`(SELECT 1 FROM ${sessions} WHERE ${sessions.id} = ${t.id} AND ${sessions.locator} IS NULL)`;
      statements.push(
        db.delete(refreshTokens).where(and(eq(refreshTokens.sessionId, t.id), sql`EXISTS ${unused}`)),
        db.insert(refreshTokens).select(
          db
            .select({
              tokenHash: sql<string>`${t.hash}`.as("token_hash"),
              sessionId: sessions.id,
              expiresAt: sql<number>`${t.expiresAt}`.as("expires_at"),
            })
            .from(sessions)
            .where(and(eq(sessions.id, t.id), isNull(sessions.locator))),
        ),
        db
          .update(sessions)
          .set({ expiresAt: t.expiresAt })
          .where(and(eq(sessions.id, t.id), isNull(sessions.locator))),
      );
    } else {
      // A session without a locator, found by the token's hash: its first refresh moves it onto a token family
      // (src/token-families/legacy/, which serves imported tokens while the import is offered: docs/operations.md).
      statements.push(
        db.insert(sessions).values({
          id: t.id,
          userId: user.id,
          createdAt: t.createdAt,
          lastUsedAt: t.createdAt,
          expiresAt: t.expiresAt,
          userAgent: null,
          locator: null,
        }),
        db.insert(refreshTokens).values({ tokenHash: t.hash, sessionId: t.id, expiresAt: t.expiresAt }),
      );
    }
  }
  return { statements, tokens };
}
