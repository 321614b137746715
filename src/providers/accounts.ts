import { and, asc, eq, inArray, sql } from "drizzle-orm";
import { QueryBuilder } from "drizzle-orm/sqlite-core";
import {
  conformingDisplayName,
  createUser,
  credentialsChanged,
  findUserByEmail,
  findUserById,
  type Method,
  proveEmail,
  resolveSignUpOptions,
  type SignUpOptions,
} from "../auth";
import type { Db } from "../db/client";
import { compileRead } from "../db/compiled-read";
import { claim, identityEntry, releaseEntries, shardOfEntry } from "../db/directory";
import { type UserRow, userProviders, users } from "../db/schema";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { emailField } from "../http/fields";
import { randomUuid } from "../lib/crypto";
import { isEmailAllowed } from "../lib/email-access";
import type { ProviderProfile } from "./profile";

/**
 * Who a provider's profile is in this service (contract §7, step 3–4), and the links between users and identities.
 */

/** The user `db` links the identity to. */
async function linkedUserIn(db: Db, provider: string, providerUserId: string): Promise<UserRow | undefined> {
  const row = await db
    .select({ user: users })
    .from(userProviders)
    .innerJoin(users, eq(users.id, userProviders.userId))
    .where(and(eq(userProviders.provider, provider), eq(userProviders.providerUserId, providerUserId)))
    .get();
  return row?.user;
}

/** The user of an identity: in the shard of the user the directory names for it (the only database with one). */
async function userOfIdentity(
  deps: Deps,
  provider: string,
  providerUserId: string,
): Promise<UserRow | undefined> {
  const db = await shardOfEntry(deps.shards, identityEntry(provider, providerUserId));
  return db && linkedUserIn(db, provider, providerUserId);
}

/**
 * Links the identity to `userId`. With several shards the directory decides first between two users, whichever
 * shards they live in: the identity is claimed for the user (src/db/directory.ts), then written to the user's shard;
 * the unique (provider, provider user id) index decides within a shard, and alone with one shard. An identity that
 * belongs to someone else is `provider-account-already-linked`.
 */
export async function linkIdentity(
  deps: Deps,
  userId: string,
  provider: string,
  providerUserId: string,
): Promise<void> {
  // The signed-in user may have been deleted or disabled since their token was issued.
  const user = await findUserById(deps.shards, userId);
  if (!user || user.disabled)
    throw new AppError("unauthorized", "the user to link to no longer exists or is disabled");
  const now = deps.now();
  const entry = identityEntry(provider, providerUserId);
  if (await claim(deps.shards, userId, [entry], now)) throw new AppError("provider-account-already-linked");
  const db = deps.shards.ofUser(userId);
  let inserted: { id: string } | undefined;
  try {
    inserted = await db
      .insert(userProviders)
      .values({ id: randomUuid(), userId, provider, providerUserId, createdAt: now, updatedAt: now })
      .onConflictDoNothing()
      .returning({ id: userProviders.id })
      .get();
  } catch (error) {
    // The claim goes back unless the user may hold the identity already (linked before, or unknown: the shard
    // failed). One left behind is harmless: its user does not hold the identity, so it is taken over once stale.
    const held = await linkedUserIn(db, provider, providerUserId).then(
      (owner) => owner?.id === userId,
      () => true,
    );
    if (!held) await releaseEntries(deps.shards, userId, [entry]).catch(() => {});
    throw error;
  }
  const owner = inserted ? user : await linkedUserIn(db, provider, providerUserId);
  if (owner?.id !== userId) throw new AppError("provider-account-already-linked");
  if (inserted) {
    await credentialsChanged(db, userId, now);
    deps.audit({ type: "provider.linked", userId, detail: { provider, providerUserId } });
  }
}

