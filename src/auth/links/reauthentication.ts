import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { accountKey } from "../../rate-limits/account-key";
import { refuseOverLimit } from "../../rate-limits/buckets";
import { smsCodeText } from "../../sms/templates";
import { beginAttempt } from "../lockout";
import { findUserById, toWireUser } from "../users";
import { checkOneTimeCode, issueOneTimeCode } from "./sent-codes";
import { sendCodeMail } from "./ticket-mail";

/**
 * A re-authentication code (GoTrue's `reauthenticate`, contract supabase.md §2): a signed-in user asks for a code
 * and presents it with a sensitive change (a password under `AUTH_REQUIRE_ELEVATED_CLAIM`), proving that the
 * person holding the session also reads the account's mailbox or phone. Sent to the address, or, for an account
 * without one, to the number, and only when that one is verified: an unproven address may be anyone's. One code per
 * user, five minutes, five tries, counted by the account's lockout like every other code.
 */

const LIFETIME_MS = 5 * 60 * 1000;

const scopeOf = (userId: string) => `reauthentication:${userId}`;

export async function sendReauthenticationCode(deps: Deps, userId: string): Promise<void> {
  const user = await findUserById(deps.shards, userId);
  if (!user) throw new AppError("unauthorized");
  // Counted per recipient as every other mail and text (contract §11): the route counts the client address, and a
  // session can ask from any address; a text to a number the account verified is still one the operator pays for.
  const count = (bucket: "EMAIL" | "SMS", field: "email" | "phoneNumber", to: string) =>
    refuseOverLimit(deps.env, deps.config.rateLimits, bucket, { account: accountKey(field, to) }, deps.now());
  if (user.email) {
    if (!user.emailVerified) throw new AppError("unverified-user");
    await count("EMAIL", "email", user.email);
    await sendCodeMail(
      deps,
      user,
      await issueOneTimeCode(deps, scopeOf(userId), LIFETIME_MS),
      "reauthentication",
    );
    return;
  }
  if (!user.phoneNumber || !user.phoneNumberVerified) {
    throw new AppError("invalid-request", "re-authentication needs a verified email address or phone number");
  }
  await count("SMS", "phoneNumber", user.phoneNumber);
  const code = await issueOneTimeCode(deps, scopeOf(userId), LIFETIME_MS);
  await deps.sms.send(user.phoneNumber, smsCodeText(user.locale, deps.config.locales.default, code), {
    template: "reauthentication-sms",
    locale: user.locale,
    code,
    user: toWireUser(user),
  });
}

/** The code sent by `sendReauthenticationCode`, once; anything else is 400 `invalid-otp`. */
export async function checkReauthenticationCode(deps: Deps, userId: string, code: string): Promise<void> {
  const user = await findUserById(deps.shards, userId);
  const factor = user?.email ? "email-otp" : "sms-otp";
  const attempt = await beginAttempt(deps, factor, { user }, code);
  const right = await checkOneTimeCode(deps, scopeOf(userId), code);
  await attempt.settle(right);
  if (!right) throw new AppError("invalid-otp");
}
