/** What the face's other parts use of GoTrue's: the check of the access tokens it issues (Storage takes them). */
export { verifyGoTrueToken } from "./tokens";
