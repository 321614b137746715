/**
 * What every value the authorization server makes starts with: a reader of a log, a configuration or a leaked
 * string knows what it holds, secret scanners can be taught the secret ones, and code tells a refresh token from an
 * access token (introspection, revocation) without trying both. One place, so that no two kinds share a prefix and no
 * parser and maker disagree.
 */

/** A client id this server issued (`oc_` + 128 random bits); a metadata document's client id is its https URL. */
export const CLIENT_ID_PREFIX = "oc_";
/** A confidential client's secret (`ocs_` + 256 bits), shown once, stored as SHA-256. */
export const CLIENT_SECRET_PREFIX = "ocs_";
/** An RFC 7592 registration access token (`ocr_` + 256 bits), stored as SHA-256. */
export const REGISTRATION_TOKEN_PREFIX = "ocr_";
/** An authorization code (`oac_` + its user's slot, three hex digits + 256 bits), stored as SHA-256, single use. */
export const AUTHORIZATION_CODE_PREFIX = "oac_";
/** A grant's id (`og_` + a UUID with its user's slot): access tokens carry it as `grant_id`. No secret. */
export const GRANT_ID_PREFIX = "og_";
/** A refresh token (`ort_` + the grant's 32 hex digits + 256 bits), single use, rotating. */
export const REFRESH_TOKEN_PREFIX = "ort_";
