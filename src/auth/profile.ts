import { and, eq } from "drizzle-orm";
import { type UserRow, users } from "../db/schema";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { metadataSchema } from "../lib/json-metadata";
import { signUpOptionsSchema } from "./sign-up-options";
import { findUserById, requireRegisteredUser } from "./users";

/**
 * A user's own profile (the account center, contract §13): the display name and the locale, under the rules every
 * other way of setting them follows. The Nhost API has no self-service profile operation (apps write these through
 * GraphQL); the rules are sign-up's (`SignUpOptions`: the display-name characters and length) and the admin API's for
 * a locale set after sign-up (one of `AUTH_LOCALE_ALLOWED_LOCALES`, else `locale-not-allowed`).
 */

const displayNameSchema = signUpOptionsSchema.shape.displayName.unwrap();

export interface ProfilePatch {
  displayName?: string;
  locale?: string;
}

export async function updateOwnProfile(deps: Deps, userId: string, patch: ProfilePatch): Promise<UserRow> {
  await requireRegisteredUser(deps, userId);
  if (patch.displayName !== undefined) {
    const checked = displayNameSchema.safeParse(patch.displayName);
    if (!checked.success) {
      throw new AppError("invalid-request", `displayName: ${checked.error.issues[0]?.message ?? "invalid"}`);
    }
  }
  if (patch.locale !== undefined && !deps.config.locales.allowed.includes(patch.locale)) {
    throw new AppError("locale-not-allowed");
  }
  const updated = await deps.shards
    .ofUser(userId)
    .update(users)
    .set({ ...patch, updatedAt: deps.now() })
    .where(eq(users.id, userId))
    .returning()
    .get();
  if (!updated) throw new AppError("unauthorized");
  return updated;
}

/**
 * The user's own metadata, merged as GoTrue merges `user_metadata` (the Supabase face's `updateUser({ data })`):
 * each top-level key given replaces the stored one, a key given as `null` goes. Anonymous users may keep data too.
 * The merged object keeps the bounds of every metadata (../lib/json-metadata.ts). Compare-and-set on `updatedAt`,
 * retried: two updates at once each keep their keys, neither overwrites the other's with a stale read.
 */
export async function mergeOwnMetadata(
  deps: Deps,
  userId: string,
  changes: Record<string, unknown>,
): Promise<UserRow> {
  const db = deps.shards.ofUser(userId);
  for (let attempt = 0; attempt < 3; attempt++) {
    const user = await findUserById(deps.shards, userId);
    if (!user) throw new AppError("unauthorized");
    const merged: Record<string, unknown> = { ...user.metadata };
    for (const [key, value] of Object.entries(changes)) {
      if (value === null) delete merged[key];
      else merged[key] = value;
    }
    const bounded = metadataSchema.safeParse(merged);
    if (!bounded.success) {
      throw new AppError("invalid-request", `data: ${bounded.error.issues[0]?.message ?? "invalid"}`);
    }
    const now = Math.max(deps.now(), user.updatedAt + 1);
    const updated = await db
      .update(users)
      .set({ metadata: bounded.data, updatedAt: now })
      .where(and(eq(users.id, userId), eq(users.updatedAt, user.updatedAt)))
      .returning()
      .get();
    if (updated) return updated;
  }
  throw new AppError("too-many-requests", "the user changed too often at once: try again");
}
