import type { UserRow } from "../../db/schema";
import { AppError } from "../../errors";
import { hashPassword } from "../../lib/password";
import { toE164 } from "../../lib/phone";
import { signInPasswordlessSms } from "../links";
import { createUser, removeUser } from "../new-users";
import {
  beginSignIn,
  readBeforeFirstFactor,
  type SignInResult,
  type SignInScope,
  settleFirstFactor,
} from "../sign-in";
import { resolveSignUpOptions, type SignUpOptions } from "../sign-up-options";
import { accountOfPhoneNumber } from "../users";
import { checkPasswordPolicy } from "./password-policy";
import { startPasswordSession } from "./password-session";
import { countAndHash } from "./sign-in";

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
 * As signInEmailPassword (accounts/sign-in.ts), by number, in the same trips: the account located beside the route's
 * checks and limit; its row (with several shards), its lockout count and what its session will need side by side,
 * the hash beside the count; then the session. The same answer and work for an unknown number and a wrong password;
 * a number not yet proven is refused to whoever knows the password (`unverified-user`).
 */
export async function signInPhonePassword(
  scope: SignInScope,
  input: { phoneNumber: string; password: string },
): Promise<SignInResult> {
  const { deps } = scope;
  const phoneNumber = e164(input.phoneNumber);
  // Located beside the route's limit (`SignInScope.counted`): a read, used only once the limit counted.
  const [, account] = await Promise.all([
    beginSignIn(scope, { method: "email-password", email: undefined }),
    accountOfPhoneNumber(deps.shards, phoneNumber),
    scope.counted,
  ]);
  const read = account.user();
  if (account.id) readBeforeFirstFactor(scope, account.id, account.readAt);
  const checked = countAndHash(scope, {
    identifier: `phone:${phoneNumber}`,
    userId: account.id,
    read,
    password: input.password,
    eligible: () => true,
  }).then(async (counted) => {
    const right = Boolean(counted.eligible && counted.check.ok);
    await counted.attempt.settle(right, counted.user);
    return { ...counted, right };
  });
  // The verdict goes to what was counted before it (the risk velocity's count is taken back for a wrong password).
  settleFirstFactor(
    scope,
    checked.then(({ right }) => right),
  );
  const { eligible: user, check, right } = await checked;
  if (!user || !right) throw new AppError("invalid-email-password");
  if (user.disabled) throw new AppError("disabled-user");
  if (!user.phoneNumberVerified) throw new AppError("unverified-user");
  return startPasswordSession(scope, user, input.password, check);
}
