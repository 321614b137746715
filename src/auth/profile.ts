import { eq } from "drizzle-orm";
import { type UserRow, users } from "../db/schema";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { signUpOptionsSchema } from "./sign-up-options";
import { requireRegisteredUser } from "./users";

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
