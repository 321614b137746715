import { methodOf } from "../audit/events";
import { type UserRow, users } from "../db/schema";
import { AppError } from "../errors";
import { beforeUserCreated } from "../hooks/before-user-created";
import type { Deps } from "../http/deps";
import { admitSignUp, countSignUp } from "../http/sign-up-gate";
import { randomUuid } from "../lib/crypto";
import { isEmailAllowed } from "../lib/email-access";
import { gravatarUrl } from "../lib/gravatar";
import { type ResolvedSignUpOptions, resolveSignUpOptions, type SignUpOptions } from "./sign-up-options";
import { findUserByEmail, findUserByPhoneNumber, toWireUser } from "./users";

/**
 * Who asks for the user, and so which sign-up checks apply (contract §9, src/http/sign-up-gate.ts):
 * - `visitor`: someone signing up by themselves (the sign-up routes, anonymous sign-in, a magic link, an email or
 *   SMS code): Turnstile's `signup` challenge when guarded, and the `SIGNUPS` count;
 * - `ceremony`: the second step of a passkey sign-up, whose challenge was only issued to a request that passed them;
 * - `identity-provider`: a person an identity provider vouches for (a social sign-in's callback, which comes back
 *   through the browser and cannot carry a Turnstile token): the `SIGNUPS` count;
 * - `operator`: the admin API (its own authentication): none.
 */
export type Admission = "visitor" | "ceremony" | "identity-provider" | "operator";

export interface NewUser {
  admission: Admission;
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

/** The checks `admission` calls for, before anything is written. */
async function admit(deps: Deps, admission: Admission): Promise<void> {
  if (admission === "visitor") await admitSignUp(deps);
  else if (admission === "identity-provider") await countSignUp(deps);
}

/**
 * "A user is about to be created": the one place a user row is written, after the sign-up checks its admission
 * calls for (a route normally ran them before its work; they run here again for nothing then, or for the first time
 * if a route forgot, so a new way in fails closed), then the app's `BEFORE_USER_CREATED` hook for every way in but
 * the admin API (contract move-in §5.3: it sees the User resource about to exist and may refuse it, 403 `forbidden`
 * with its message; no answer refuses too, 503). `undefined` when the email is taken: the unique index decides, so
 * two racing requests cannot create the same account.
 */
export async function createUser(deps: Deps, input: NewUser): Promise<UserRow | undefined> {
  await admit(deps, input.admission);
  const now = deps.now();
  const { options } = input;
  const row = {
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
  };
  if (input.admission !== "operator") {
    await beforeUserCreated(deps, toWireUser({ ...row, phoneNumberVerified: false, activeMfaType: null }));
  }
  const created = await deps.db.insert(users).values(row).onConflictDoNothing().returning().get();
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
    () => createUser(deps, { admission: "visitor", email: address, options }),
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
    () => createUser(deps, { admission: "visitor", email: null, phoneNumber, options }),
    () => new AppError("phone-number-already-in-use"),
  );
}
