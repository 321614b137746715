import type { UserRow } from "../../db/schema";
import { AppError } from "../../errors";
import { hashPassword, verifyPassword } from "../../lib/password";
import { toE164 } from "../../lib/phone";
import { signInPasswordlessSms } from "../links";
import { beginAttempt, checkedBesideCount } from "../lockout";
import { createUser, removeUser } from "../new-users";
import { beginSignIn, type SignInResult, type SignInScope } from "../sign-in";
import { resolveSignUpOptions, type SignUpOptions } from "../sign-up-options";
import { findUserByPhoneNumber } from "../users";
import { checkPasswordPolicy } from "./password-policy";
import { startPasswordSession } from "./password-session";

/**
 * A phone number as a password's identifier (GoTrue's `signUp({phone, password})` and `signInWithPassword({phone,
 * password})`, contract supabase.md §2). The number must be proven before the password signs in: the sign-up texts a
 * code (the SMS sign-in's, `AUTH_SMS_PASSWORDLESS_ENABLED`), and `verifySignInPasswordlessSms` confirms the number
 * and starts the first session. Sessions are recorded as `email-password`: the factor is the password (the method's
 * name predates other identifiers; sign-in/method.ts never renames a stored value).
 */

function e164(phoneNumber: string): string {
  const normalised = toE164(phoneNumber);
  if (!normalised) {
    throw new AppError("invalid-request", "phone: must be a valid number in international form");
  }
  return normalised;
}

/** The account, with the number unverified and a code texted to it; no session until the number is proven. */
export async function signUpPhonePassword(
  scope: SignInScope,
  input: { phoneNumber: string; password: string; options?: SignUpOptions },
): Promise<UserRow> {
  const { deps } = scope;
  const { config } = deps;
  if (config.signUp.disabled) throw new AppError("signup-disabled");
  if (!config.passwordless.sms) throw new AppError("disabled-endpoint");
  const phoneNumber = e164(input.phoneNumber);
  await checkPasswordPolicy(deps, input.password);
  const user = await createUser(deps, {
    admission: "visitor",
    method: scope.method,
    email: null,
    phoneNumber,
    passwordHash: await hashPassword(input.password, config.passwordHashCost),
    options: resolveSignUpOptions(config, input.options, phoneNumber),
  });
  if (!user) throw new AppError("phone-number-already-in-use");
  try {
    await signInPasswordlessSms(deps, { phoneNumber }, "existing", "sign-up");
  } catch (error) {
    // Without its code the number could never be proven: undo the account so the sign-up can simply be retried.
    await removeUser(deps, user.id).catch(() => {});
    throw error;
  }
  return user;
}

/**
 * As signInEmailPassword (accounts/sign-in.ts), by number: the same answer and work for an unknown number and a
 * wrong password, the account's lockout counted before the password's verdict is used; a number not yet proven is
 * refused to whoever knows the password (`unverified-user`).
 */
export async function signInPhonePassword(
  scope: SignInScope,
  input: { phoneNumber: string; password: string },
): Promise<SignInResult> {
  const { deps } = scope;
  const { config } = deps;
  const phoneNumber = e164(input.phoneNumber);
  // The route's limit counted before anything is written or the password looked at (`SignInScope.counted`).
  await Promise.all([beginSignIn(scope, { method: "email-password", email: undefined }), scope.counted]);
  const user = await findUserByPhoneNumber(deps.shards, phoneNumber);
  // The hash runs while the count is in flight; its verdict is looked at once the count allowed the attempt.
  const { attempt, checked: check } = await checkedBesideCount(
    beginAttempt(deps, "password", { user, identifier: `phone:${phoneNumber}` }, input.password),
    () => verifyPassword(input.password, user?.passwordHash ?? null, config.passwordHashCost),
  );
  await attempt.settle(Boolean(user && check.ok));
  if (!user || !check.ok) throw new AppError("invalid-email-password");
  if (user.disabled) throw new AppError("disabled-user");
  if (!user.phoneNumberVerified) throw new AppError("unverified-user");
  return startPasswordSession(scope, user, input.password, check);
}
