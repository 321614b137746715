import { eq } from "drizzle-orm";
import { users } from "../db/schema";
import { AppError } from "../errors";
import { codeHash, generateCode } from "../lib/one-time-code";
import { sendCodeMail } from "./account-mail";
import type { Deps } from "./deps";
import { createSession, type Session } from "./sessions";
import { findOrCreateEmailUser, type PasswordlessRequest } from "./user-factory";
import { findUserByEmail } from "./users";

const CODE_LIFETIME_MS = 10 * 60 * 1000;

function challenge(deps: Deps, scope: string) {
  return deps.env.CODE_CHALLENGES.get(deps.env.CODE_CHALLENGES.idFromName(scope));
}

const scopeOf = (email: string) => `email-otp:${email.toLowerCase()}`;

/** signInOTPEmail: mails a 6-digit code (10 min); creates the user on first use (signUpOTPEmail: only then). */
export async function signInOtpEmail(
  deps: Deps,
  request: PasswordlessRequest,
  newUserOnly = false,
): Promise<void> {
  if (!deps.config.AUTH_OTP_EMAIL_ENABLED) throw new AppError("disabled-endpoint");
  const { user } = await findOrCreateEmailUser(deps, request, newUserOnly);
  if (user.disabled) return;
  const code = generateCode();
  const scope = scopeOf(request.email);
  await challenge(deps, scope).issue(
    await codeHash(deps.config.AUTH_ENCRYPTION_KEY!, scope, code),
    deps.now() + CODE_LIFETIME_MS,
  );
  await sendCodeMail(deps, user, code);
}

/** verifySignInOTPEmail: wrong, expired, used or exhausted codes are all 400 `invalid-otp`. */
export async function verifyOtpEmail(
  deps: Deps,
  email: string,
  otp: string,
  userAgent?: string,
): Promise<{ session: Session }> {
  if (!deps.config.AUTH_OTP_EMAIL_ENABLED) throw new AppError("disabled-endpoint");
  const scope = scopeOf(email);
  const outcome = await challenge(deps, scope).verify(
    await codeHash(deps.config.AUTH_ENCRYPTION_KEY!, scope, otp),
    deps.now(),
  );
  if (outcome !== "ok") throw new AppError("invalid-otp");
  const user = await findUserByEmail(deps.db, email);
  if (!user) throw new AppError("invalid-otp");
  if (user.disabled) throw new AppError("disabled-user");
  const verified = user.emailVerified
    ? user
    : ((await deps.db
        .update(users)
        .set({ emailVerified: true, updatedAt: deps.now() })
        .where(eq(users.id, user.id))
        .returning()
        .get()) ?? user);
  return { session: await createSession(deps, verified, userAgent) };
}
