import { and, eq } from "drizzle-orm";
import { z } from "zod";
import type { Config } from "../config";
import { firstNearby } from "../db/compiled-read";
import { ownerOf, readsDirectory, shardOfEntry } from "../db/directory";
import { sessionDrizzle } from "../db/replica";
import { type UserRow, users } from "../db/schema";
import type { Shards } from "../db/shards";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import type { HasuraClaims } from "../signing-keys/jwt";
import { customClaimValues } from "./custom-claims";
import { userById, type WireUserRow, wireUserById } from "./hot-queries";
import type { ActiveMembership } from "./org-membership";

/** The User resource of contract §2: what every answer about a user carries, and its type. */
export const wireUserSchema = z
  .object({
    id: z.uuid(),
    createdAt: z.iso.datetime(),
    displayName: z.string(),
    avatarUrl: z.string(),
    locale: z.string(),
    email: z.string().optional(),
    emailVerified: z.boolean(),
    phoneNumber: z.string().optional().describe("E.164"),
    phoneNumberVerified: z.boolean(),
    defaultRole: z.string(),
    roles: z.array(z.string()),
    isAnonymous: z.boolean(),
    activeMfaType: z
      .enum(["totp", "sms", "email", "webauthn"])
      .nullable()
      .describe(
        "The second step a sign-in asks for: `totp` while TOTP is on, else the user's choice among `sms` (a phone " +
          "factor), `email` (a code to the verified address) and `webauthn` (a passkey or security key); null: none",
      ),
    metadata: z.record(z.string(), z.unknown()),
  })
  .meta({
    examples: [
      {
        id: "2c5fb4bd-5a43-4ae8-8e0b-0e2b1c2b6f0e",
        createdAt: "2026-11-23T10:00:00.000Z",
        displayName: "ana@example.com",
        avatarUrl: "",
        locale: "en",
        email: "ana@example.com",
        emailVerified: true,
        phoneNumberVerified: false,
        defaultRole: "user",
        roles: ["user", "me"],
        isAnonymous: false,
        activeMfaType: null,
        metadata: {},
      },
    ],
  });

export type WireUser = z.infer<typeof wireUserSchema>;

const MFA_TYPES = ["totp", "sms", "email", "webauthn"] as const;

/** The stored `active_mfa_type` as the wire says it (anything else, e.g. a value written by an older import: null). */
export const wireMfaType = (stored: string | null): WireUser["activeMfaType"] =>
  MFA_TYPES.find((type) => type === stored) ?? null;

export function toWireUser(user: WireUserRow): WireUser {
  return {
    id: user.id,
    createdAt: new Date(user.createdAt).toISOString(),
    displayName: user.displayName,
    avatarUrl: user.avatarUrl,
    locale: user.locale,
    ...(user.email ? { email: user.email } : {}),
    emailVerified: user.emailVerified,
    ...(user.phoneNumber ? { phoneNumber: user.phoneNumber } : {}),
    phoneNumberVerified: user.phoneNumberVerified,
    defaultRole: user.defaultRole,
    roles: user.roles,
    isAnonymous: user.isAnonymous,
    activeMfaType: wireMfaType(user.activeMfaType),
    metadata: user.metadata,
  };
}

/** The user's current row, from the primary of its shard: what a write or a decision about the user reads. */
export async function findUserById(shards: Shards, id: string): Promise<UserRow | undefined> {
  return userById.first(shards.d1OfUser(id), { id });
}

/**
 * The session check's read (`GET /user`): the User resource's columns only, by primary key, from a replica at least
 * as fresh as `bookmark` when one serves this location (docs/decisions.md, "Reads near the user").
 */
export async function findWireUserNearby(
  d1: D1Database,
  id: string,
  bookmark?: string | null,
): Promise<WireUserRow | undefined> {
  return firstNearby(d1, wireUserById, { id }, bookmark);
}

/** Marks the email or the phone number verified (a code or link sent there came back); returns the updated user. */
export async function markVerified(
  deps: Pick<Deps, "shards" | "now">,
  user: UserRow,
  field: "emailVerified" | "phoneNumberVerified",
): Promise<UserRow> {
  if (user[field]) return user;
  const updated = await deps.shards
    .ofUser(user.id)
    .update(users)
    .set({ [field]: true, updatedAt: deps.now() })
    .where(eq(users.id, user.id))
    .returning()
    .get();
  return updated ?? user;
}

/** The user of a phone number (E.164): the directory names the shard when there are several. */
export async function findUserByPhoneNumber(
  shards: Shards,
  phoneNumber: string,
): Promise<UserRow | undefined> {
  const db = await shardOfEntry(shards, { kind: "phone", value: phoneNumber });
  return db?.select().from(users).where(eq(users.phoneNumber, phoneNumber)).get();
}

