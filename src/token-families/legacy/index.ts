/**
 * The drawer of refresh tokens known only by their hash (legacy-rotation.ts): those from before token families, and
 * session tokens imported from Nhost (src/move-in/), whose first refresh moves them onto a family. Its OAuth2 half goes
 * on the date docs/operations.md gives; its session half stays while the import is offered (same page).
 */
export {
  findLegacyGrant,
  isCurrentLegacyGrantToken,
  legacyGrantOfToken,
  legacySessionOfToken,
  revokeLegacySession,
  revokeLegacySessions,
  rotateLegacyGrantToken,
  rotateLegacySessionToken,
} from "./legacy-rotation";
export { RefreshSession } from "./refresh-session";
