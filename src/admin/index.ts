/**
 * What the rest of the service may use of the admin feature: the deletion of a user, which the account center
 * (contract §13) runs for a user deleting their own account, so both ways end the same things in the same order.
 * Everything else in src/admin/ is internal to it (.dependency-cruiser.cjs).
 */

// The service binding's `AuthAdmin` (src/platform/admin.ts) runs the admin API's functions on the same inputs.
export { listAuditEvents } from "./audit";
export { auditQuery } from "./audit-routes";
// The admin API's and the console's doors (src/runtime/app.ts puts them before every feature's admin routes).
export { requireAdminSecret, requireConfiguredSecret } from "./guard";
export { softDeleteUser } from "./soft-delete";
// The Supabase face's admin namespace (src/faces/supabase/) runs the admin API's own functions, so both agree.
export { listUsersPage } from "./user-pages";
export { createUserBody, userPatchBody } from "./user-routes";
export {
  createUser,
  createUserRecord,
  deleteUser,
  patchUser,
  patchUserRecord,
  requireUser,
} from "./users";
