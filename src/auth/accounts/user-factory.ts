import { methodOf } from "../../audit/events";
import { type UserRow, users } from "../../db/schema";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { randomUuid } from "../../lib/crypto";
import { isEmailAllowed } from "../../lib/email-access";
import { gravatarUrl } from "../../lib/gravatar";
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
  /** A picture the user already has (an identity provider's); else Gravatar when enabled. */
  avatarUrl?: string;
}

/**
 * Inserts a user; `undefined` when the email is taken. The unique index decides, so two racing requests cannot
 * create the same account.
 */
export async function insertUser(deps: Deps, input: NewUser): Promise<UserRow | undefined> {
  const now = deps.now();
  const { options } = input;
  const created = await deps.db
    .insert(users)
    .values({
      id: input.id ?? randomUuid(),
      createdAt: now,
      updatedAt: now,
      disabled: deps.config.AUTH_DISABLE_NEW_USERS,
      displayName: options.displayName,
      avatarUrl: input.avatarUrl || (input.email ? await gravatarUrl(input.email, deps.config) : ""),
      locale: options.locale,
      email: input.email,
      phoneNumber: input.phoneNumber ?? null,
      emailVerified: input.emailVerified ?? false,
      emailVerifiedAt: input.emailVerified ? now : null,
      passwordHash: input.passwordHash ?? null,
      defaultRole: options.defaultRole,
      roles: options.allowedRoles,
      isAnonymous: input.isAnonymous ?? false,
      metadata: options.metadata,
    })
    .onConflictDoNothing()
    .returning()
    .get();
  if (created) {
    deps.audit({
      type: "signup",
      userId: created.id,
      detail: { method: methodOf(deps.path) ?? "other", anonymous: created.isAnonymous },
    });
  }
  return created;
}

/** A passwordless request (magic link, email OTP): the address, and the sign-up options for a new user. */
export interface PasswordlessRequest {
  email: string;
  options?: SignUpOptions;
}

/**
 * How a passwordless flow treats the address: `sign-in` finds or creates the account (contract §3.2, "creates the
 * user if absent"); `sign-up` (the `/signup/…` variants of client.md §15) refuses an address that has one.
 */
export type PasswordlessMode = "sign-in" | "sign-up";

/**
 * Finds the user of a passwordless flow, or creates it with the sign-up checks. `null` means "answer OK and send
 * nothing": a sign-in for an address without an account while `AUTH_DISABLE_SIGNUP` is on. Answering
 * `signup-disabled` there would tell anyone which addresses have accounts.
 */
async function findOrCreate(
  deps: Deps,
  mode: PasswordlessMode,
  find: () => Promise<UserRow | undefined>,
  create: () => Promise<UserRow | undefined>,
  taken: () => AppError,
): Promise<UserRow | null> {
  const existing = await find();
  if (existing && mode === "sign-up") throw taken();
  if (existing) return existing;
  if (deps.config.AUTH_DISABLE_SIGNUP) {
    if (mode === "sign-up") throw new AppError("signup-disabled");
    return null;
  }
  const inserted = await create();
  if (!inserted && mode === "sign-up") throw taken();
  // Lost a race with another first use of the same identifier: that request's user is this one.
  const user = inserted ?? (await find());
  if (!user) throw new AppError("internal-server-error", undefined, "user vanished while being created");
  return user;
}

/** The user of a magic link or email code (see `findOrCreate`), and the resolved redirect. */
export async function findOrCreateEmailUser(
  deps: Deps,
  request: PasswordlessRequest,
  mode: PasswordlessMode,
): Promise<{ user: UserRow | null; redirectTo: string }> {
  const { config } = deps;
  const address = request.email.toLowerCase();
  if (!isEmailAllowed(address, config)) throw new AppError("invalid-email-password");
  const options = resolveSignUpOptions(config, request.options, address);
  const user = await findOrCreate(
    deps,
    mode,
    () => findUserByEmail(deps.db, address),
    () => insertUser(deps, { email: address, options }),
    () => new AppError("email-already-in-use"),
  );
  return { user, redirectTo: options.redirectTo };
}

/** The user of an SMS sign-in or sign-up (see `findOrCreate`); the display name defaults to the number. */
export async function findOrCreatePhoneUser(
  deps: Deps,
  phoneNumber: string,
  signUpOptions: SignUpOptions | undefined,
  mode: PasswordlessMode,
): Promise<UserRow | null> {
  const options = resolveSignUpOptions(deps.config, signUpOptions, phoneNumber);
  return findOrCreate(
    deps,
    mode,
    () => findUserByPhoneNumber(deps.db, phoneNumber),
    () => insertUser(deps, { email: null, phoneNumber, options }),
    () => new AppError("phone-number-already-in-use"),
  );
}
