import { eq } from "drizzle-orm";
import { isUniqueViolation } from "../../db/errors";
import { type UserRow, users } from "../../db/schema";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { toE164 } from "../../lib/phone";
import { onFaultPutBack, putBackWith } from "../../lib/put-back";
import { smsCodeText } from "../../sms/templates";
import { endOutstandingGrants } from "../credential-reset";
import { changeIdentifiers } from "../identifier-changes";
import { beginAttempt } from "../lockout";
import { type SignInResult, type SignInScope, startSession } from "../sign-in";
import { findUserById, findUserByPhoneNumber, toWireUser } from "../users";
import { issueOneTimeCode, redeemOneTimeCode, restoreOneTimeCode } from "./sent-codes";

/**
 * A signed-in user's new phone number (GoTrue's `updateUser({phone})` and `verifyOtp({type: 'phone_change'})`,
 * contract supabase.md §2): a code texted to the new number, and the number changes only when that code comes back,
 * so a typo cannot take the account's number away. The pending change is the code's own object (per new number, its
 * tag the user's id): no column holds it, and a newer request for the number replaces it. Single use, five tries,
 * five minutes, the lockout's count, as every texted code.
 */

const LIFETIME_MS = 5 * 60 * 1000;
const scopeOf = (phoneNumber: string) => `phone-change:${phoneNumber}`;

function e164(phoneNumber: string): string {
  const normalised = toE164(phoneNumber);
  if (!normalised)
    throw new AppError("invalid-request", "phone: must be a valid number in international form");
  return normalised;
}

/** Texts the new number its code; a number another account holds is refused. Answers the number in E.164. */
export async function requestPhoneChange(deps: Deps, userId: string, newNumber: string): Promise<string> {
  const phoneNumber = e164(newNumber);
  if (await findUserByPhoneNumber(deps.shards, phoneNumber))
    throw new AppError("phone-number-already-in-use");
  const user = await findUserById(deps.shards, userId);
  if (!user) throw new AppError("unauthorized");
  const code = await issueOneTimeCode(deps, scopeOf(phoneNumber), LIFETIME_MS, userId);
  await deps.sms.send(phoneNumber, smsCodeText(user.locale, deps.config.locales.default, code), {
    template: "phone-change-sms",
    locale: user.locale,
    code,
    user: toWireUser(user),
  });
  return phoneNumber;
}

/**
 * The code texted to the new number: the number becomes the account's, verified, and, the account's recovery channel
 * having changed, its other grants end (as a confirmed email change's do); the answer is a new session.
 *
 * A fault after the code was redeemed (the user's read, the directory, the row, the grants, the session) puts the code
 * back (`onFaultPutBack`): the 503's retry with the same code finishes the change, each step being safe to run again
 * (`changeNumber`). A refusal (the user gone or disabled, the number taken) keeps it spent.
 */
export async function confirmPhoneChange(
  scope: SignInScope,
  input: { phoneNumber: string; code: string },
): Promise<SignInResult> {
  const { deps } = scope;
  const phoneNumber = e164(input.phoneNumber);
  const attempt = await beginAttempt(
    deps,
    "sms-otp",
    { identifier: `phone-change:${phoneNumber}` },
    input.code,
  );
  const userId = await redeemOneTimeCode(deps, scopeOf(phoneNumber), input.code);
  // The count is the code's: settled before anything that can fail for a fault, so a right code's 503 leaves no
  // failure counted and each retry is forgiven as the first was; a person retrying is never locked out by them.
  await attempt.settle(userId !== null);
  if (!userId) throw new AppError("invalid-otp");
  const code = {
    putBack: putBackWith("one-time code", () => restoreOneTimeCode(deps, scopeOf(phoneNumber), input.code)),
  };
  return onFaultPutBack(code, async () => {
    const user = await findUserById(deps.shards, userId);
    if (!user) throw new AppError("invalid-otp");
    if (user.disabled) throw new AppError("disabled-user");
    const updated = await changeNumber(deps, user, phoneNumber);
    await endOutstandingGrants(deps, user.id);
    return startSession(scope, { user: updated, mfaGate: true });
  });
}

/**
 * The user's number made `phoneNumber`, in the directory and the row. Safe to run again after a partial run: a retry
 * that finds the number already the user's (the row written, a later step failed) claims it again, which keeps a claim
 * the user holds, and gives nothing back: the old number went at the first run, and giving back the new one (added
 * and removed at once) would leave it unclaimed, free for another shard's user. Audited once, when the row changes.
 */
async function changeNumber(deps: Deps, user: UserRow, phoneNumber: string): Promise<UserRow> {
  const previous = user.phoneNumber;
  const changing = previous !== phoneNumber;
  let updated: UserRow | undefined;
  try {
    updated = await changeIdentifiers(
      deps,
      user.id,
      {
        added: [{ kind: "phone", value: phoneNumber }],
        removed: previous && changing ? [{ kind: "phone", value: previous }] : [],
      },
      () =>
        deps.shards
          .ofUser(user.id)
          .update(users)
          .set({ phoneNumber, phoneNumberVerified: true, updatedAt: deps.now() })
          .where(eq(users.id, user.id))
          .returning()
          .get(),
      () => new AppError("phone-number-already-in-use"),
    );
  } catch (error) {
    // Someone took the number between the request and the confirmation (unique index).
    if (isUniqueViolation(error)) throw new AppError("phone-number-already-in-use");
    throw error;
  }
  if (!updated) throw new AppError("invalid-otp");
  if (changing)
    deps.audit({ type: "phone.change", userId: user.id, detail: { from: previous, to: phoneNumber } });
  return updated;
}
