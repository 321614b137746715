/**
 * The service binding (contract platform.md §1, docs/workers.md): what the `AuthService` and `AuthAdmin` entrypoints
 * (src/runtime/entrypoints/) run, each function over the same `Deps` as an HTTP request. The entrypoints only build
 * the services and turn failures into values; everything a call does is here.
 */

export {
  type AdminCall,
  adminCall,
  createUserAs,
  deleteRelationshipAs,
  deleteUserAs,
  disableUserAs,
  listAuditAs,
  revokeSessionsAs,
  updateUserAs,
  writeRelationshipAs,
} from "./admin";
export { authenticateArguments, verifyTokenOptionsOf } from "./arguments";
export { authenticate } from "./authenticate";
export { endImpersonationAs, impersonateUserAs } from "./impersonation";
export { getUserProfile } from "./profile";
export { asValue, errorValue, refusal } from "./results";
export type * from "./types";
export { verifyToken } from "./verify-token";
