import { and, eq } from "drizzle-orm";
import { type UserRow, users } from "../../db/schema";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { toE164 } from "../../lib/phone";
import { onFaultPutBack, putBackWith } from "../../lib/put-back";
import { smsCodeText } from "../../sms/templates";
import { endOutstandingGrants } from "../credential-reset";
import { beginAttempt } from "../lockout";
import { findOrCreatePhoneUser, type PasswordlessMode, removeUser } from "../new-users";
import { type SignInResult, type SignInScope, startSession } from "../sign-in";
import type { SignUpOptions } from "../sign-up-options";
import { findUserByPhoneNumber, markVerified, toWireUser } from "../users";
import { issueOneTimeCode, redeemOneTimeCode, restoreOneTimeCode } from "./sent-codes";

const CODE_LIFETIME_MS = 5 * 60 * 1000;
const scopeOf = (phoneNumber: string) => `sms-otp:${phoneNumber}`;

function e164(phoneNumber: string): string {
  const normalised = toE164(phoneNumber);
  if (!normalised) {
    throw new AppError("invalid-request", "phoneNumber: must be a valid number in international form (+…)");
  }
  return normalised;
}

/**
 * signInPasswordlessSms: a 6-digit code by SMS (5 min); creates the user on first use. signUpPasswordlessSms
 * (client.md §15, `mode` "sign-up") refuses a number that has an account: 409 `phone-number-already-in-use`.
 *
 * A code that cannot be sent (the provider refusing, or failing for now: 503) undoes the user this request made for
 * it, as a sign-up whose verification mail fails does: the retry starts afresh instead of meeting
 * `phone-number-already-in-use`. The code itself stays in its object until the retry's code replaces it or it
 * expires: it reached no one, unless the provider took the text and only its answer was lost.
 */
export async function signInPasswordlessSms(
  deps: Deps,
  input: { phoneNumber: string; options?: SignUpOptions },
  mode: PasswordlessMode,
  /** `sign-up`: the code confirms the number of a sign-up with a password (accounts/phone-password.ts). */
  purpose?: "sign-up",
): Promise<void> {
  if (!deps.config.passwordless.sms) throw new AppError("disabled-endpoint");
  const phoneNumber = e164(input.phoneNumber);
  const { user, created } = await findOrCreatePhoneUser(deps, phoneNumber, input.options, mode);
  if (!user || user.disabled) return;
  try {
    const code = await issueOneTimeCode(deps, scopeOf(phoneNumber), CODE_LIFETIME_MS, purpose);
    await deps.sms.send(phoneNumber, smsCodeText(user.locale, deps.config.locales.default, code), {
      template: "signin-passwordless-sms",
      locale: user.locale,
      code,
      user: toWireUser(user),
    });
  } catch (error) {
    // If D1 refuses the undo too, the user stays, whole: the next request for the number finds it.
    if (created) await removeUser(deps, user.id).catch(() => {});
    throw error;
  }
}

/**
 * verifySignInPasswordlessSms: the code proves the number, which is marked verified. With TOTP active the code is
 * the first factor only: `{session: null, mfa: {ticket}}` as for a password (contract §2, SessionPayload).
 */
export async function verifySignInPasswordlessSms(
  scope: SignInScope,
  input: { phoneNumber: string; otp: string },
): Promise<SignInResult> {
  const { deps } = scope;
  if (!deps.config.passwordless.sms) throw new AppError("disabled-endpoint");
  const phoneNumber = e164(input.phoneNumber);
  const user = await findUserByPhoneNumber(deps.shards, phoneNumber);
  // The account's lockout (auth/lockout/), before the code is looked at: fresh codes do not buy fresh guesses.
  const attempt = await beginAttempt(
    deps,
    "sms-otp",
    { user, identifier: `phone:${phoneNumber}` },
    input.otp,
  );
  const purpose = await redeemOneTimeCode(deps, scopeOf(phoneNumber), input.otp);
  await attempt.settle(purpose !== null && user !== undefined);
  if (purpose === null || !user) throw new AppError("invalid-otp");
  if (user.disabled) throw new AppError("disabled-user");
  // A fault from here on puts the code back: the 503's retry with the same code signs in (each step is idempotent).
  const code = {
    putBack: putBackWith("one-time code", () => restoreOneTimeCode(deps, scopeOf(phoneNumber), input.otp)),
  };
  return onFaultPutBack(code, async () => {
    const proven = purpose === "sign-up" ? user : await dropUnprovenPassword(deps, user);
    return startSession(scope, {
      user: await markVerified(deps, proven, "phoneNumberVerified"),
      mfaGate: true,
    });
  });
}

/**
 * The phone's account pre-hijacking (credential-reset.ts `proveEmail` for addresses): someone signs up a number that
 * is not theirs with a password and waits; its owner later signs in with a texted code. A first proof of the number
 * by a sign-in code (not the sign-up's own confirmation) drops a password set before the number was proven, and
 * everything issued under it, so the one who chose it does not come along.
 */
async function dropUnprovenPassword(deps: Deps, user: UserRow): Promise<UserRow> {
  // A proven address vouches for the password (`proveEmail` ran at its proof): only a number's own account is at stake.
  if (user.phoneNumberVerified || !user.passwordHash || user.emailVerified) return user;
  const wiped = await deps.shards
    .ofUser(user.id)
    .update(users)
    .set({ passwordHash: null, passwordChangedAt: deps.now(), updatedAt: deps.now() })
    .where(and(eq(users.id, user.id), eq(users.phoneNumberVerified, false), eq(users.emailVerified, false)))
    .returning()
    .get();
  if (!wiped) return user;
  await endOutstandingGrants(deps, user.id);
  return wiped;
}
