/**
 * Mailed links as other features use them (the OAuth2 page sends magic links). Everything else in this folder is
 * internal to core auth (.dependency-cruiser.cjs).
 */
export { signInPasswordlessEmail } from "./email-flows";
