/**
 * Refresh-token rotation, shared plumbing of sessions (`POST /token`) and OAuth2 grants (`grant_type=refresh_token`):
 * single use, the same successor inside the grace window, a replay ends the family (contract §5.2, RFC 9700 §4.14.2).
 * Tokens from before families are the business of `legacy/`, a drawer nothing here imports.
 */
export {
  familyIsLive,
  familyOfCurrentToken,
  newLocator,
  type Rotation,
  type RotationRequest,
  raiseFamilyBookmark,
  revokeFamily,
  revokeFamilyOfToken,
  rotateInFamily,
  setFamilyOrg,
  setFamilyOrgIf,
  startFamily,
  undoOrgSwitch,
} from "./rotation";
export { SessionFamilies } from "./session-families";
