// Nhost's rows (as read-nhost.mjs reads them) → the wire's UserBundle (/tmp/issue29/wire.md, src/move-in/wire.ts):
// one user with everything of theirs, so the server writes it whole or not at all. Pure functions: no I/O.
import { createHash } from "node:crypto";
import { readTotpSecret } from "./totp.mjs";

/** A time as the wire wants it (ISO-8601), or null; Postgres' ±infinity (no date at all) is null too. */
export function iso(value) {
  if (value === null || value === undefined) return null;
  const date = value instanceof Date ? value : new Date(value);
  return Number.isFinite(date.getTime()) ? date.toISOString() : null;
}

/** Nhost's refresh-token hash of a token's text: `\x` and the lower-case hex SHA-256 (`sha256(token::text::bytea)`). */
export function nhostTokenHash(token) {
  return `\\x${createHash("sha256").update(token, "utf8").digest("hex")}`;
}

/**
 * The id a refresh token is imported under. Before Nhost Auth's migration 00015 the token itself was the primary key
 * (`refresh_token uuid`), and 00015 renamed that column to `id`: on such rows the id *is* the bearer token (its hash
 * is the hash of the id). Those get an id derived from their hash instead (the same on every run, so re-runs stay
 * idempotent), so that a live token never shows as an id in this service's admin API, logs or reports.
 */
export function refreshTokenId(id, hash) {
  if (hash !== nhostTokenHash(id)) return id;
  const bytes = createHash("sha256").update(`edge-auth import-nhost refresh token ${hash}`).digest();
  bytes[6] = (bytes[6] & 0x0f) | 0x80; // RFC 9562 version 8 (custom)
  bytes[8] = (bytes[8] & 0x3f) | 0x80; // RFC 9562 variant
  const hex = bytes.subarray(0, 16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Rows with a user_id, grouped by it (for one page of users). */
export function groupByUser(rows) {
  const groups = new Map();
  for (const row of rows) {
    const group = groups.get(row.user_id);
    if (group) group.push(row);
    else groups.set(row.user_id, [row]);
  }
  return groups;
}

/**
 * One UserBundle from an auth.users row and its rows in the other tables (already without expired tokens), and what
 * is left out of it: `leftOut` knowingly (exit 0; `column`: a value of the row, not the whole row) and `notCarried`
 * (exit 1: the TOTP secret of a user with TOTP on that can't be read).
 * `totpKey`: the Buffer of NHOST_ENCRYPTION_KEY, or null.
 */
export function buildBundle(
  user,
  { roles = [], providers = [], securityKeys = [], refreshTokens = [] },
  totpKey,
) {
  const leftOut = [];
  const notCarried = [];
  const totp = readTotpSecret(user.totp_secret, totpKey);
  if (totp.unreadable && user.active_mfa_type === "totp")
    notCarried.push({
      table: "auth.users",
      id: user.id,
      reason: `TOTP secret unreadable (${totp.why}): MFA stays on, sign-in refused until an admin resets it`,
    });
  else if (totp.unreadable)
    // A secret set up but never activated: nobody signs in with it, nothing is lost.
    leftOut.push({
      table: "auth.users",
      id: user.id,
      reason: "TOTP secret unreadable, TOTP not active: not needed",
      column: true,
    });
  const keys = [];
  for (const key of securityKeys) {
    // A key without its public key can't verify a signature, in Nhost or here: nothing to carry.
    if (!key.credential_public_key || key.credential_public_key.length === 0) {
      leftOut.push({ table: "auth.user_security_keys", id: key.id, reason: "no public key: unusable" });
      continue;
    }
    keys.push({
      id: key.id,
      credentialId: key.credential_id,
      publicKey: Buffer.from(key.credential_public_key).toString("base64url"),
      counter: Number(key.counter ?? 0),
      transports: key.transports ?? "",
      nickname: key.nickname ?? null,
    });
  }
  const bundle = {
    id: user.id,
    createdAt: iso(user.created_at),
    updatedAt: iso(user.updated_at),
    lastSeen: iso(user.last_seen),
    disabled: user.disabled === true,
    displayName: user.display_name ?? "",
    avatarUrl: user.avatar_url ?? "",
    locale: user.locale ?? "",
    email: user.email ?? null,
    phoneNumber: user.phone_number ?? null,
    emailVerified: user.email_verified === true,
    phoneNumberVerified: user.phone_number_verified === true,
    newEmail: user.new_email ?? null,
    passwordHash: user.password_hash ?? null,
    defaultRole: user.default_role ?? "user",
    roles: roles.map((row) => row.role),
    isAnonymous: user.is_anonymous === true,
    activeMfaType: user.active_mfa_type ?? null,
    totpSecret: totp.secret,
    totpSecretUnreadable: totp.unreadable,
    ticket: user.ticket ?? null,
    ticketExpiresAt: user.ticket ? iso(user.ticket_expires_at) : null,
    metadata: user.metadata ?? null,
    providers: providers.map((row) => ({
      id: row.id,
      providerId: row.provider_id,
      providerUserId: row.provider_user_id,
      createdAt: iso(row.created_at) ?? undefined,
      updatedAt: iso(row.updated_at) ?? undefined,
    })),
    securityKeys: keys,
    refreshTokens: refreshTokens.map((row) => ({
      id: refreshTokenId(row.id, row.hash),
      createdAt: iso(row.created_at),
      expiresAt: iso(row.expires_at),
      metadata: row.metadata ?? null,
      type: row.type ?? "regular",
      hash: row.hash,
    })),
  };
  return { bundle, leftOut, notCarried };
}

/** Rows of a bundle per table, to count them in the report with their user's outcome. */
export function bundleRows(bundle) {
  return {
    "auth.user_roles": bundle.roles.length,
    "auth.user_providers": bundle.providers.length,
    "auth.user_security_keys": bundle.securityKeys.length,
    "auth.refresh_tokens": bundle.refreshTokens.length,
  };
}
