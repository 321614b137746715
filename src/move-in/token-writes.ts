import { and, eq, gt, isNull, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { IMPORTED_NHOST_METHOD } from "../auth";
import type { Db } from "../db/client";
import {
  type ImportedParts,
  type ImportSystem,
  importLedger,
  personalAccessTokens,
  refreshTokens,
  sessions,
} from "../db/schema";
import type { CheckedUser, ImportedToken } from "./user-checks";

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
 * - A user whose credentials changed here (`refuseNew`, changed-here.ts) gets no new session or PAT: only a session
 *   already carried, still alive here and not yet used here follows Nhost's rotation of its token (`refused` lists
 *   the rest, for the report).
 * Removals come first in the batch: a rotated row's new hash is written after its old one is gone. `carried`: the
 * tokens whose hash this batch writes (new sessions and PATs, rotations), which the report counts as carried.
 */
export function tokenStatements(
  db: Db,
  user: CheckedUser,
  previous: ImportedParts["tokens"],
  imported: ReadonlySet<string>,
  now: number,
  changedHere: { refuseNew: boolean; present: ReadonlySet<string> } = {
    refuseNew: false,
    present: new Set(),
  },
  /** The run's system, on the tokens' ledger rows as on their user's. */
  system: ImportSystem = "nhost",
): {
  statements: Statement[];
  tokens: Record<string, string>;
  carried: ImportedToken[];
  refused: ImportedToken[];
} {
  const statements: Statement[] = [];
  const tokens: Record<string, string> = {};
  const carried: ImportedToken[] = [];
  const refused: ImportedToken[] = [];
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
    // A retry token of the session (GoTrue's parent) is indexed beside it, a ledger row of its own.
    const retries = (t.retryHashes ?? []).filter((h) => h !== t.hash);
    if (imported.has(t.hash)) {
      if (previous[t.hash]) tokens[t.hash] = ref;
      for (const h of retries) if (previous[h] === ref) tokens[h] = ref;
      continue;
    }
    const rotatedInNhost = previousRefs.has(ref);
    const { refuseNew } = changedHere;
    if (refuseNew && (t.kind === "pat" || !rotatedInNhost || !changedHere.present.has(ref))) {
      refused.push(t);
      continue;
    }
    tokens[t.hash] = ref;
    carried.push(t);
    const fresh = retries.filter((h) => !imported.has(h));
    // The one exception to "written once": this session's own live token of an earlier run, which Supabase rotated
    // since, is now its parent. It is indexed again only where the session is still unused here (the statements'
    // condition), so a token spent, replayed or signed out here stays dead; its ledger row is already there.
    const again = retries.filter((h) => imported.has(h) && previous[h] === ref);
    for (const h of again) tokens[h] = ref;
    for (const h of [t.hash, ...fresh]) {
      tokens[h] = ref;
      statements.push(
        db
          .insert(importLedger)
          .values({ kind: "token", id: h, system, fingerprint: ref, owner: user.id, importedAt: now }),
      );
    }
    // After a credential change here, only a session still alive here follows (not one expired, not yet swept).
    const alive = changedHere.refuseNew ? gt(sessions.expiresAt, now) : undefined;
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
      const unused = changedHere.refuseNew
        ? sql`(SELECT 1 FROM ${sessions} WHERE ${sessions.id} = ${t.id} AND ${sessions.locator} IS NULL AND ${sessions.expiresAt} > ${now})`
        : sql`(SELECT 1 FROM ${sessions} WHERE ${sessions.id} = ${t.id} AND ${sessions.locator} IS NULL)`;
      statements.push(
        db.delete(refreshTokens).where(and(eq(refreshTokens.sessionId, t.id), sql`EXISTS ${unused}`)),
        ...[t.hash, ...fresh, ...again].map((h) =>
          db.insert(refreshTokens).select(
            db
              .select({
                tokenHash: sql<string>`${h}`.as("token_hash"),
                sessionId: sessions.id,
                expiresAt: sql<number>`${t.expiresAt}`.as("expires_at"),
              })
              .from(sessions)
              .where(and(eq(sessions.id, t.id), isNull(sessions.locator), alive)),
          ),
        ),
        db
          .update(sessions)
          // A Supabase session stepped up there since (mfa verify rotates its token) follows: its method, start and
          // level are the session's now (supabase-sessions.ts). Nhost's tokens name no method: only the expiry moves.
          .set(
            t.method
              ? {
                  expiresAt: t.expiresAt,
                  createdAt: t.createdAt,
                  method: t.method,
                  secondFactorPending: t.secondFactorPending ?? false,
                }
              : { expiresAt: t.expiresAt },
          )
          .where(and(eq(sessions.id, t.id), isNull(sessions.locator), alive)),
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
          // The session list labels it (the account center: "Imported from Nhost"), not an unknown device.
          method: t.method ?? IMPORTED_NHOST_METHOD,
          secondFactorPending: t.secondFactorPending ?? false,
        }),
        db
          .insert(refreshTokens)
          .values([t.hash, ...fresh].map((h) => ({ tokenHash: h, sessionId: t.id, expiresAt: t.expiresAt }))),
      );
    }
  }
  return { statements, tokens, carried, refused };
}
