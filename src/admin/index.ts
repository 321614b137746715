/**
 * What the rest of the service may use of the admin feature: the deletion of a user, which the account center
 * (contract §13) runs for a user deleting their own account, so both ways end the same things in the same order.
 * Everything else in src/admin/ is internal to it (.dependency-cruiser.cjs).
 */
export { deleteUser } from "./users";
