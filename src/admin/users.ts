import { and, eq, inArray, or, sql } from "drizzle-orm";
import {
  checkPasswordPolicy,
  createUser as createUserRow,
  findUserById,
  removeUser,
  resolveSignUpOptions,
  revokeAllSessions,
  type SignUpOptions,
  toWireUser,
} from "../auth";
import { contains } from "../db/contains";
import {
  mfaFactors,
  mfaRecoveryCodes,
  oauth2Grants,
  securityKeys,
  type UserRow,
  userProviders,
  users,
} from "../db/schema";
import { eachShard } from "../db/shards";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { decodeCursor, type Page, toPage } from "../http/paging";
import { METADATA_MAX_BYTES, metadataSchema } from "../lib/json-metadata";
import { hashPassword } from "../lib/password";
import { mergeAcross } from "./across-shards";
import { compareUsers, type Position, pastPosition, positionOf, userOrder } from "./user-order";
import type { AdminUser, AdminUserDetail } from "./wire";

const iso = (ms: number) => new Date(ms).toISOString();

export function toAdminUser(user: UserRow): AdminUser {
  return {
    ...toWireUser(user),
    disabled: user.disabled,
    lastSeen: user.lastSeen === null ? null : iso(user.lastSeen),
  };
}

/**
 * Users newest first, `limit` at a time, from every shard (merged in the order, across-shards.ts); `search` matches
 * email, phone number and display name (substring, ASCII case-insensitive, as SQLite's LIKE is) and the id exactly.
 */
export async function listUsers(
  deps: Deps,
  query: { search?: string; limit: number; cursor?: string },
): Promise<Page<AdminUser>> {
  const search = query.search
    ? or(
        eq(users.id, query.search),
        contains(users.email, query.search),
        contains(users.phoneNumber, query.search),
        contains(users.displayName, query.search),
      )
    : undefined;
  const start = query.cursor ? decodeCursor(query.cursor) : undefined;
  const from: Position | undefined = start && { key: start[0], id: start[1] };
  const rows = await mergeAcross(deps.shards, {
    read: (db, after, limit) => {
      const position = after ? positionOf("newest", after) : from;
      return db
        .select()
        .from(users)
        .where(and(search, position ? pastPosition("newest", position) : undefined))
        .orderBy(...userOrder("newest"))
        .limit(limit)
        .all();
    },
    compare: compareUsers("newest"),
    take: query.limit + 1,
  });
  return toPage(rows, query.limit, (row) => [row.createdAt, row.id], toAdminUser);
}

export async function requireUser(deps: Deps, userId: string): Promise<UserRow> {
  const user = await findUserById(deps.shards, userId);
  if (!user) throw new AppError("not-found", "no user with this id");
  return user;
}

export async function getUserDetail(deps: Deps, userId: string): Promise<AdminUserDetail> {
  const user = await requireUser(deps, userId);
  const db = deps.shards.ofUser(user.id);
  const [providers, keys] = await db.batch([
    db.select().from(userProviders).where(eq(userProviders.userId, userId)).orderBy(userProviders.createdAt),
    db.select().from(securityKeys).where(eq(securityKeys.userId, userId)).orderBy(securityKeys.createdAt),
  ]);
  return {
    ...toAdminUser(user),
    providers: providers.map((p) => ({
      provider: p.provider,
      providerUserId: p.providerUserId,
      createdAt: iso(p.createdAt),
    })),
    securityKeys: keys.map((k) => ({ id: k.id, nickname: k.nickname, createdAt: iso(k.createdAt) })),
  };
}

export interface CreateUserInput {
  email: string;
  password?: string;
  options?: SignUpOptions;
  emailVerified?: boolean;
  /** How the `signup` event names the way in: the admin API's `admin`; the console's has always been unnamed. */
  method: "admin" | null;
  /** GoTrue's `app_metadata` (the Supabase face's `admin.createUser`); keys set to null are not kept. */
  appMetadata?: Record<string, unknown>;
}

/**
 * `POST /admin/users` (imports, seeding): the sign-up checks that protect a deployment from its users (sign-up
 * switches, allow and block lists) do not apply to its operator; the password policy and the role rules do.
 */
export async function createUser(deps: Deps, input: CreateUserInput): Promise<AdminUser> {
  return toAdminUser(await createUserRecord(deps, input));
}

