import type { UserRow } from "../../db/schema";
import { AppError } from "../../errors";
import type { Impersonation } from "../../signing-keys/jwt";
import { noticeDevice } from "../devices";
import { type Session, writeSession } from "../new-sessions";
import type { ActiveMembership } from "../org-membership";
import type { PasswordRehash } from "../password-rehash";
import { issueSecondStep, type SecondStep, secondFactorRowsOf, secondStepOf } from "../second-step";
import { readEarly, secondFactorsKey } from "./early-reads";
import { beforeFirstFactorChecks, sessionGates } from "./hooks";
import type { Method } from "./method";
import type { SignInScope } from "./scope";

/**
 * Every sign-in, whatever its flow, in two steps:
 * 1. `beginSignIn`, before the first factor is checked (the password, the code, the provider's answer): the features'
 *    checks (enforced SSO's, registered by src/sso/) refuse the address first, so their answer says nothing of the
 *    credentials (no password oracle).
 * 2. `startSession`, once the user is known: the checks again only for an address they have not passed in this
 *    request (a provider's account linked to another address, a code sent to a number), the second-factor gate, the
 *    session, and what follows it (the audit, the new-device notice and the lockout's device memory).
 * The method is the flow's (its scope's, ./scope.ts), never read from a URL.
 */

/** What a sign-in answers (contract §2, SessionPayload with `mfa`). */
export interface SignInResult {
  session: Session | null;
  mfa: { ticket: string } | null;
}

/** Runs the checks before the first factor for `email`, as a sign-in by `method` (the first factor's). */
export async function beginSignIn(
  scope: SignInScope,
  { method = scope.method, email }: { method?: Method | null; email: string | null | undefined },
): Promise<void> {
  await check(scope, method, email, true);
}

async function check(
  scope: SignInScope,
  method: Method | null,
  email: string | null | undefined,
  firstFactor: boolean,
): Promise<void> {
  const address = email?.toLowerCase() ?? "";
  // At the session the checks passed for this address before its first factor are not asked again (one SSO query).
  if (!firstFactor && scope.checked.has(address)) return;
  for (const refuse of beforeFirstFactorChecks()) await refuse(scope.deps, { method, email });
  scope.checked.add(address);
}

export interface SessionStart {
  user: UserRow;
  /** How it is recorded, when not the scope's (an enterprise sign-in, the hosted pages' session for their app). */
  method?: Method | null;
  /** The organization the session starts in (an enterprise sign-in: the connection's org, its membership made). */
  org?: ActiveMembership;
  /** An elevation (a passkey just proven): the first access token carries `x-hasura-auth-elevated`. */
  elevated?: boolean;
  /**
   * The end of a sign-in by one factor (a password, an email or SMS code, a mailed link's PKCE code, a provider, an
   * enterprise sign-in): with a second factor (TOTP, a phone, the email step, a passkey or `webauthn` key) the factor
   * was only the first, and the answer is the step's ticket (`mfaTotp:`, `mfaSms:`, `mfaEmail:`, `mfaWebauthn:`)
   * instead of a session. It stays so if AUTH_MFA_ENABLED is later switched off: a user's second factor is not
   * dropped by a configuration change.
   */
  mfaGate?: boolean;
  /** A password sign-in's stored hash replaced by one at the current cost, in the session's batch (../password-rehash.ts). */
  passwordRehash?: PasswordRehash;
}

/**
 * An impersonation's session (contract operators.md §1; src/impersonation/ checks who may start one): the one session
 * the pipeline writes with no sign-in before it. Nobody showed a factor, so no check before the first factor applies
 * (the operator is not the user signing in: enforced SSO and the lockout judge the user's own sign-ins), and nothing
 * that follows a sign-in runs (no `signin.success`, no new-device mail: the user was not signed in; the caller audits
 * the start, and the user is mailed at the end).
 */
export function startImpersonatedSession(
  deps: SignInScope["deps"],
  user: UserRow,
  { impersonation, userAgent }: { impersonation: Impersonation; userAgent?: string },
): Promise<Session> {
  const method: Method = "impersonation";
  return writeSession(deps, user, { method, userAgent, dpopJkt: null, impersonation });
}

/** The first factors that are the mailbox: the email step after one of them would prove the same thing again. */
const MAILBOX_METHODS: ReadonlySet<Method | null> = new Set<Method | null>([
  "email-link",
  "pkce-link",
  "email-otp",
]);

/**
 * The step a first factor by `method` owes: the user's, except the email step after a mailbox first factor (a code
 * mailed to the inbox that just signed in proves nothing more: that sign-in is the one factor it is, recorded so).
 */
const owedStep = (step: SecondStep, method: Method | null): SecondStep =>
  step?.kind === "email" && MAILBOX_METHODS.has(method) ? null : step;

