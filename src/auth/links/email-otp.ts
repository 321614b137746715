import { AppError } from "../../errors";
import { onFaultPutBack, putBackWith } from "../../lib/put-back";
import { proveEmail } from "../credential-reset";
import { beginAttempt } from "../lockout";
import { findOrCreateEmailUser, type PasswordlessMode, type PasswordlessRequest } from "../new-users";
import { beginSignIn, type SignInResult, type SignInScope, startSession } from "../sign-in";
import { findUserByEmail } from "../users";
import { checkOneTimeCode, issueOneTimeCode, restoreOneTimeCode } from "./sent-codes";
import { sendCodeMail } from "./ticket-mail";

const CODE_LIFETIME_MS = 10 * 60 * 1000;

const scopeOf = (email: string) => `email-otp:${email.toLowerCase()}`;

/** signInOTPEmail: mails a 6-digit code (10 min); creates the user on first use (signUpOTPEmail: only then). */
export async function signInOtpEmail(
  scope: SignInScope,
  request: PasswordlessRequest,
  mode: PasswordlessMode,
): Promise<void> {
  const { deps } = scope;
  if (!deps.config.passwordless.emailOtp) throw new AppError("disabled-endpoint");
  // Enforced SSO (organizations.md §2): no code is mailed that could only be refused.
  await beginSignIn(scope, { method: "email-otp", email: request.email });
  const { user } = await findOrCreateEmailUser(deps, request, mode, scope.method);
  if (!user || user.disabled) return;
  const code = await issueOneTimeCode(deps, scopeOf(request.email), CODE_LIFETIME_MS);
  await sendCodeMail(deps, user, code);
}

/**
 * verifySignInOTPEmail: wrong, expired, used or exhausted codes are all 400 `invalid-otp`. The code proves the
 * address (credential-reset.ts: a first proof wipes what was set up before it); with TOTP on it is the first
 * factor only. Counted by the account's lockout (auth/lockout/) before the code is looked at.
 */
export async function verifyOtpEmail(scope: SignInScope, email: string, otp: string): Promise<SignInResult> {
  const { deps } = scope;
  if (!deps.config.passwordless.emailOtp) throw new AppError("disabled-endpoint");
  const user = await findUserByEmail(deps.shards, email);
  // Beyond each code's own cap (5 tries), new codes asked for again and again are guesses at the account too.
  const attempt = await beginAttempt(deps, "email-otp", { user, identifier: `email:${email}` }, otp);
  const right = await checkOneTimeCode(deps, scopeOf(email), otp);
  await attempt.settle(right && user !== undefined);
  if (!right || !user) throw new AppError("invalid-otp");
  if (user.disabled) throw new AppError("disabled-user");
  // A fault from here on puts the code back: the 503's retry with the same code signs in.
  const code = { putBack: putBackWith("one-time code", () => restoreOneTimeCode(deps, scopeOf(email), otp)) };
  return onFaultPutBack(code, async () =>
    startSession(scope, { user: await proveEmail(deps, user, "inbox"), mfaGate: true }),
  );
}