/** `createUser`'s new row, for a face that shapes more of it than the admin API's User resource. */
export async function createUserRecord(deps: Deps, input: CreateUserInput): Promise<UserRow> {
  const email = input.email.toLowerCase();
  if (input.password !== undefined) await checkPasswordPolicy(deps, input.password);
  const options = resolveSignUpOptions(deps.config, input.options, email);
  const user = await createUserRow(deps, {
    admission: "operator",
    method: input.method,
    email,
    passwordHash:
      input.password === undefined ? null : await hashPassword(input.password, deps.config.passwordHashCost),
    options,
    emailVerified: input.emailVerified ?? false,
    appMetadata: input.appMetadata ? mergeAppMetadata(null, input.appMetadata) : null,
  });
  if (!user) throw new AppError("email-already-in-use");
  return user;
}

export interface UserPatch {
  disabled?: boolean;
  /** With `disabled: true`, a timed ban: the every-minute cron lifts it then (src/auth/housekeeping.ts). */
  bannedUntil?: number;
  roles?: string[];
  defaultRole?: string;
  displayName?: string;
  locale?: string;
  metadata?: Record<string, unknown>;
  emailVerified?: boolean;
  phoneNumberVerified?: boolean;
  /** `null`: reset MFA. */
  activeMfaType?: null;
  /** GoTrue's `app_metadata` update: merged key by key into what is stored, a key set to null removed. */
  appMetadata?: Record<string, unknown>;
}

/**
 * GoTrue's `UpdateAppMetaData` (internal/models/user.go): each key of `patch` replaces the stored one, a null removes
 * it. The result is bounded as every metadata is (src/lib/json-metadata.ts): a merge past the bound is refused.
 */
export function mergeAppMetadata(
  stored: Record<string, unknown> | null,
  patch: Record<string, unknown>,
): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...stored };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  if (!metadataSchema.safeParse(merged).success) {
    throw new AppError("invalid-request", `app_metadata must not exceed ${METADATA_MAX_BYTES} bytes as JSON`);
  }
  return merged;
}

/**
 * Merges of app_metadata that lose a race are made again over what won, this many times at most: n writers of one
 * user at once need n rounds (one wins each); past 32 at once the answer is a 503 to retry, never a lost key.
 */
const METADATA_MERGE_ATTEMPTS = 32;

/**
 * `PATCH /admin/users/{id}`. Roles here are the operator's: any role names, as long as the default role is one of
 * them. Disabling ends every session and OAuth2 grant at once (no token of theirs refreshes again; access tokens
 * already out run to their expiry, 15 minutes by default, like after any revocation).
 */
export async function patchUser(deps: Deps, userId: string, patch: UserPatch): Promise<AdminUser> {
  return toAdminUser(await patchUserRecord(deps, userId, patch));
}

