import { and, desc, eq, gt } from "drizzle-orm";
import { shardOfMinted } from "../../db/directory";
import { idForUser } from "../../db/routed-ids";
import { personalAccessTokens, type UserRow, users } from "../../db/schema";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { sha256Hex } from "../../lib/crypto";
import { credentialsChanged } from "../credential-changes";
import type { Session } from "../new-sessions";
import { type SignInScope, startSession } from "../sign-in";
import { requireRegisteredUser } from "../users";

/**
 * createPAT: a long-lived UUID-shaped secret, shown once, stored as SHA-256. The token carries its user's slot
 * (src/db/routed-ids.ts), so a sign-in with it reaches the user's shard without the directory.
 */
export async function createPersonalAccessToken(
  deps: Deps,
  userId: string,
  input: { expiresAt: Date; metadata?: Record<string, unknown> },
): Promise<{ id: string; personalAccessToken: string }> {
  await requireRegisteredUser(deps, userId);
  const now = deps.now();
  if (input.expiresAt.getTime() <= now)
    throw new AppError("invalid-request", "expiresAt: must be in the future");
  const id = idForUser(userId);
  const personalAccessToken = idForUser(userId);
  const db = deps.shards.ofUser(userId);
  await db.batch([
    db.insert(personalAccessTokens).values({
      id,
      userId,
      tokenHash: await sha256Hex(personalAccessToken),
      createdAt: now,
      expiresAt: input.expiresAt.getTime(),
      metadata: input.metadata ?? {},
    }),
    credentialsChanged(db, userId, now),
  ]);
  deps.audit({
    type: "pat.created",
    userId,
    detail: { patId: id, expiresAt: input.expiresAt.toISOString() },
  });
  return { id, personalAccessToken };
}

/** What a user sees of one of their tokens: never the token, nor its hash. */
export interface PersonalAccessTokenFacts {
  id: string;
  createdAt: number;
  expiresAt: number;
  metadata: Record<string, unknown>;
}

/** The user's tokens, newest first, expired ones included (they still show when they ran out). */
export function listPersonalAccessTokens(deps: Deps, userId: string): Promise<PersonalAccessTokenFacts[]> {
  return deps.shards
    .ofUser(userId)
    .select({
      id: personalAccessTokens.id,
      createdAt: personalAccessTokens.createdAt,
      expiresAt: personalAccessTokens.expiresAt,
      metadata: personalAccessTokens.metadata,
    })
    .from(personalAccessTokens)
    .where(eq(personalAccessTokens.userId, userId))
    .orderBy(desc(personalAccessTokens.createdAt))
    .all();
}

/**
 * Revokes one of the user's tokens: the row goes, so the next `POST /signin/pat` with it is `invalid-pat` (sessions
 * it already made end like any other session). False when the user has no token with that id (someone else's
 * included). A directory entry of an imported token is left: stale, and harmless (src/db/directory.ts).
 */
export async function revokePersonalAccessToken(deps: Deps, userId: string, id: string): Promise<boolean> {
  const removed = await deps.shards
    .ofUser(userId)
    .delete(personalAccessTokens)
    .where(and(eq(personalAccessTokens.id, id), eq(personalAccessTokens.userId, userId)))
    .returning({ id: personalAccessTokens.id })
    .get();
  if (removed) {
    await credentialsChanged(deps.shards.ofUser(userId), userId, deps.now());
    deps.audit({ type: "pat.revoked", userId, detail: { patId: id } });
  }
  return removed !== undefined;
}

/**
 * The user a personal access token stands for: one read in the user's shard (a token imported from Nhost carries no
 * slot: the import wrote its directory entry, one read more). Refused as `invalid-pat` (unknown, expired) or
 * `disabled-user`. `signInPAT` and the service binding's `authenticate` (src/platform/) both ask this.
 */
export async function userOfPersonalAccessToken(deps: Deps, token: string): Promise<UserRow> {
  const tokenHash = await sha256Hex(token);
  const db = await shardOfMinted(deps.shards, token, { kind: "pat", value: tokenHash });
  const row = await db
    ?.select({ user: users })
    .from(personalAccessTokens)
    .innerJoin(users, eq(users.id, personalAccessTokens.userId))
    .where(and(eq(personalAccessTokens.tokenHash, tokenHash), gt(personalAccessTokens.expiresAt, deps.now())))
    .get();
  if (!row) throw new AppError("invalid-pat");
  if (row.user.disabled) throw new AppError("disabled-user");
  return row.user;
}

/** signInPAT: a session for the PAT's user. PATs and refresh tokens live in different tables: never interchangeable. */
export async function signInWithPersonalAccessToken(scope: SignInScope, token: string): Promise<Session> {
  const user = await userOfPersonalAccessToken(scope.deps, token);
  return (await startSession(scope, { user })).session;
}
