import { and, eq, isNull, ne, or } from "drizzle-orm";
import { mfaFactors, securityKeys, users } from "../../db/schema";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { mfaTypeWithoutTotp } from "../second-step";
import { requireRegisteredUser } from "../users";
import { elevationSatisfied } from "../webauthn";

/**
 * The user's choice of second step beyond TOTP (issue 47; `POST /user/mfa` with `activeMfaType` `sms`, `email` or
 * `webauthn`, and the account center's choice): which factor a sign-in after a password asks for.
 * - `email`: a code to the user's email address, which must be verified (an unproven address may be anyone's): the
 *   choice makes the user's `email` factor (a row of `mfa_factors`, listed by the Supabase face too).
 * - `sms`: a phone factor the user verified (added through the Supabase API).
 * - `webauthn`: a passkey or security key of the user's, or a verified `webauthn` factor.
 * TOTP keeps its own rule (a code to turn it on or off, totp-setup.ts): while it is on it is the step, and another
 * choice is refused until it is turned off with its code. Choosing among the factors the user holds is the bearer's,
 * as a password change is (the elevated claim when `AUTH_REQUIRE_ELEVATED_CLAIM` asks for it).
 */

export type MfaChoice = "sms" | "email" | "webauthn";

async function holds(deps: Deps, userId: string, choice: Exclude<MfaChoice, "email">): Promise<boolean> {
  const db = deps.shards.ofUser(userId);
  const factor = await db
    .select({ id: mfaFactors.id })
    .from(mfaFactors)
    .where(
      and(
        eq(mfaFactors.userId, userId),
        eq(mfaFactors.factorType, choice === "sms" ? "phone" : "webauthn"),
        eq(mfaFactors.status, "verified"),
      ),
    )
    .limit(1)
    .get();
  if (factor || choice === "sms") return factor !== undefined;
  const key = await db
    .select({ id: securityKeys.id })
    .from(securityKeys)
    .where(eq(securityKeys.userId, userId))
    .limit(1)
    .get();
  return key !== undefined;
}

/** `active_mfa_type` set to `value` unless TOTP was turned on meanwhile (it stays the step). */
const setChoice = (db: ReturnType<Deps["shards"]["ofUser"]>, userId: string, value: SQLValue) =>
  db
    .update(users)
    .set({ activeMfaType: value })
    .where(and(eq(users.id, userId), or(isNull(users.activeMfaType), ne(users.activeMfaType, "totp"))));

type SQLValue = string | null | ReturnType<typeof mfaTypeWithoutTotp>;

/**
 * How the caller knows it is the person: the API's bearer (`claims`, held to the elevated claim as configured), or a
 * caller that confirmed them itself (the account center's recent confirmation, `confirmed`).
 */
export type ChoiceCaller = { sub: string; confirmed?: boolean };

async function checkedUser(deps: Deps, claims: ChoiceCaller) {
  const user = await requireRegisteredUser(deps, claims.sub);
  if (user.activeMfaType === "totp") {
    throw new AppError("totp-already-active", "TOTP is the second step: turn it off with a code first");
  }
  const confirmed =
    claims.confirmed === true ||
    (await elevationSatisfied(deps, claims as Parameters<typeof elevationSatisfied>[1]));
  if (!confirmed) {
    throw new AppError(
      "unauthorized",
      "elevated permission required: verify with a security key first (POST /elevate/webauthn)",
    );
  }
  return user;
}

/** Makes `choice` the user's second step (see above); 400 `mfa-type-not-found` when the user holds no such factor. */
export async function chooseSecondStep(
  deps: Deps,
  claims: { sub: string },
  choice: MfaChoice,
): Promise<void> {
  if (!deps.config.mfa.enabled) throw new AppError("disabled-endpoint");
  const user = await checkedUser(deps, claims);
  const db = deps.shards.ofUser(user.id);
  if (choice !== "email") {
    if (!(await holds(deps, user.id, choice))) {
      throw new AppError("mfa-type-not-found", `no verified ${choice} factor to make the second step`);
    }
    await setChoice(db, user.id, choice);
    deps.audit({ type: "mfa.enabled", userId: user.id, detail: { type: choice } });
    return;
  }
  if (!user.email || !user.emailVerified) {
    throw new AppError("unverified-user", "the email second step needs a verified email address");
  }
  const now = deps.now();
  // One email factor per user; an existing one stays (its id is what the Supabase face lists).
  const existing = await db
    .select({ id: mfaFactors.id })
    .from(mfaFactors)
    .where(and(eq(mfaFactors.userId, user.id), eq(mfaFactors.factorType, "email")))
    .get();
  const factor = {
    id: crypto.randomUUID(),
    userId: user.id,
    factorType: "email",
    friendlyName: null,
    status: "verified",
    createdAt: now,
    updatedAt: now,
  };
  if (existing) await setChoice(db, user.id, "email");
  else await db.batch([db.insert(mfaFactors).values(factor), setChoice(db, user.id, "email")]);
  deps.audit({ type: "mfa.enabled", userId: user.id, detail: { type: "email" } });
}

/**
 * Turns off a second step that is not TOTP: the email factor goes and the choice with it; a phone or `webauthn`
 * factor the user still holds then becomes the step (they are removed where they were added: the Supabase API).
 * False when there was nothing to turn off here (the caller answers as for TOTP not being on).
 */
export async function dropSecondStepChoice(deps: Deps, claims: ChoiceCaller): Promise<boolean> {
  const user = await requireRegisteredUser(deps, claims.sub);
  if (user.activeMfaType === null || user.activeMfaType === "totp") return false;
  if (user.activeMfaType === "sms") return false;
  await checkedUser(deps, claims);
  const db = deps.shards.ofUser(user.id);
  await db.batch([
    db.delete(mfaFactors).where(and(eq(mfaFactors.userId, user.id), eq(mfaFactors.factorType, "email"))),
    // A passkey chosen as the step is no factor row: dropping the choice is enough.
    setChoice(db, user.id, mfaTypeWithoutTotp(user.id)),
  ]);
  deps.audit({ type: "mfa.disabled", userId: user.id, detail: { type: user.activeMfaType } });
  return true;
}
