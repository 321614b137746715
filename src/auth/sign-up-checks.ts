import type { Deps } from "../http/deps";

/**
 * A check before a user is created by anyone but an operator (./new-users.ts `createUser`, every way in but the admin
 * API and the import), added by a feature through its sign-in hooks (sign-in/hooks.ts `beforeSignUp`: src/risk/'s
 * disposable domains): refuses by throwing an `AppError` before anything is written.
 */
export type SignUpCheck = (
  deps: Deps,
  attempt: { email: string | null; method: string | null },
) => Promise<void>;

const checks = new Set<SignUpCheck>();

/** The same function twice is one check (the runtime may be loaded per test file). */
export function addSignUpCheck(check: SignUpCheck): void {
  checks.add(check);
}

export const signUpChecks = (): SignUpCheck[] => [...checks];
