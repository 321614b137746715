/**
 * WebAuthn as other features use it: elevation for sensitive operations. Everything else in this folder is internal
 * to core auth (.dependency-cruiser.cjs).
 */
export { requireElevation } from "./elevation";