/**
 * The gates' decision for the sign-in of `user` (strictest first: one refusal refuses, with its own error). A
 * `challenge` is met by the second step the user owes anyway; without one, see `challengeWithoutFactor`.
 */
async function passGates(
  scope: SignInScope,
  user: UserRow,
  method: Method | null,
): Promise<"allow" | "challenge"> {
  let challenged = false;
  for (const gate of sessionGates()) {
    const verdict = await gate(scope, { user, method });
    if (verdict.decision === "refuse") throw verdict.error;
    if (verdict.decision === "challenge") challenged = true;
  }
  return challenged ? "challenge" : "allow";
}

/**
 * A gate's challenge for a user with no second factor of their own: a code mailed to their verified address, the
 * email step's ticket (`mfaEmail:`, completed at `POST /signin/mfa/email`), as Clerk's "client trust" asks a new
 * device. Refused (403 `risk-refused`) rather than let through unasked where no code can be sent: an address never
 * proven (its code would prove nothing of the owner), or a face that steps sessions up later (GoTrue's has no step
 * for an account without a factor).
 */
async function challengeWithoutFactor(scope: SignInScope, user: UserRow): Promise<SignInResult> {
  if (scope.secondFactorLater || !user.email || !user.emailVerified) {
    throw new AppError(
      "risk-refused",
      "this sign-in needs a second step this account cannot be asked for here",
    );
  }
  return { session: null, mfa: { ticket: await issueSecondStep(scope.deps, user, { kind: "email" }) } };
}

export async function startSession(
  scope: SignInScope,
  start: SessionStart & { mfaGate: true },
): Promise<SignInResult>;
export async function startSession(
  scope: SignInScope,
  start: SessionStart & { mfaGate?: false },
): Promise<{ session: Session; mfa: null }>;
export async function startSession(scope: SignInScope, start: SessionStart): Promise<SignInResult> {
  const { deps } = scope;
  const { user, org, elevated = false, mfaGate = false } = start;
  const method = start.method === undefined ? scope.method : start.method;
  if (mfaGate && user.activeMfaType === "totp" && user.totpSecret === null) {
    throw new AppError("mfa-reset-required");
  }
  // Any verified factor, whichever face added it (../second-step.ts): TOTP, a phone, the email step, a key. Read
  // beside the gates' own reads (one wave, not two); awaited below, so a failure answers there, never unhandled.
  // Started already when the flow knew the account before its first factor (./early-reads.ts): then taken, not read.
  const stepRead = mfaGate
    ? secondStepOf(deps, user, () =>
        readEarly(scope, secondFactorsKey(user.id), () => secondFactorRowsOf(deps, user.id)),
      )
    : Promise.resolve(null);
  stepRead.catch(() => {});
  // After the first factor, before anything is given: the gates (src/risk/), once the address's checks passed. A
  // challenge of a mailbox first factor (a link, an email code) is met by it: a mailed code would prove it again.
  let gate: "allow" | "challenge" = "allow";
  if (mfaGate) {
    await check(scope, method, user.email, false);
    gate = await passGates(scope, user, method);
  }
  const step = mfaGate ? owedStep(await stepRead, method) : null;
  if (gate === "challenge" && !step && !MAILBOX_METHODS.has(method))
    return challengeWithoutFactor(scope, user);
  // GoTrue's way (the Supabase face): a session short of the second factor, marked so (secondFactorPending).
  const secondFactorPending = scope.secondFactorLater === true && step !== null;
  if (step && !scope.secondFactorLater) {
    // The first factor is refused before its ticket (the second step is checked by none: its first factor was).
    await check(scope, method, user.email, false);
    // The ticket names the step; its code (a phone's, the email step's) is sent with it (mfa/ completes each).
    return { session: null, mfa: { ticket: await issueSecondStep(deps, user, step) } };
  }
  await check(scope, method, user.email, false);
  const extraClaims = elevated ? { "x-hasura-auth-elevated": user.id } : undefined;
  const session = await writeSession(deps, user, {
    method,
    userAgent: scope.userAgent,
    extraClaims,
    org,
    dpopJkt: scope.dpopJkt,
    minter: scope.minter,
    secondFactorPending,
    alongside: scope.alongside,
    passwordRehash: start.passwordRehash,
  });
  if (elevated) {
    deps.audit({ type: "elevation", userId: user.id, detail: { method } });
  } else if (!scope.signUp) {
    deps.audit({
      type: "signin.success",
      userId: user.id,
      detail: { method: method ?? "other", sessionId: session.refreshTokenId },
    });
  }
  noticeDevice(scope, user, method);
  return { session, mfa: null };
}