/** `patchUser`'s changed row, for a face that shapes more of it than the admin API's User resource. */
export async function patchUserRecord(deps: Deps, userId: string, patch: UserPatch): Promise<UserRow> {
  const user = await requireUser(deps, userId);
  const roles = patch.roles ? [...new Set(patch.roles)] : user.roles;
  const defaultRole = patch.defaultRole ?? user.defaultRole;
  if (!roles.includes(defaultRole)) throw new AppError("default-role-must-be-in-allowed-roles");
  if (patch.locale !== undefined && !deps.config.locales.allowed.includes(patch.locale)) {
    throw new AppError("locale-not-allowed");
  }
  const { activeMfaType, appMetadata, ...fields } = patch;
  const db = deps.shards.ofUser(userId);
  const write = (metadata: { stored: string | null; merged: Record<string, unknown> } | null) =>
    db
      .update(users)
      .set({
        ...fields,
        ...(metadata ? { appMetadata: metadata.merged } : {}),
        // Any change of `disabled` says whether it ends by itself: a permanent disabling is never lifted by a ban's end.
        ...(patch.disabled !== undefined
          ? { bannedUntil: patch.disabled ? (patch.bannedUntil ?? null) : null }
          : {}),
        // Resetting MFA (a lost authenticator, or a TOTP secret an import could not decrypt): the user signs in with
        // their first factor again and may set TOTP up anew. Their recovery codes and other factors go with the secret.
        ...(activeMfaType === null
          ? { activeMfaType: null, totpSecret: null, totpLastStep: null, totpEnabledAt: null }
          : {}),
        roles,
        defaultRole,
        // An operator's word counts as the first proof of the address, if there was none: of an address not verified
        // until now (one verified by an import has no time recorded, and its proof is not this one).
        ...(patch.emailVerified
          ? {
              emailVerifiedAt: sql`CASE WHEN ${users.emailVerified} THEN ${users.emailVerifiedAt} ELSE coalesce(${users.emailVerifiedAt}, ${deps.now()}) END`,
            }
          : {}),
        updatedAt: deps.now(),
      })
      // The merge is written only over the app_metadata it was made from: two operators adding different keys at
      // once both keep theirs (the loser of the race merges again), where a plain write would drop one of them.
      .where(
        metadata
          ? and(eq(users.id, userId), sql`${users.appMetadata} IS ${metadata.stored}`)
          : eq(users.id, userId),
      )
      .returning()
      .get();
  let updated: UserRow | undefined;
  if (!appMetadata) updated = await write(null);
  for (let attempt = 0; appMetadata && !updated && attempt < METADATA_MERGE_ATTEMPTS; attempt++) {
    const current = await db
      .select({ stored: sql<string | null>`${users.appMetadata}` })
      .from(users)
      .where(eq(users.id, userId))
      .get();
    if (!current) break;
    const parsed = current.stored === null ? null : (JSON.parse(current.stored) as Record<string, unknown>);
    updated = await write({ stored: current.stored, merged: mergeAppMetadata(parsed, appMetadata) });
  }
  if (appMetadata && !updated && (await findUserById(deps.shards, userId))) {
    throw new AppError("service-unavailable", "the user's app_metadata kept changing: try again");
  }
  if (!updated) throw new AppError("not-found", "no user with this id");
  if (activeMfaType === null) {
    // Every factor goes, whichever face added it (a phone, a `webauthn` key): a reset leaves none to ask.
    await db.batch([
      db.delete(mfaRecoveryCodes).where(eq(mfaRecoveryCodes.userId, userId)),
      db.delete(mfaFactors).where(eq(mfaFactors.userId, userId)),
      // A phone factor verified since the update above named itself `sms`: it is gone now, and so is that.
      db
        .update(users)
        .set({ activeMfaType: null })
        .where(and(eq(users.id, userId), eq(users.activeMfaType, "sms"))),
    ]);
    deps.audit({ type: "mfa.disabled", userId, detail: { type: "totp", by: "admin" } });
  }
  if (patch.disabled === true && !user.disabled) await endAccess(deps, userId);
  return updated;
}

/** Every session and every OAuth2 grant of the user ends. */
export async function endAccess(deps: Deps, userId: string): Promise<void> {
  // Sessions first: each one's `session.revoked` event names the OAuth2 clients holding a grant from it, for
  // back-channel logout (migration 0024).
  await revokeAllSessions(deps, userId);
  await deps.shards.ofUser(userId).delete(oauth2Grants).where(eq(oauth2Grants.userId, userId));
}

/**
 * `DELETE /admin/users/{id}`: sessions first (the in-flight refresh of a session from before locators is refused by
 * its object), then the row, which takes every dependent row with it (foreign keys cascade: sessions, refresh
 * tokens, tickets, codes, PATs, MFA, security keys, providers, OAuth2 grants and consents). Files stay, with
 * `uploadedByUserId` kept as it was. The user's directory entries go last (src/auth/new-users.ts `removeUser`).
 */
export async function deleteUser(deps: Deps, userId: string): Promise<UserRow> {
  const user = await requireUser(deps, userId);
  await endAccess(deps, userId);
  await removeUser(deps, userId);
  return user;
}

/** The email of each of these users that has one (the audit log names users by id), read in each one's shard. */
export async function emailsOf(deps: Deps, userIds: string[]): Promise<Map<string, string>> {
  const ids = [...new Set(userIds)].slice(0, 100);
  if (ids.length === 0) return new Map();
  const byShard = new Map<number, string[]>();
  for (const id of ids) {
    const index = deps.shards.indexOfUser(id);
    byShard.set(index, [...(byShard.get(index) ?? []), id]);
  }
  const found = await eachShard(deps.shards, async (db, index) => {
    const part = byShard.get(index);
    if (!part) return [];
    return db.select({ id: users.id, email: users.email }).from(users).where(inArray(users.id, part)).all();
  });
  return new Map(found.flat().flatMap((row) => (row.email ? [[row.id, row.email] as const] : [])));
}
