import { and, eq } from "drizzle-orm";
import {
  conformingDisplayName,
  createUser,
  findUserByEmail,
  findUserById,
  proveEmail,
  resolveSignUpOptions,
  type SignUpOptions,
} from "../auth";
import { type UserRow, userProviders, users } from "../db/schema";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { randomUuid } from "../lib/crypto";
import { isEmailAllowed } from "../lib/email-access";
import type { ProviderProfile } from "./profile";
import type { ProviderName } from "./registry";

/**
 * Who a provider's profile is in this service (contract §7, step 3–4), and the links between users and identities.
 */

async function userOfIdentity(
  deps: Deps,
  provider: ProviderName,
  providerUserId: string,
): Promise<UserRow | undefined> {
  const row = await deps.db
    .select({ user: users })
    .from(userProviders)
    .innerJoin(users, eq(users.id, userProviders.userId))
    .where(and(eq(userProviders.provider, provider), eq(userProviders.providerUserId, providerUserId)))
    .get();
  return row?.user;
}

/**
 * Links the identity to `userId`. The unique (provider, provider user id) index decides between two racing links;
 * an identity that belongs to someone else is `provider-account-already-linked`.
 */
export async function linkIdentity(
  deps: Deps,
  userId: string,
  provider: ProviderName,
  providerUserId: string,
): Promise<void> {
  // The signed-in user may have been deleted or disabled since their token was issued.
  const user = await findUserById(deps.db, userId);
  if (!user || user.disabled)
    throw new AppError("unauthorized", "the user to link to no longer exists or is disabled");
  const now = deps.now();
  const inserted = await deps.db
    .insert(userProviders)
    .values({ id: randomUuid(), userId, provider, providerUserId, createdAt: now, updatedAt: now })
    .onConflictDoNothing()
    .returning({ id: userProviders.id })
    .get();
  const owner = await userOfIdentity(deps, provider, providerUserId);
  if (owner?.id !== userId) throw new AppError("provider-account-already-linked");
  if (inserted) deps.audit({ type: "provider.linked", userId, detail: { provider, providerUserId } });
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
  provider: ProviderName,
  profile: ProviderProfile,
  options: SignUpOptions,
): Promise<UserRow> {
  const { config } = deps;
  const linked = await userOfIdentity(deps, provider, profile.id);
  if (linked) return linked;
  const email = profile.email?.toLowerCase();
  if (email && !isEmailAllowed(email, config)) throw new AppError("invalid-email-password");
  const existing = email ? await findUserByEmail(deps.db, email) : undefined;
  if (existing) {
    if (!profile.emailVerified) throw new AppError("email-already-in-use");
    const proven = await proveEmail(deps, existing, "inbox");
    await linkIdentity(deps, proven.id, provider, profile.id);
    return proven;
  }
  if (config.AUTH_DISABLE_SIGNUP) throw new AppError("signup-disabled");
  const resolved = resolveSignUpOptions(config, options, "");
  const created = await createUser(deps, {
    admission: "identity-provider",
    email: email ?? null,
    emailVerified: !!email && profile.emailVerified,
    avatarUrl: profile.avatarUrl,
    options: {
      ...resolved,
      // The provider's name follows the same rule as a name given at sign-up (markup characters out, 32 at most).
      displayName: options.displayName ?? (conformingDisplayName(profile.displayName ?? "") || email || ""),
      locale:
        options.locale ?? localeOf(config.AUTH_LOCALE_ALLOWED_LOCALES, profile.locale) ?? resolved.locale,
    },
  });
  // The email was taken between the lookup and the insert: the next sign-in resolves it by step 2.
  if (!created) throw new AppError("email-already-in-use");
  await linkIdentity(deps, created.id, provider, profile.id);
  return created;
}

/** The provider's locale (`en`, `en-US`, `fr_FR`) when its language is one the deployment allows. */
function localeOf(allowed: readonly string[], locale: string | undefined): string | undefined {
  const language = locale?.split(/[-_]/)[0]?.toLowerCase();
  return language && allowed.includes(language) ? language : undefined;
}
