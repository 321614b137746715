/**
 * What GoTrue's part of the face offers the face's other parts (Storage and the forwarded data calls): its errors and
 * the check of the access tokens it issues.
 */
export { GoTrueError, goTrueErrorResponse, toGoTrueError } from "./errors";
export { importedGoTrueClaims } from "./imported-tokens";
export { amrMethod, goTrueIssuer, verifyGoTrueToken, verifySupabaseFaceToken } from "./tokens";
export { AUDIENCE, providerOf } from "./user-facts";
