/**
 * The drawer of refresh tokens from before token families (legacy-rotation.ts): delete this folder, the
 * `RefreshSession` export in src/index.ts and the callers' branches marked "legacy drawer" on the date
 * docs/operations.md gives.
 */
export {
  isCurrentLegacyGrantToken,
  legacyGrantOfToken,
  legacySessionOfToken,
  revokeLegacySession,
  revokeLegacySessions,
  rotateLegacyGrantToken,
  rotateLegacySessionToken,
} from "./legacy-rotation";
export { RefreshSession } from "./refresh-session";
