import { eq } from "drizzle-orm";
import { type UserRow, users } from "../db/schema";
import { AppError } from "../errors";
import { randomUuid } from "../lib/crypto";
import { isEmailAllowed } from "../lib/email-access";
import { hashPassword } from "../lib/password";
import type { Deps } from "./deps";
import { sendVerificationMail } from "./email-verification";
import { createSession, type Session } from "./sessions";
import { resolveSignUpOptions, type SignUpOptions } from "./sign-up-options";

export interface SignUpEmailPasswordInput {
  email: string;
  password: string;
  options?: SignUpOptions;
}

/**
 * signUpEmailPassword, checks in the contract's order: signup disabled → allow/block lists → password length →
 * options → duplicate email. The duplicate check is the INSERT itself (unique index), so two racing sign-ups
 * cannot both create the account.
 */
export async function signUpEmailPassword(
  deps: Deps,
  input: SignUpEmailPasswordInput,
  userAgent?: string,
): Promise<{ session: Session | null }> {
  const { config } = deps;
  const email = input.email.toLowerCase();
  if (config.AUTH_DISABLE_SIGNUP) throw new AppError("signup-disabled");
  if (!isEmailAllowed(email, config)) throw new AppError("invalid-email-password");
  if (input.password.length < config.AUTH_PASSWORD_MIN_LENGTH) {
    throw new AppError(
      "password-too-short",
      `password must be at least ${config.AUTH_PASSWORD_MIN_LENGTH} characters`,
    );
  }
  // The breached-password check (AUTH_PASSWORD_HIBP_ENABLED) belongs here, between length and options.
  const options = resolveSignUpOptions(config, input.options, email);

  const now = deps.now();
  const user: UserRow | undefined = await deps.db
    .insert(users)
    .values({
      id: randomUuid(),
      createdAt: now,
      updatedAt: now,
      disabled: config.AUTH_DISABLE_NEW_USERS,
      displayName: options.displayName,
      locale: options.locale,
      email,
      passwordHash: await hashPassword(input.password),
      defaultRole: options.defaultRole,
      roles: options.allowedRoles,
      metadata: options.metadata,
    })
    .onConflictDoNothing()
    .returning()
    .get();
  if (!user) throw new AppError("email-already-in-use");

  const verificationRequired = config.AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED && !user.emailVerified;
  if (verificationRequired) {
    try {
      await sendVerificationMail(deps, user, options.redirectTo);
    } catch (error) {
      // Without its mail the account could never be verified: undo it so that the sign-up can simply be retried.
      await deps.db.delete(users).where(eq(users.id, user.id));
      throw error;
    }
  }
  if (verificationRequired || user.disabled) return { session: null };
  return { session: await createSession(deps, user, userAgent) };
}