/** The user of an email (any case): the directory names the shard when there are several. */
export async function findUserByEmail(shards: Shards, email: string): Promise<UserRow | undefined> {
  const address = email.toLowerCase();
  const db = await shardOfEntry(shards, { kind: "email", value: address });
  return db?.select().from(users).where(eq(users.email, address)).get();
}

/**
 * The account of an email or a phone number, located in the fewest waves (issue 48, "Round trips"): `id` as soon as it is known, `user()`
 * its row. With one shard the row is read at once (its id is the row's); with several the directory's owner names
 * the id first, and `user()` then reads the owner's row in its shard, so that what is keyed by the user (the lockout's
 * count, the session's reads) runs beside that read rather than after it. The row must still hold the email (the
 * number): a directory entry left stale (an email changed away whose release failed) finds no row.
 */
export interface LocatedAccount {
  id: string | undefined;
  user: () => Promise<UserRow | undefined>;
  /**
   * With one database, where the row was read: its database and the primary's bookmark after the read. The account's
   * other rows this sign-in reads next (sign-in/early-reads.ts) may then be served by a replica at least that fresh,
   * as they would be had they been read with the row.
   */
  readAt?: ReadAt;
}

/** A database and a bookmark of its primary (src/db/replica.ts). */
export interface ReadAt {
  d1: D1Database;
  bookmark: string | null;
}

export async function accountOfEmail(shards: Shards, email: string): Promise<LocatedAccount> {
  return accountOf(shards, { kind: "email", value: email.toLowerCase() });
}

/** As `accountOfEmail`, by a phone number (E.164): a password sign-in by number locates its account the same way. */
export function accountOfPhoneNumber(shards: Shards, phoneNumber: string): Promise<LocatedAccount> {
  return accountOf(shards, { kind: "phone", value: phoneNumber });
}

async function accountOf(
  shards: Shards,
  entry: { kind: "email" | "phone"; value: string },
): Promise<LocatedAccount> {
  const holds = entry.kind === "email" ? eq(users.email, entry.value) : eq(users.phoneNumber, entry.value);
  // One shard, or the directory of a deployment that ran one still being built: the home database holds every row.
  if (!readsDirectory(shards)) {
    // A session that starts at the primary, as the binding does, so that the answer comes with its bookmark.
    const session = shards.homeD1.withSession("first-primary");
    const row = await sessionDrizzle(session).select().from(users).where(holds).get();
    return {
      id: row?.id,
      user: () => Promise.resolve(row),
      readAt: { d1: shards.homeD1, bookmark: session.getBookmark() },
    };
  }
  const owner = await ownerOf(shards, entry);
  if (owner === undefined) return { id: undefined, user: () => Promise.resolve(undefined) };
  return {
    id: owner,
    user: () =>
      shards
        .ofUser(owner)
        .select()
        .from(users)
        .where(and(eq(users.id, owner), holds))
        .get(),
  };
}

/**
 * The claims the service decides itself (contract §5.1): custom claims never overwrite them. With `org`, the session's
 * organization and the user's role in it (contract organizations.md §1), which Hasura permissions can compare with.
 */
export function builtInClaims(user: WireUserRow, org?: ActiveMembership): HasuraClaims {
  return {
    "x-hasura-user-id": user.id,
    "x-hasura-default-role": user.defaultRole,
    "x-hasura-allowed-roles": user.roles,
    "x-hasura-user-is-anonymous": String(user.isAnonymous),
    ...(org ? { "x-hasura-org-id": org.orgId, "x-hasura-org-role": org.role } : {}),
  };
}

/**
 * The Hasura claims of contract §5.1, synchronously: the built-in claims, the custom claims of
 * `AUTH_JWT_CUSTOM_CLAIMS` resolved against the wire user (`wire`, when the caller has built it already) and encoded
 * as Nhost does (src/auth/custom-claims.ts), and `extra` last. Custom claims never override a built-in claim. When
 * the claims come from the app's data (`HASURA_GRAPHQL_GRAPHQL_URL`), this synchronous form has none: sessions get
 * theirs from token-claims.ts; OAuth2 tokens of the `graphql` scope go without (docs/hasura.md).
 */
export function hasuraClaims(
  user: WireUserRow,
  config: Config,
  extra: HasuraClaims = {},
  wire: WireUser = toWireUser(user),
): HasuraClaims {
  const custom = config.hasura.graphqlUrl
    ? {}
    : customClaimValues(config.tokens.customClaims, wire, config.tokens.customClaimDefaults);
  return { ...custom, ...builtInClaims(user), ...extra };
}

/** The caller's own user, who must be a registered one (anonymous users have no credentials to manage). */
export async function requireRegisteredUser(deps: Deps, userId: string) {
  const user = await findUserById(deps.shards, userId);
  if (!user) throw new AppError("unauthorized");
  if (user.isAnonymous) throw new AppError("forbidden-anonymous");
  return user;
}
