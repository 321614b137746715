import type { UserRow } from "../../db/schema";
import type { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import type { Session } from "../new-sessions";
import { addSignUpCheck, type SignUpCheck } from "../sign-up-checks";
import type { Method } from "./method";
import type { SignInScope } from "./scope";

/**
 * What other features add to every sign-in (src/runtime/ registers the `signInHooks` each feature declares): auth
 * knows none of them by name. A check before the first factor refuses by throwing an `AppError` (enforced SSO's
 * `sso-required`, src/sso/); it runs before any password, code or key is checked, so its answer says nothing of the
 * credentials (no password oracle), and again when the session's user has another address than the one checked.
 */
export type SignInCheck = (
  deps: Pick<Deps, "db" | "config">,
  /** `method` null: a proof that starts no sign-in of its own (a re-authentication, an elevation). */
  attempt: { method: Method | null; email: string | null | undefined },
) => Promise<void>;

/**
 * A password sign-in whose password no hash here answers for (a user moved in without one, an email with no
 * account) may be checked where that password is still kept, by the feature that knows where
 * (src/password-migration/). Asked on every password sign-in by email (accounts/sign-in.ts), after the lockout took
 * its count, with `user` the account of the email (any, even one the allow-list refuses): the feature decides where
 * it takes part. `null`: it does not, and the sign-in goes on as without it.
 */
export type KeptPasswordCheck = (
  scope: SignInScope,
  attempt: { email: string; password: string; user: UserRow | undefined },
) => Promise<KeptPasswordVerdict | null>;

/**
 * The password is wrong; or right for `user`, who now holds it hashed here (the sign-in goes on with it); or right
 * for an email that had no account, and the sign-up that made one started its `session`.
 */
export type KeptPasswordVerdict =
  | { verified: false }
  | { verified: true; user: UserRow }
  | { verified: true; session: Session };

/**
 * What a gate says of a sign-in whose first factor was right, before its session (src/risk/'s risk-aware sign-in):
 * let it through; ask a second step first (the user's own second factor, else an email code); or refuse it with the
 * gate's own error. A gate never sees the credentials, only who is signing in and how.
 */
export type GateDecision =
  | { decision: "allow" }
  | { decision: "challenge" }
  | { decision: "refuse"; error: AppError };

/**
 * A check after the first factor, before the session (./pipeline.ts `startSession`, on every sign-in by a first
 * factor). It runs beside the read of the user's second factors (one wave, issue 48's "Round trips"), so it is not
 * told whether there is one: a challenge is met by the user's own factor when there is, else by an email code.
 */
export type SessionGate = (
  scope: SignInScope,
  attempt: { user: UserRow; method: Method | null },
) => Promise<GateDecision>;

/**
 * What a `SessionGate` will need, started as soon as the account signing in is known, beside the lockout's count
 * (./early-reads.ts: `readEarly` for a read, `countEarly` for a count taken back when the first factor is wrong, by a
 * key the gate then takes its answer by).
 */
export type SessionGateReads = (scope: SignInScope, userId: string) => void;

export interface SignInHooks {
  readonly beforeFirstFactor?: SignInCheck;
  readonly keptPassword?: KeptPasswordCheck;
  readonly beforeSession?: SessionGate;
  /** `beforeSession`'s reads, started early (issue 48, "Round trips"). */
  readonly readsBeforeSession?: SessionGateReads;
  /** A check before a user is created (../sign-up-checks.ts). */
  readonly beforeSignUp?: SignUpCheck;
}

const registered = new Set<SignInHooks>();

/** Adds a feature's hooks; the same object twice is registered once (the runtime may be loaded per test file). */
export function registerSignInHooks(hooks: SignInHooks): void {
  registered.add(hooks);
  if (hooks.beforeSignUp) addSignUpCheck(hooks.beforeSignUp);
}

export const beforeFirstFactorChecks = (): SignInCheck[] =>
  [...registered].flatMap((hooks) => (hooks.beforeFirstFactor ? [hooks.beforeFirstFactor] : []));

export const sessionGates = (): SessionGate[] =>
  [...registered].flatMap((hooks) => (hooks.beforeSession ? [hooks.beforeSession] : []));

export const sessionGateReads = (): SessionGateReads[] =>
  [...registered].flatMap((hooks) => (hooks.readsBeforeSession ? [hooks.readsBeforeSession] : []));

/** The verdict of the first feature that takes part on a password kept elsewhere (one feature offers it), or null. */
export async function passwordKeptElsewhere(
  scope: SignInScope,
  attempt: Parameters<KeptPasswordCheck>[1],
): Promise<KeptPasswordVerdict | null> {
  for (const hooks of registered) {
    const verdict = hooks.keptPassword ? await hooks.keptPassword(scope, attempt) : null;
    if (verdict) return verdict;
  }
  return null;
}
