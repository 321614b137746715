/**
 * What the rest of core auth uses of WebAuthn: elevation for sensitive operations. Everything else in this folder is
 * internal to it (.dependency-cruiser.cjs).
 */
export { requireElevation } from "./elevation";
