/**
 * Every sign-in, one pipeline (./pipeline.ts): its method (./method.ts, named by each flow, never read from a URL),
 * the scope its route gathers once (./scope.ts), and the checks other features add (./hooks.ts).
 */

export {
  countEarly,
  earlyReader,
  readBeforeFirstFactor,
  readEarly,
  settleFirstFactor,
} from "./early-reads";
export {
  type GateDecision,
  type KeptPasswordCheck,
  type KeptPasswordVerdict,
  passwordKeptElsewhere,
  registerSignInHooks,
  type SessionGate,
  type SessionGateReads,
  type SignInCheck,
  type SignInHooks,
} from "./hooks";
export { type Method, providerMethod } from "./method";
export {
  beginSignIn,
  type SessionStart,
  type SignInResult,
  startImpersonatedSession,
  startSession,
} from "./pipeline";
export { type SignInScope, signInScope } from "./scope";
