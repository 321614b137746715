import { type UserRow, users } from "../db/schema";
import { AppError } from "../errors";
import { randomUuid } from "../lib/crypto";
import { isEmailAllowed } from "../lib/email-access";
import { gravatarUrl } from "../lib/gravatar";
import type { Deps } from "./deps";
import { type ResolvedSignUpOptions, resolveSignUpOptions, type SignUpOptions } from "./sign-up-options";
import { findUserByEmail, findUserByPhoneNumber } from "./users";

export interface NewUser {
  /** Set when the id was promised before the user exists (the WebAuthn user handle); random otherwise. */
  id?: string;
  email: string | null;
  phoneNumber?: string;
  passwordHash?: string | null;
  options: ResolvedSignUpOptions;
  isAnonymous?: boolean;
  emailVerified?: boolean;
}

/**
 * Inserts a user; `undefined` when the email is taken. The unique index decides, so two racing requests cannot
 * create the same account.
 */
export async function insertUser(deps: Deps, input: NewUser): Promise<UserRow | undefined> {
  const now = deps.now();
  const { options } = input;
  return deps.db
    .insert(users)
    .values({
      id: input.id ?? randomUuid(),
      createdAt: now,
      updatedAt: now,
      disabled: deps.config.AUTH_DISABLE_NEW_USERS,
      displayName: options.displayName,
      avatarUrl: input.email ? await gravatarUrl(input.email, deps.config) : "",
      locale: options.locale,
      email: input.email,
      phoneNumber: input.phoneNumber ?? null,
      emailVerified: input.emailVerified ?? false,
      passwordHash: input.passwordHash ?? null,
      defaultRole: options.defaultRole,
      roles: options.allowedRoles,
      isAnonymous: input.isAnonymous ?? false,
      metadata: options.metadata,
    })
    .onConflictDoNothing()
    .returning()
    .get();
}

/** A passwordless request (magic link, email OTP): the address, and the sign-up options for a new user. */
export interface PasswordlessRequest {
  email: string;
  options?: SignUpOptions;
}

/**
 * The user of a passwordless flow (magic link, email OTP): found by email, or created on first use with the sign-up
 * checks (contract §3.2, "creates the user if absent"). With `newUserOnly` (the `/signup/…` variants) an existing
 * address is `409 email-already-in-use`. Returns the user and the resolved redirect.
 */
export async function findOrCreateEmailUser(
  deps: Deps,
  request: PasswordlessRequest,
  newUserOnly = false,
): Promise<{ user: UserRow; redirectTo: string }> {
  const { config } = deps;
  const address = request.email.toLowerCase();
  if (!isEmailAllowed(address, config)) throw new AppError("invalid-email-password");
  const options = resolveSignUpOptions(config, request.options, address);
  const existing = await findUserByEmail(deps.db, address);
  if (existing && newUserOnly) throw new AppError("email-already-in-use");
  if (existing) return { user: existing, redirectTo: options.redirectTo };
  if (config.AUTH_DISABLE_SIGNUP) throw new AppError("signup-disabled");
  const inserted = await insertUser(deps, { email: address, options });
  if (!inserted && newUserOnly) throw new AppError("email-already-in-use");
  // Lost a race with another first use of the same address: that request's user is this one.
  const user = inserted ?? (await findUserByEmail(deps.db, address));
  if (!user) throw new AppError("internal-server-error", undefined, "user vanished while being created");
  return { user, redirectTo: options.redirectTo };
}

/**
 * The user of an SMS sign-in: found by phone number (E.164), or created on first use with the sign-up checks
 * (contract §3.2); the display name defaults to the number.
 */
export async function findOrCreatePhoneUser(
  deps: Deps,
  phoneNumber: string,
  signUpOptions: SignUpOptions | undefined,
): Promise<UserRow> {
  const options = resolveSignUpOptions(deps.config, signUpOptions, phoneNumber);
  const existing = await findUserByPhoneNumber(deps.db, phoneNumber);
  if (existing) return existing;
  if (deps.config.AUTH_DISABLE_SIGNUP) throw new AppError("signup-disabled");
  const user =
    (await insertUser(deps, { email: null, phoneNumber, options })) ??
    (await findUserByPhoneNumber(deps.db, phoneNumber));
  if (!user) throw new AppError("internal-server-error", undefined, "user vanished while being created");
  return user;
}
