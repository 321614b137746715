import type { SignUpCheck } from "../auth";
import { AppError } from "../errors";
import { isDisposableEmail } from "./disposable";

/**
 * With `AUTH_RISK_BLOCK_DISPOSABLE_EMAILS=true`, an address at a disposable mail domain makes no account, whichever
 * way in (src/auth/new-users.ts asks before anything is written): 403 `risk-refused`, audited as a refused
 * `signin.risk` with no user. Without it the domain is only one of a sign-in's signals (./score.ts).
 */
export const refuseDisposableSignUp: SignUpCheck = async (deps, { email, method }) => {
  if (!deps.config.risk.blockDisposableEmails || !isDisposableEmail(email)) return;
  deps.audit({
    type: "signin.risk",
    userId: null,
    detail: { method: method ?? "other", signUp: true, decision: "refuse", reasons: ["disposable-email"] },
    outcome: "failure",
    reason: "risk-refused",
  });
  throw new AppError("risk-refused", "addresses at disposable mail domains cannot sign up here");
};
