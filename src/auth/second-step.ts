import { and, asc, eq, ne, type SQL, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { mfaFactors, mfaTickets, securityKeys, type UserRow, users } from "../db/schema";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { sha256Hex } from "../lib/crypto";
import { accountKey } from "../rate-limits/account-key";
import { refuseOverLimit } from "../rate-limits/buckets";
import { smsCodeText } from "../sms/templates";
import { issueMfaTicket } from "./complete-sign-in";
import { issueOneTimeCode } from "./one-time-codes";
import { sendTemplate } from "./template-mail";
import { toWireUser } from "./users";

/**
 * Which second factor a first-factor sign-in must be followed by, whichever face it came through ("one account, two
 * faces": a factor added on one holds on the other). TOTP is the user's row's (`active_mfa_type = 'totp'`); phone,
 * `email` and `webauthn` factors are rows of `mfa_factors` (src/auth/mfa/factors.ts). `users.active_mfa_type` is the
 * user's choice among them (`totp`, `sms`, `email`, `webauthn`, issue 47), kept in step with the rows: a choice whose
 * factor goes falls back to the next factor the user holds, so the session check and the refresh read it with the
 * user's row as before, with no query of their own.
 */
export type SecondStep =
  | { kind: "totp" }
  | { kind: "phone"; factorId: string; phone: string }
  /** A code mailed to the user's verified address: the email factor's, or a step another feature asks for. */
  | { kind: "email" }
  | { kind: "webauthn" }
  | null;

/** A phone factor's code object (one per factor: a new challenge, from either face, replaces the code before). */
export const phoneFactorScope = (factorId: string) => `mfa-phone:${factorId}`;
/** GoTrue's `MFA_CHALLENGE_EXPIRY_DURATION` default, and the texted code's life. */
export const PHONE_CODE_LIFETIME_MS = 5 * 60 * 1000;
/**
 * The email step's code object: one per ticket (or Supabase challenge), named by its hash, so a code works only with
 * the ticket it was mailed for, and a right code typed into another sign-in's form is no guess at that one's.
 */
export const emailStepScope = (ticketHash: string) => `mfa-email:${ticketHash}`;
/** What the mails of the email step are counted under, per user (the `EMAIL` bucket). */
const emailStepBucketKey = (userId: string) => `mfa-email:${userId}`;
/** The mailed code's life, as the texted one's. */
export const EMAIL_CODE_LIFETIME_MS = 5 * 60 * 1000;

/** What the code of an email step is bound to: the ticket it was mailed for (its hash: object names are no secret). */
export const emailStepTag = (ticket: string) => sha256Hex(`mfa-email-ticket:${ticket}`);

const verifiedFactor = (userId: string, type: "phone" | "email" | "webauthn") =>
  sql`exists (SELECT 1 FROM ${mfaFactors} WHERE ${mfaFactors.userId} = ${userId} AND ${mfaFactors.factorType} = ${type} AND ${mfaFactors.status} = 'verified')`;

/**
 * `active_mfa_type` with TOTP off and no other choice standing: the first factor the user holds, in the order phone
 * (`sms`), email, `webauthn` factor (in SQL, so no write in between is missed).
 */
export const mfaTypeWithoutTotp = (userId: string): SQL =>
  sql`CASE WHEN ${verifiedFactor(userId, "phone")} THEN 'sms' WHEN ${verifiedFactor(userId, "email")} THEN 'email' WHEN ${verifiedFactor(userId, "webauthn")} THEN 'webauthn' END`;

/**
 * Whether the user's current choice still stands: TOTP (the row's own), a factor row of its kind, or for `webauthn`
 * a passkey too (a passkey chosen as the second step after a password, issue 47).
 */
const choiceStands = (userId: string): SQL =>
  sql`(${users.activeMfaType} = 'totp' OR (${users.activeMfaType} = 'sms' AND ${verifiedFactor(userId, "phone")}) OR (${users.activeMfaType} = 'email' AND ${verifiedFactor(userId, "email")}) OR (${users.activeMfaType} = 'webauthn' AND (${verifiedFactor(userId, "webauthn")} OR exists (SELECT 1 FROM ${securityKeys} WHERE ${securityKeys.userId} = ${userId}))))`;

/**
 * The statement that puts `active_mfa_type` back in step after a factor row changed (a factor verified or removed,
 * factors dropped by a reset, a passkey deleted); batched with the change itself. A choice that still stands stays.
 */
export function syncMfaType(db: ReturnType<Deps["shards"]["ofUser"]>, userId: string) {
  return db
    .update(users)
    .set({
      activeMfaType: sql`CASE WHEN ${choiceStands(userId)} THEN ${users.activeMfaType} ELSE ${mfaTypeWithoutTotp(userId)} END`,
    })
    .where(eq(users.id, userId));
}

/** The verified factor rows a second step is chosen from (TOTP aside: it is the user's row's), oldest first. */
export type SecondFactorRows = { id: string; type: string; phone: string | null }[];

/** The sign-in path's one read of `mfa_factors`, by the user's id alone (a sign-in starts it early: sign-in/early-reads.ts). */
export function secondFactorRowsOf(
  deps: Deps,
  userId: string,
  from: Pick<Db, "select"> = deps.shards.ofUser(userId),
): Promise<SecondFactorRows> {
  return from
    .select({ id: mfaFactors.id, type: mfaFactors.factorType, phone: mfaFactors.phone })
    .from(mfaFactors)
    .where(
      and(
        eq(mfaFactors.userId, userId),
        eq(mfaFactors.status, "verified"),
        ne(mfaFactors.factorType, "totp"),
      ),
    )
    .orderBy(asc(mfaFactors.createdAt), asc(mfaFactors.id))
    .all();
}

/**
 * The second step the user's sign-ins owe: TOTP first (no query), else the chosen factor, else the oldest verified
 * phone factor, the email factor, any verified `webauthn` factor. The sign-in path's one read of `mfa_factors`
 * (two for a passkey chosen as the step), or `rows` when it was started already; never on a session check.
 */
export async function secondStepOf(
  deps: Deps,
  user: UserRow,
  factorRows?: () => Promise<SecondFactorRows>,
): Promise<SecondStep> {
  if (user.activeMfaType === "totp") return { kind: "totp" };
  const db = deps.shards.ofUser(user.id);
  const rows = await (factorRows ? factorRows() : secondFactorRowsOf(deps, user.id));
  const phone = rows.find((r) => r.type === "phone" && r.phone);
  const steps = {
    sms: phone?.phone ? ({ kind: "phone", factorId: phone.id, phone: phone.phone } as const) : null,
    email: rows.some((r) => r.type === "email") ? ({ kind: "email" } as const) : null,
    webauthn: rows.some((r) => r.type === "webauthn") ? ({ kind: "webauthn" } as const) : null,
  };
  const chosen = user.activeMfaType;
  if (chosen === "sms" || chosen === "email" || chosen === "webauthn") {
    if (steps[chosen]) return steps[chosen];
    if (chosen === "webauthn") {
      const key = await db
        .select({ id: securityKeys.id })
        .from(securityKeys)
        .where(eq(securityKeys.userId, user.id))
        .limit(1)
        .get();
      if (key) return { kind: "webauthn" };
    }
  }
  return steps.sms ?? steps.email ?? steps.webauthn ?? null;
}

/**
 * A code for the phone factor, texted to its number (the same code object the Supabase face's challenge uses). Every
 * text to a factor's number counts in the `SMS` bucket for that number, under the key the SMS sign-in counts it
 * (`id:<E.164>`): a factor's number is whatever its account typed, unproven until its first code, so without the
 * count anyone could enroll a stranger's number on accounts of their own and have it texted from many addresses; and
 * someone holding a password could flood the owner's phone by signing in again and again (`admitEmailStep` counts
 * the email step's mails for the same reason).
 */
export async function textPhoneFactorCode(
  deps: Deps,
  user: UserRow,
  factor: { factorId: string; phone: string },
): Promise<void> {
  await refuseOverLimit(
    deps.env,
    deps.config.rateLimits,
    "SMS",
    { account: accountKey("phoneNumber", factor.phone) },
    deps.now(),
  );
  const code = await issueOneTimeCode(deps, phoneFactorScope(factor.factorId), PHONE_CODE_LIFETIME_MS);
  await deps.sms.send(factor.phone, smsCodeText(user.locale, deps.config.locales.default, code), {
    template: "mfa-sms",
    locale: user.locale,
    code,
    user: toWireUser(user),
  });
}

/**
 * Before an email step's mail: a verified address (an unproven one may be anyone's, and its code would prove nothing
 * of the owner), and the `EMAIL` bucket counted for the user (`mfa-email:<user>`), so someone holding the password
 * cannot make the owner's mailbox a flood by signing in again and again.
 */
async function admitEmailStep(deps: Deps, user: UserRow): Promise<string> {
  if (!user.email || !user.emailVerified) {
    throw new AppError("unverified-user", "the email second step needs a verified email address");
  }
  await refuseOverLimit(
    deps.env,
    deps.config.rateLimits,
    "EMAIL",
    { account: emailStepBucketKey(user.id) },
    deps.now(),
  );
  return user.email;
}

/**
 * Issues the second step's ticket for `step` (`mfaTotp:`, `mfaSms:`, `mfaEmail:`, `mfaWebauthn:`) and sends what it
 * asks for: a phone factor's code by SMS, the email step's code by mail (to the verified address only, six digits,
 * five minutes, in an object of this ticket's own). Every sign-in that owes a second step comes here (sign-in/pipeline.ts), and so
 * may a feature that asks a user without a factor for an email code (`{ kind: "email" }`): the ticket is completed
 * at the step's own route, whatever the user's factors.
 */
export async function issueSecondStep(
  deps: Deps,
  user: UserRow,
  step: NonNullable<SecondStep>,
): Promise<string> {
  const to = step.kind === "email" ? await admitEmailStep(deps, user) : null;
  const ticket = await issueMfaTicket(deps, user.id, step.kind);
  try {
    if (step.kind === "phone") await textPhoneFactorCode(deps, user, step);
    if (to !== null) await mailCode(deps, user, to, await emailStepTag(ticket));
  } catch (error) {
    // The code never left (the mail or SMS transport down: the caller answers 503). The ticket goes with it: nobody
    // holds it, and a row left until it expires is a step half begun (docs/decisions.md, issue 47's mail failures).
    await withdrawTicket(deps, user.id, ticket).catch(() => {});
    throw error;
  }
  return ticket;
}

const withdrawTicket = async (deps: Deps, userId: string, ticket: string) =>
  deps.shards
    .ofUser(userId)
    .delete(mfaTickets)
    .where(eq(mfaTickets.ticketHash, await sha256Hex(ticket)))
    .run();

async function mailCode(deps: Deps, user: UserRow, to: string, tag: string): Promise<void> {
  const code = await issueOneTimeCode(deps, emailStepScope(tag), EMAIL_CODE_LIFETIME_MS);
  await sendTemplate(deps, user, to, "mfa-email", { code });
}

/**
 * The email factor's code for a challenge of the Supabase face (src/auth/mfa/factors.ts): the same checks and mail as
 * the sign-in's step, the code in the object of `tag` (the challenge's hash).
 */
export async function mailEmailFactorCode(deps: Deps, user: UserRow, tag: string): Promise<void> {
  await mailCode(deps, user, await admitEmailStep(deps, user), tag);
}
