// One user as every vendor's reader hands it over (a "record"), and the wire's UserBundle built from it
// (src/move-in/wire.ts): the same endpoint, ledger and checks as import-nhost. Pure functions: no I/O.
//
// A record: { system, sourceId, email, emailVerified, phone, phoneVerified, displayName, avatarUrl, passwordHash,
//   passwordHasher, totpSecret, disabled, createdAt, updatedAt, lastSeen, identities: [{provider, subject}],
//   metadata, leftOut: [reason] }
// where `provider` is already this service's provider id, or `unknown:<vendor's name>`.
// A reader yields {record} or {problem: {id (a label), reason, sourceId (when the row names its user)}}: a problem
// row with a sourceId is a user still at the vendor, whom the removal pass must not remove (removals.mjs).
import { createHash } from "node:crypto";

/**
 * The `passwordHasher` names the service takes (contract supabase.md §5): what each vendor's hash is sent as. A name
 * outside this list is refused here, before anything is sent; a hash that does not fit its name is the Worker's to
 * refuse (its checks run in a dry run too).
 */
export const HASHERS = new Set([
  "bcrypt",
  "argon2id",
  "argon2i",
  "scrypt",
  "scrypt_firebase",
  "pbkdf2_sha1",
  "pbkdf2_sha256",
  "pbkdf2_sha512",
  "bcrypt_sha256",
  "sha256_salted",
  "md5",
  "phpass",
]);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The id a vendor's user is imported under. A UUID stays as it is; any other id becomes the UUID made of
 * SHA-256(`<system>:<id>`) (RFC 9562 version 8, "custom"), the same on every run, so a second run finds the user an
 * earlier one wrote (nothing changes) and an interrupted run carries on. The original stays in
 * `metadata.importedFrom`.
 */
export function importedId(system, sourceId) {
  if (UUID.test(sourceId)) return sourceId.toLowerCase();
  return derivedUuid(`${system}:${sourceId}`);
}

export function derivedUuid(text) {
  const bytes = createHash("sha256").update(text, "utf8").digest();
  bytes[6] = (bytes[6] & 0x0f) | 0x80; // version 8
  bytes[8] = (bytes[8] & 0x3f) | 0x80; // RFC 9562 variant
  const hex = bytes.subarray(0, 16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A time as the wire wants it; a vendor that does not say when a user was created gives the epoch (documented). */
export function isoTime(value, fallback = null) {
  if (value === null || value === undefined || value === "") return fallback;
  const date = new Date(typeof value === "string" && /^\d+(\.\d+)?$/.test(value) ? Number(value) : value);
  return Number.isFinite(date.getTime()) ? date.toISOString() : fallback;
}

export const EPOCH = "1970-01-01T00:00:00.000Z";

/**
 * The wire's UserBundle for a record. The service's own checks (email, phone, hash format) run on it; what the
 * vendor had and this service has no place for is in `record.leftOut`, reported by the command.
 */
export function bundleOf(record) {
  const id = importedId(record.system, record.sourceId);
  const createdAt = record.createdAt ?? EPOCH;
  const providers = record.identities
    .filter((identity) => !identity.provider.startsWith("unknown:"))
    .map((identity) => ({
      id: derivedUuid(`${record.system}:identity:${identity.provider}:${identity.subject}`),
      providerId: identity.provider,
      providerUserId: identity.subject,
    }));
  return {
    id,
    createdAt,
    updatedAt: record.updatedAt ?? createdAt,
    lastSeen: record.lastSeen ?? null,
    disabled: record.disabled ?? false,
    displayName: record.displayName ?? "",
    avatarUrl: record.avatarUrl ?? "",
    locale: "en",
    // Lower-cased here and by the service: addresses differing only in case are one address (the command's check).
    email: record.email ? record.email.trim().toLowerCase() : null,
    phoneNumber: record.phone || null,
    emailVerified: Boolean(record.email && record.emailVerified),
    phoneNumberVerified: Boolean(record.phone && record.phoneVerified),
    newEmail: null,
    passwordHash: record.passwordHash || null,
    ...(record.passwordHash ? { passwordHasher: record.passwordHasher } : {}),
    defaultRole: "user",
    roles: ["user", "me"],
    isAnonymous: false,
    activeMfaType: record.totpSecret ? "totp" : null,
    totpSecret: record.totpSecret || null,
    ticket: null,
    ticketExpiresAt: null,
    metadata: { ...(record.metadata ?? {}), importedFrom: { system: record.system, id: record.sourceId } },
    providers,
    securityKeys: [],
    refreshTokens: [],
  };
}

/** The vendors' provider names → this service's provider ids (src/providers/registry.ts). */
const PROVIDERS = {
  // Auth0's `identities[].provider`
  "google-oauth2": "google",
  github: "github",
  apple: "apple",
  facebook: "facebook",
  linkedin: "linkedin",
  windowslive: "windowslive",
  twitter: "twitter",
  bitbucket: "bitbucket",
  discord: "discord",
  twitch: "twitch",
  gitlab: "gitlab",
  spotify: "spotify",
  // Firebase's `providerUserInfo[].providerId`
  "google.com": "google",
  "github.com": "github",
  "apple.com": "apple",
  "facebook.com": "facebook",
  "twitter.com": "twitter",
  "microsoft.com": "azuread",
  // Cognito's `identities` attribute `providerName` (its built-in social providers)
  Google: "google",
  Facebook: "facebook",
  SignInWithApple: "apple",
};

/** This service's provider id for a vendor's provider name, or `unknown:<name>` (reported, not linked). */
export function providerId(vendorName) {
  return Object.hasOwn(PROVIDERS, vendorName) ? PROVIDERS[vendorName] : `unknown:${vendorName}`;
}

/**
 * The check every source shares: a user whose email another user of the same file already has, differing only in
 * case (one address here), is reported and not sent; so is an id seen twice. Answers the reason, or null.
 */
export function duplicateChecker() {
  const emails = new Map();
  const ids = new Set();
  return (record, label) => {
    if (ids.has(record.sourceId)) return "appears twice in the file: the second is not imported";
    ids.add(record.sourceId);
    if (!record.email) return null;
    const key = record.email.trim().toLowerCase();
    const first = emails.get(key);
    if (first !== undefined)
      return `email ${key} is also ${first}'s (addresses differing only in case are one address here): not imported`;
    emails.set(key, label);
    return null;
  };
}