/**
 * The user a provider sign-in is for:
 * 1. the user this identity is linked to;
 * 2. else the user with the same email, **only when the provider says it verified the address** (an unverified
 *    provider email is anyone's claim: linking on it is an account takeover). If that account's own address was never
 *    proven, this is its first proof: `proveEmail` wipes whatever a stranger may have set up on it (password, keys,
 *    sessions — account pre-hijacking) before the identity is linked;
 * 3. else a new user with the request's sign-up options. An unverified provider email that another account already
 *    has is refused (`email-already-in-use`) rather than linked or duplicated.
 * Sign-up rules apply as everywhere: `AUTH_DISABLE_SIGNUP`, the email allow and block lists, disabled users.
 */
export async function userForProfile(
  deps: Deps,
  provider: string,
  profile: ProviderProfile,
  options: SignUpOptions,
  /** The way in a new user is created by (`provider:<name>`, `id-token`), for its `signup` event. */
  method: Method,
): Promise<UserRow> {
  const { config } = deps;
  const linked = await userOfIdentity(deps, provider, profile.id);
  if (linked) return linked;
  const email = conformingEmail(profile.email);
  if (email && !isEmailAllowed(email, config)) throw new AppError("invalid-email-password");
  const existing = email ? await findUserByEmail(deps.shards, email) : undefined;
  if (existing) {
    if (!profile.emailVerified) throw new AppError("email-already-in-use");
    const proven = await proveEmail(deps, existing, "inbox");
    await linkIdentity(deps, proven.id, provider, profile.id);
    return proven;
  }
  if (config.signUp.disabled) throw new AppError("signup-disabled");
  const resolved = resolveSignUpOptions(config, options, "");
  const created = await createUser(deps, {
    admission: "identity-provider",
    method,
    email: email ?? null,
    emailVerified: !!email && profile.emailVerified,
    avatarUrl: profile.avatarUrl,
    options: {
      ...resolved,
      // The provider's name follows the same rule as a name given at sign-up (markup characters out, 32 at most).
      displayName: options.displayName ?? (conformingDisplayName(profile.displayName ?? "") || email || ""),
      locale: options.locale ?? localeOf(config.locales.allowed, profile.locale) ?? resolved.locale,
    },
  });
  // The email was taken between the lookup and the insert: the next sign-in resolves it by step 2.
  if (!created) throw new AppError("email-already-in-use");
  await linkIdentity(deps, created.id, provider, profile.id);
  return created;
}

/**
 * The provider's address as an account's address, lower-cased; none when it is not one the sign-up would take
 * (`emailField`). Threat: `toLowerCase` maps a few non-ASCII letters to ASCII ones (the Kelvin sign U+212A becomes
 * `k`), so a provider account registered as `\u212Aate@example.com` would have found, and been proven into, the
 * account of `kate@example.com`. Such a person signs up without an address, as with a provider that shares none.
 */
function conformingEmail(address: string | undefined): string | undefined {
  if (address === undefined || !emailField.safeParse(address).success) return undefined;
  return address.toLowerCase();
}

/** The provider's locale (`en`, `en-US`, `fr_FR`) when its language is one the deployment allows. */
function localeOf(allowed: readonly string[], locale: string | undefined): string | undefined {
  const language = locale?.split(/[-_]/)[0]?.toLowerCase();
  return language && allowed.includes(language) ? language : undefined;
}

/** One of a user's linked identities, as its owner sees it. */
export interface LinkedIdentity {
  id: string;
  provider: string;
  providerUserId: string;
  createdAt: number;
}

/** The user's linked identities, oldest first. */
export function identitiesOf(deps: Deps, userId: string): Promise<LinkedIdentity[]> {
  return identitiesRead(deps.shards.ofUser(userId), [userId]).all();
}

const IDENTITY_COLUMNS = {
  userId: userProviders.userId,
  id: userProviders.id,
  provider: userProviders.provider,
  providerUserId: userProviders.providerUserId,
  createdAt: userProviders.createdAt,
};

