import { AppError } from "../errors";
import { sendCodeMail } from "./account-mail";
import { proveEmail } from "./credential-reset";
import type { Deps } from "./deps";
import { completeSignIn, type SignInResult } from "./mfa-sign-in";
import { checkOneTimeCode, issueOneTimeCode } from "./one-time-codes";
import { findOrCreateEmailUser, type PasswordlessMode, type PasswordlessRequest } from "./user-factory";
import { findUserByEmail } from "./users";

const CODE_LIFETIME_MS = 10 * 60 * 1000;

const scopeOf = (email: string) => `email-otp:${email.toLowerCase()}`;

/** signInOTPEmail: mails a 6-digit code (10 min); creates the user on first use (signUpOTPEmail: only then). */
export async function signInOtpEmail(
  deps: Deps,
  request: PasswordlessRequest,
  mode: PasswordlessMode,
): Promise<void> {
  if (!deps.config.AUTH_OTP_EMAIL_ENABLED) throw new AppError("disabled-endpoint");
  const { user } = await findOrCreateEmailUser(deps, request, mode);
  if (!user || user.disabled) return;
  const code = await issueOneTimeCode(deps, scopeOf(request.email), CODE_LIFETIME_MS);
  await sendCodeMail(deps, user, code);
}

/**
 * verifySignInOTPEmail: wrong, expired, used or exhausted codes are all 400 `invalid-otp`. The code proves the
 * address (credential-reset.ts: a first proof wipes what was set up before it); with TOTP on it is the first
 * factor only.
 */
export async function verifyOtpEmail(
  deps: Deps,
  email: string,
  otp: string,
  userAgent?: string,
): Promise<SignInResult> {
  if (!deps.config.AUTH_OTP_EMAIL_ENABLED) throw new AppError("disabled-endpoint");
  if (!(await checkOneTimeCode(deps, scopeOf(email), otp))) throw new AppError("invalid-otp");
  const user = await findUserByEmail(deps.db, email);
  if (!user) throw new AppError("invalid-otp");
  if (user.disabled) throw new AppError("disabled-user");
  return completeSignIn(deps, await proveEmail(deps, user, "inbox"), userAgent);
}
