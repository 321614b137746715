import type { UserRow } from "../../db/schema";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { onFaultPutBack } from "../../lib/put-back";
import type { SecondStepKind } from "../complete-sign-in";
import type { Session } from "../new-sessions";
import { checkOneTimeCode } from "../one-time-codes";
import { emailStepScope, emailStepTag, phoneFactorScope, secondStepOf } from "../second-step";
import { type Method, type SignInScope, startSession } from "../sign-in";
import { acceptEmailCode, acceptPhoneCode, acceptSecondFactor } from "./second-factor";
import { consumeTicket, takeTicketAttempt, ticketUser } from "./step-tickets";

export { MAX_MFA_ATTEMPTS } from "./step-tickets";

/** Every ticket whose step is a code: the hosted pages' one code form takes any of them. */
const CODE_STEPS = ["totp", "phone", "email"] as const satisfies readonly SecondStepKind[];

/**
 * The user a second-step ticket stands for while it can still be used (not expired, tries left), or null; nothing is
 * spent. The hosted pages' code step reads it to speak the user's own language (`locale`), as the account center does.
 */
export async function mfaTicketUser(deps: Deps, ticket: string): Promise<UserRow | null> {
  return (await ticketUser(deps, ticket, CODE_STEPS))?.user ?? null;
}

/** How each code step's session is recorded (`mfa-sms`: aal2 on the Supabase face too), unless the route names its own. */
const STEP_METHOD: Record<(typeof CODE_STEPS)[number], Method> = {
  totp: "mfa-totp",
  phone: "mfa-sms",
  email: "mfa-email",
};

/**
 * A code step completed: one attempt taken from the ticket (./step-tickets.ts), the code checked as the ticket's step
 * asks, and the ticket consumed by a DELETE … RETURNING (of two requests racing with good codes, one gets the
 * session).
 * - `mfaTotp:`: a TOTP code of the user's secret, once (or a recovery code, once).
 * - `mfaSms:`: the code texted at the first step to the user's phone factor.
 * - `mfaEmail:`: the code mailed at the first step for this very ticket (a code mailed for another ticket is wrong).
 * Each under the user's guess guard and the account's lockout.
 */
type CodeStep = (typeof CODE_STEPS)[number];

async function verifyCodeStep(
  scope: SignInScope,
  input: { ticket: string; otp: string },
  kinds: readonly CodeStep[],
): Promise<{ session: Session; step: CodeStep }> {
  const { deps } = scope;
  const taken = await takeTicketAttempt(deps, input.ticket, kinds);
  const { user } = taken;
  const kind = taken.kind as (typeof CODE_STEPS)[number];
  let right: boolean;
  if (kind === "email") {
    // Whatever the user's factors: the step was asked for (a factor, or another feature's challenge) and its code
    // mailed with the ticket (../second-step.ts).
    const scope = emailStepScope(await emailStepTag(input.ticket));
    right = await acceptEmailCode(deps, user, () => checkOneTimeCode(deps, scope, input.otp));
  } else {
    // A TOTP or phone step is the user's current factor's, read again: a factor removed since the ticket is no step.
    const step = await secondStepOf(deps, user);
    if (step?.kind === "totp" && kind === "totp") {
      right = await acceptSecondFactor(deps, user, input.otp);
    } else if (step?.kind === "phone" && (kind === "phone" || kind === "totp")) {
      right = await acceptPhoneCode(
        deps,
        user,
        () => checkOneTimeCode(deps, phoneFactorScope(step.factorId), input.otp),
        true,
      );
    } else {
      throw new AppError("invalid-ticket");
    }
  }
  if (!right) throw new AppError("invalid-totp");
  const consumed = await consumeTicket(taken);
  const method = scope.method === "mfa-totp" ? STEP_METHOD[kind] : undefined;
  return onFaultPutBack(consumed, async () => ({
    session: (await startSession(scope, { user, method })).session,
    step: kind,
  }));
}

/**
 * verifySignInMfaTotp (contract §3.4): an `mfaTotp:` ticket and a TOTP or recovery code. An `mfaSms:` ticket is taken
 * here too, with its texted code: the Nhost SDK knows this route only, and a phone factor (added through the Supabase
 * API) answered here before the tickets had their own prefixes.
 */
export async function verifySignInMfaTotp(
  scope: SignInScope,
  input: { ticket: string; otp: string },
): Promise<{ session: Session }> {
  return { session: (await verifyCodeStep(scope, input, ["totp", "phone"])).session };
}

/** `POST /signin/mfa/sms` (issue 47): an `mfaSms:` ticket and the code texted with it. */
export async function verifySignInMfaSms(
  scope: SignInScope,
  input: { ticket: string; otp: string },
): Promise<{ session: Session }> {
  return { session: (await verifyCodeStep(scope, input, ["phone"])).session };
}

/** `POST /signin/mfa/email` (issue 47): an `mfaEmail:` ticket and the code mailed with it. */
export async function verifySignInMfaEmail(
  scope: SignInScope,
  input: { ticket: string; otp: string },
): Promise<{ session: Session }> {
  return { session: (await verifyCodeStep(scope, input, ["email"])).session };
}

/** The hosted pages' code step: whichever code the ticket asks for, and which it was. */
export function verifySignInMfaCode(
  scope: SignInScope,
  input: { ticket: string; otp: string },
): Promise<{ session: Session; step: CodeStep }> {
  return verifyCodeStep(scope, input, CODE_STEPS);
}
