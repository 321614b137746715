/**
 * What the rest of core auth uses of the per-account lockout (contract §13, docs/protection.md "Lockout"): the count
 * around every guessable factor's check, and the unlocks. Everything else in this folder is internal to it
 * (.dependency-cruiser.cjs); its routes are mounted by core-routes.ts.
 */
export { type Attempt, type Attempted, beginAttempt, checkedBesideCount } from "./attempts";
export { forgetDevices, rememberDevice } from "./known-devices";
export { type FactorLock, type LockoutFactor, SignInLockout } from "./sign-in-lockout";
export { lockedFactors, unlockAccount } from "./unlock";
