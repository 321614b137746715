/** What GoTrue's part of the face offers the face's other parts (the forwarded data calls): its errors and tokens. */
export { GoTrueError, goTrueErrorResponse, toGoTrueError } from "./errors";
export { amrMethod, goTrueIssuer, verifyGoTrueToken } from "./tokens";
export { AUDIENCE, providerOf } from "./user-facts";
