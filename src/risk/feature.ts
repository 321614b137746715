import { assessSignIn } from "./assess";
import { riskSettings } from "./settings";
import { refuseDisposableSignUp } from "./sign-up";
import { readSignalsEarly } from "./signals";

/**
 * Risk-aware sign-in (issue 47, docs/risk.md): every sign-in by a first factor is scored from what the platform
 * already says and decided by `AUTH_RISK_POLICY` (and the app's `BEFORE_SIGN_IN` hook) before its session; a
 * disposable address can be kept from signing up. It only plugs into the sign-in pipeline's hooks: auth knows it not.
 */
export const riskFeature = {
  name: "risk",
  settings: riskSettings,
  signInHooks: {
    beforeSession: assessSignIn,
    readsBeforeSession: readSignalsEarly,
    beforeSignUp: refuseDisposableSignUp,
  },
};