/** The linked identities of `userIds` (all in the shard `db`), with their user, unexecuted: for a `db.batch`. */
export function identitiesRead(db: Db, userIds: readonly string[]) {
  return db
    .select(IDENTITY_COLUMNS)
    .from(userProviders)
    .where(
      userIds.length === 1
        ? eq(userProviders.userId, userIds[0]!)
        : inArray(userProviders.userId, [...userIds]),
    )
    .orderBy(asc(userProviders.createdAt), asc(userProviders.id));
}

/** One user's, its SQL built once (src/db/compiled-read.ts): for a hot request's batch. */
export const identitiesOfUser = compileRead<{ userId: string }, LinkedIdentity & { userId: string }>(
  new QueryBuilder()
    .select(IDENTITY_COLUMNS)
    .from(userProviders)
    .where(eq(userProviders.userId, sql.placeholder("userId")))
    .orderBy(asc(userProviders.createdAt), asc(userProviders.id)),
  IDENTITY_COLUMNS,
);

/**
 * Whether the user keeps a way to sign in without the identity `identityId`, as SQL on the user's shard: a password
 * (with the email it signs in with), a security key (WebAuthn on), another identity of a provider this deployment
 * still signs in with, or a passwordless code to an address or number they have (when that sign-in is on).
 */
function keepsAnotherWay(deps: Deps, userId: string, identityId: string) {
  const { config } = deps;
  const providers = [
    ...new Set([...Object.keys(config.providers.enabled), ...Object.keys(config.providers.idTokens)]),
  ];
  const ways = [
    sql`EXISTS (SELECT 1 FROM users u WHERE u.id = ${userId} AND u.password_hash IS NOT NULL AND u.email IS NOT NULL)`,
    ...(config.webauthn.enabled
      ? [sql`EXISTS (SELECT 1 FROM security_keys k WHERE k.user_id = ${userId})`]
      : []),
    ...(providers.length
      ? [
          sql`EXISTS (SELECT 1 FROM user_providers p WHERE p.user_id = ${userId} AND p.id <> ${identityId} AND p.provider IN (${sql.join(
            providers.map((name) => sql`${name}`),
            sql`, `,
          )}))`,
        ]
      : []),
    ...(config.passwordless.emailLink || config.passwordless.emailOtp
      ? [sql`EXISTS (SELECT 1 FROM users u WHERE u.id = ${userId} AND u.email IS NOT NULL)`]
      : []),
    ...(config.passwordless.sms
      ? [sql`EXISTS (SELECT 1 FROM users u WHERE u.id = ${userId} AND u.phone_number IS NOT NULL)`]
      : []),
  ];
  return sql`(${sql.join(ways, sql` OR `)})`;
}

/**
 * Unlinks one of the user's identities (the account center), unless it is their last way to sign in: that check is
 * part of the one DELETE, so two unlinks at once (of the last two identities) can't both go through and leave an
 * account nobody can enter. `not-found` when the user has no identity with that id (someone else's included).
 */
export async function unlinkIdentity(
  deps: Deps,
  userId: string,
  identityId: string,
): Promise<"unlinked" | "not-found" | "last-way"> {
  const db = deps.shards.ofUser(userId);
  const mine = and(eq(userProviders.id, identityId), eq(userProviders.userId, userId));
  const removed = await db
    .delete(userProviders)
    .where(and(mine, keepsAnotherWay(deps, userId, identityId)))
    .returning()
    .get();
  if (!removed) {
    const exists = await db.select({ id: userProviders.id }).from(userProviders).where(mine).get();
    return exists ? "last-way" : "not-found";
  }
  await credentialsChanged(db, userId, deps.now());
  // The identity may be linked again, to this user or another: its directory entry goes (best effort: a stale
  // one is taken over once its user no longer holds the identity, src/db/directory.ts).
  await releaseEntries(deps.shards, userId, [identityEntry(removed.provider, removed.providerUserId)]).catch(
    () => {},
  );
  deps.audit({
    type: "provider.unlinked",
    userId,
    detail: { provider: removed.provider, providerUserId: removed.providerUserId },
  });
  return "unlinked";
}
