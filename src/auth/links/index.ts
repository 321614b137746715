/**
 * Mailed links as other features use them (the OAuth2 page sends magic links, reset and verification mails). Everything else in this folder is
 * internal to core auth (.dependency-cruiser.cjs).
 */
export {
  type LinkRequest,
  sendPasswordResetEmail,
  sendVerificationEmail,
  signInPasswordlessEmail,
} from "./email-flows";
