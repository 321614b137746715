import type { Deps } from "../../http/deps";
import type { Method } from "./method";

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

export interface SignInHooks {
  readonly beforeFirstFactor?: SignInCheck;
}

const registered = new Set<SignInHooks>();

/** Adds a feature's hooks; the same object twice is registered once (the runtime may be loaded per test file). */
export function registerSignInHooks(hooks: SignInHooks): void {
  registered.add(hooks);
}

export const beforeFirstFactorChecks = (): SignInCheck[] =>
  [...registered].flatMap((hooks) => (hooks.beforeFirstFactor ? [hooks.beforeFirstFactor] : []));
