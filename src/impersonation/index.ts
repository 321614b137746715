/**
 * Impersonation as other features use it (the service binding's `AuthAdmin`, src/platform/): start one, end one, and
 * the body both doors take.
 */
export { impersonateBody } from "./admin-routes";
export { endImpersonation, impersonationsOf } from "./end";
export { startImpersonation } from "./start";
