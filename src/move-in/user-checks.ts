import { emailField } from "../http/fields";
import { sha256Hex } from "../lib/crypto";
import { parseImportedHash } from "../lib/imported-hashes";
import { HASH_BOUNDS } from "../lib/password";
import { toE164 } from "../lib/phone";
import { supabaseSessionTokens } from "./supabase-sessions";
import { type RowReason, type UserBundle, userBundleSchema } from "./wire";

/**
 * One Nhost user checked and put in the service's terms (times in ms, lower-cased email, hashes without Nhost's `\x`),
 * or the reasons it can't be imported. A user is imported whole or not at all (contract move-in §2): a part that
 * can't be carried (a hash in an unknown format, a key that isn't base64url) skips the user, with the part named.
 * What Nhost itself no longer honours (an expired token or ticket) is left out, noted as a warning.
 */

export interface ImportedToken {
  id: string;
  kind: "regular" | "pat";
  /** Lower-case hex SHA-256 of the token the client holds: the service's own hash format, Nhost's without `\x`. */
  hash: string;
  createdAt: number;
  expiresAt: number;
  metadata: Record<string, unknown>;
  /** The session's `method` when carried (new-sessions.ts): the Nhost one unless the system is another. */
  method?: string;
  /** A carried session that has not shown the user's second factor (GoTrue's aal1). */
  secondFactorPending?: boolean;
  /** Hashes of tokens the old system still takes for this session as a retry (GoTrue's parent): indexed beside it. */
  retryHashes?: string[];
}

export interface CheckedUser {
  id: string;
  row: {
    createdAt: number;
    updatedAt: number;
    lastSeen: number | null;
    disabled: boolean;
    displayName: string;
    avatarUrl: string;
    locale: string;
    email: string | null;
    emailVerified: boolean;
    newEmail: string | null;
    phoneNumber: string | null;
    phoneNumberVerified: boolean;
    passwordHash: string | null;
    defaultRole: string;
    roles: string[];
    isAnonymous: boolean;
    activeMfaType: "totp" | null;
    metadata: Record<string, unknown>;
    /** Supabase's users only (absent for Nhost's, whose fingerprints stay as they were). */
    appMetadata?: Record<string, unknown> | null;
    bannedUntil?: number | null;
  };
  /** Supabase's factors by their ids (a TOTP one names the secret above); absent for Nhost's users. */
  factors?: {
    id: string;
    factorType: "totp" | "phone" | "webauthn";
    friendlyName: string | null;
    status: "verified" | "unverified";
    phone: string | null;
    /** A verified `webauthn` factor's key, as the core keeps it in `mfa_factors.secret` (JSON). */
    key?: { credentialId: string; publicKey: string; counter: number; transports: string[] };
    createdAt: number;
    updatedAt: number;
  }[];
  /** Plain base32, sealed under the service's key when written; null with MFA on means unreadable in Nhost. */
  totpSecret: string | null;
  /** Nhost had a secret the command could not decrypt: one imported by an earlier run is kept. */
  totpUnreadable: boolean;
  providers: { id: string; provider: string; providerUserId: string; createdAt: number; updatedAt: number }[];
  securityKeys: {
    id: string;
    credentialId: string;
    publicKey: string;
    counter: number;
    transports: string[];
    nickname: string | null;
  }[];
  tokens: ImportedToken[];
  ticket: { type: string; hash: string; expiresAt: number } | null;
  /** SHA-256 of all of the above: the same again on a later run writes nothing. */
  fingerprint: string;
  /** The row is the Postgres mirror's copy of this service's own (wire.ts `mirrored`): left out of the fingerprint. */
  mirrored: boolean;
  warnings: (RowReason & { notCarried: boolean })[];
}

export type CheckOutcome = { ok: true; user: CheckedUser } | { ok: false; id: string; reasons: RowReason[] };

/** The ticket kinds Nhost mails links for, which the service's verify endpoint takes as they are. */
const TICKET_TYPES = new Set(["verifyEmail", "passwordReset", "passwordlessEmail", "emailConfirmChange"]);
const BCRYPT = /^\$2[aby]\$(\d{2})\$[./A-Za-z0-9]{53}$/;
const TOKEN_HASH = /^(?:\\x)?([0-9a-fA-F]{64})$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const BASE32 = /^[A-Z2-7]+=*$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** GoTrue's mailed token hash: hex SHA-224 of the address and the code (internal/crypto `GenerateTokenHash`). */
const GOTRUE_TOKEN_HASH = /^[0-9a-f]{56}$/;
const KNOWN_TRANSPORTS = new Set(["usb", "nfc", "ble", "internal", "hybrid", "smart-card", "cable"]);
/** The metadata column holds JSON; Nhost put no bound on it, the service keeps one (a hostile row can't be huge). */
const METADATA_MAX_BYTES = 64 * 1024;

const ms = (iso: string) => Date.parse(iso);

export async function checkUser(
  input: unknown,
  now: number,
  /** How long a session without an end of its own lives from its last refresh (AUTH_REFRESH_TOKEN_EXPIRES_IN). */
  sessionLifetimeMs = 30 * 86_400_000,
): Promise<CheckOutcome> {
  const parsed = userBundleSchema.safeParse(input);
  if (!parsed.success) {
    const id = typeof (input as { id?: unknown })?.id === "string" ? (input as { id: string }).id : "?";
    const problems = parsed.error.issues.map((i) => `${i.path.join(".") || "user"}: ${i.message}`).join("; ");
    return { ok: false, id: id.slice(0, 100), reasons: [{ table: "auth.users", id, reason: problems }] };
  }
  const bundle = parsed.data;
  const id = bundle.id.toLowerCase();
  const reasons: RowReason[] = [];
  const warnings: CheckedUser["warnings"] = [];
  const refuse = (table: string, rowId: string, reason: string) => reasons.push({ table, id: rowId, reason });

  const email = bundle.email === null || bundle.email === "" ? null : bundle.email.trim().toLowerCase();
  if (email !== null && !emailField.safeParse(email).success)
    refuse("auth.users", id, `email "${bundle.email}" is not a valid address`);
  let newEmail = bundle.newEmail ? bundle.newEmail.trim().toLowerCase() : null;
  if (newEmail !== null && !emailField.safeParse(newEmail).success) {
    warnings.push({
      table: "auth.users",
      id,
      reason: "new_email is not a valid address: left out",
      notCarried: false,
    });
    newEmail = null;
  }
  const phoneNumber = bundle.phoneNumber ? toE164(bundle.phoneNumber) : null;
  if (bundle.phoneNumber && phoneNumber === null)
    refuse("auth.users", id, `phone number "${bundle.phoneNumber}" is not a valid number`);

  const given = bundle.passwordHash === "" ? null : bundle.passwordHash;
  // Another system's hash in the layout its hasher names, stored in a form that says its scheme (imported-hashes).
  const imported =
    given !== null && bundle.passwordHasher ? parseImportedHash(bundle.passwordHasher, given) : null;
  if (imported && "refused" in imported) refuse("auth.users", id, imported.refused);
  if (imported && "stored" in imported && imported.warning)
    warnings.push({ table: "auth.users", id, reason: imported.warning, notCarried: false });
  const passwordHash = imported && "stored" in imported ? imported.stored : given;
  const bcryptCost = passwordHash && !imported ? BCRYPT.exec(passwordHash)?.[1] : undefined;
  if (passwordHash !== null && !imported && bcryptCost === undefined)
    refuse("auth.users", id, "password hash in an unknown format (Nhost writes bcrypt $2a$)");
  else if (bcryptCost !== undefined && Number(bcryptCost) > HASH_BOUNDS.bcryptMaxCost)
    refuse("auth.users", id, `bcrypt cost ${bcryptCost} is above ${HASH_BOUNDS.bcryptMaxCost}`);

  if (!bundle.defaultRole) refuse("auth.users", id, "no default role");
  const roles = [...new Set([bundle.defaultRole, ...bundle.roles])].filter((role) => role.length > 0);

  const metadata = bundle.metadata ?? {};
  if (JSON.stringify(metadata).length > METADATA_MAX_BYTES)
    refuse("auth.users", id, `metadata larger than ${METADATA_MAX_BYTES} bytes`);
  if (JSON.stringify(bundle.appMetadata ?? {}).length > METADATA_MAX_BYTES)
    refuse("auth.users", id, `app_metadata larger than ${METADATA_MAX_BYTES} bytes`);

  const mfa = checkMfa(bundle, id, warnings, refuse);

  const providers = bundle.providers.map((row) => {
    if (!row.providerId || !row.providerUserId)
      refuse("auth.user_providers", row.id, "provider or provider user id is empty");
    return {
      id: row.id.toLowerCase(),
      provider: row.providerId.toLowerCase(),
      providerUserId: row.providerUserId,
      createdAt: row.createdAt ? ms(row.createdAt) : ms(bundle.createdAt),
      updatedAt: row.updatedAt ? ms(row.updatedAt) : ms(bundle.updatedAt),
    };
  });

  const securityKeys = bundle.securityKeys.flatMap((row) => {
    if (row.publicKey === null) {
      const reason = "no public key (a registration that never finished): left";
      warnings.push({ table: "auth.user_security_keys", id: row.id, reason, notCarried: false });
      return [];
    }
    if (!BASE64URL.test(row.credentialId))
      refuse("auth.user_security_keys", row.id, "credential id is not base64url");
    if (!BASE64URL.test(row.publicKey))
      refuse("auth.user_security_keys", row.id, "public key is not base64url");
    return {
      id: row.id.toLowerCase(),
      credentialId: row.credentialId,
      publicKey: row.publicKey,
      counter: row.counter,
      transports: (row.transports ?? "")
        .split(",")
        .map((t) => t.trim())
        .filter((t) => KNOWN_TRANSPORTS.has(t)),
      nickname: row.nickname || null,
    };
  });

  const tokens: ImportedToken[] = [];
  for (const row of bundle.refreshTokens) {
    const hash = TOKEN_HASH.exec(row.hash)?.[1]?.toLowerCase();
    if (!hash) {
      refuse(
        "auth.refresh_tokens",
        row.id,
        "token hash in an unknown format (Nhost writes \\x and a SHA-256)",
      );
      continue;
    }
    if (ms(row.expiresAt) <= now) {
      warnings.push({
        table: "auth.refresh_tokens",
        id: row.id,
        reason: "expired: not needed",
        notCarried: false,
      });
      continue;
    }
    tokens.push({
      id: row.id.toLowerCase(),
      kind: row.type,
      hash,
      createdAt: ms(row.createdAt),
      expiresAt: ms(row.expiresAt),
      metadata: row.metadata ?? {},
    });
  }

  const warn = (warning: RowReason & { notCarried: boolean }) => warnings.push(warning);
  // Any verified factor of the list counts (a phone or webauthn one leaves activeMfaType as Supabase had it).
  const secondFactor =
    mfa.activeMfaType !== null ||
    bundle.totpSecretUnreadable ||
    (bundle.factors ?? []).some((factor) => factor.status === "verified");
  tokens.push(
    ...(await supabaseSessionTokens(
      bundle.supabaseSessions,
      now,
      sessionLifetimeMs,
      warn,
      refuse,
      secondFactor,
    )),
  );

  const ticket = await checkTicket(bundle, id, now, warnings);
  const factors = checkFactors(bundle, refuse);
  if (reasons.length > 0) return { ok: false, id, reasons };

  const row: CheckedUser["row"] = {
    createdAt: ms(bundle.createdAt),
    updatedAt: ms(bundle.updatedAt),
    lastSeen: bundle.lastSeen ? ms(bundle.lastSeen) : null,
    disabled: bundle.disabled,
    displayName: bundle.displayName,
    avatarUrl: bundle.avatarUrl,
    locale: bundle.locale,
    email,
    emailVerified: bundle.emailVerified,
    newEmail,
    phoneNumber,
    phoneNumberVerified: bundle.phoneNumberVerified,
    passwordHash,
    defaultRole: bundle.defaultRole,
    roles,
    isAnonymous: bundle.isAnonymous,
    activeMfaType: mfa.activeMfaType,
    metadata,
    ...(bundle.system === "supabase"
      ? {
          appMetadata: bundle.appMetadata ?? null,
          bannedUntil: bundle.bannedUntil ? ms(bundle.bannedUntil) : null,
        }
      : {}),
  };
  const checked = {
    id,
    row,
    ...(factors ? { factors } : {}),
    totpSecret: mfa.totpSecret,
    totpUnreadable: bundle.totpSecretUnreadable,
    providers,
    securityKeys,
    tokens,
    ticket,
  };
  // A mirrored row moves with what happens here (last_seen, updated_at): only the rest of the user is compared.
  const mirrored = bundle.mirrored;
  const fingerprint = await sha256Hex(JSON.stringify(mirrored ? { ...checked, row: "mirrored" } : checked));
  return { ok: true, user: { ...checked, fingerprint, mirrored, warnings } };
}

/**
 * TOTP as Nhost had it. A secret the command could not decrypt keeps MFA on without a secret: the user's sign-in
 * then answers `mfa-reset-required` until an admin resets it, rather than letting a password alone in (never worse
 * than before, contract move-in §2).
 */
function checkMfa(
  bundle: UserBundle,
  id: string,
  warnings: CheckedUser["warnings"],
  refuse: (table: string, id: string, reason: string) => void,
): { activeMfaType: "totp" | null; totpSecret: string | null } {
  const secret = bundle.totpSecret ? bundle.totpSecret.replace(/\s+/g, "").toUpperCase() : null;
  if (secret !== null && !BASE32.test(secret)) refuse("auth.users", id, "TOTP secret is not base32");
  const type = bundle.activeMfaType || null;
  if (type === "totp") {
    if (secret === null)
      warnings.push({
        table: "auth.users",
        id,
        reason: bundle.totpSecretUnreadable
          ? "TOTP secret could not be decrypted (NHOST_ENCRYPTION_KEY): sign-in refused until an admin resets MFA"
          : "TOTP active without a secret: sign-in refused until an admin resets MFA",
        notCarried: true,
      });
    return { activeMfaType: "totp", totpSecret: secret };
  }
  if (type === "sms")
    // Nhost's sign-in asks a second step only for `totp`: an `sms` value changed nothing there, nor does it here.
    warnings.push({
      table: "auth.users",
      id,
      reason: "active_mfa_type sms has no sign-in step in Nhost: left",
      notCarried: false,
    });
  else if (type !== null) refuse("auth.users", id, `unknown active_mfa_type "${type}"`);
  return { activeMfaType: null, totpSecret: secret };
}

async function checkTicket(
  bundle: UserBundle,
  id: string,
  now: number,
  warnings: CheckedUser["warnings"],
): Promise<CheckedUser["ticket"]> {
  if (!bundle.ticket) return null;
  const type = bundle.ticket.slice(0, bundle.ticket.indexOf(":"));
  const expiresAt = bundle.ticketExpiresAt ? ms(bundle.ticketExpiresAt) : 0;
  if (expiresAt <= now) return null;
  const body = bundle.ticket.slice(type.length + 1);
  const shaped = bundle.system === "supabase" ? GOTRUE_TOKEN_HASH.test(body) : UUID.test(body);
  if (!TICKET_TYPES.has(type) || !shaped) {
    warnings.push({
      table: "auth.users",
      id,
      reason: `ticket of an unknown kind "${type}": left`,
      notCarried: false,
    });
    return null;
  }
  return { type, hash: await sha256Hex(bundle.ticket), expiresAt };
}

/** Supabase's factors: a phone factor's number as E.164 (GoTrue keeps it without `+`), the rest as they are. */
function checkFactors(
  bundle: UserBundle,
  refuse: (table: string, id: string, reason: string) => void,
): CheckedUser["factors"] {
  if (!bundle.factors) return undefined;
  return bundle.factors.map((factor) => {
    const phone = factor.phone
      ? toE164(/^\d+$/.test(factor.phone) ? `+${factor.phone}` : factor.phone)
      : null;
    if (factor.type === "phone" && phone === null)
      refuse("auth.mfa_factors", factor.id, `phone "${factor.phone ?? ""}" is not a valid number`);
    if (factor.type === "totp" && !bundle.totpSecret)
      refuse("auth.mfa_factors", factor.id, "a TOTP factor without its secret");
    const key = factor.type === "webauthn" ? webauthnKey(factor, refuse) : undefined;
    return {
      id: factor.id.toLowerCase(),
      factorType: factor.type,
      friendlyName: factor.friendlyName,
      status: factor.status,
      phone: factor.type === "phone" ? phone : null,
      ...(key ? { key } : {}),
      createdAt: ms(factor.createdAt),
      updatedAt: ms(factor.updatedAt),
    };
  });
}

/**
 * A `webauthn` factor's key: a verified factor must bring one (a verified factor without a key could never be
 * asserted, and would stand for a second factor nobody can give); an unverified one must not (its first challenge
 * makes its key here, as the core's enrolment does).
 */
function webauthnKey(
  factor: NonNullable<UserBundle["factors"]>[number],
  refuse: (table: string, id: string, reason: string) => void,
) {
  if (factor.status !== "verified" || !factor.key) {
    if (factor.status === "verified")
      refuse("auth.mfa_factors", factor.id, "a verified WebAuthn factor without its key");
    return undefined;
  }
  const { credentialId, publicKey, counter, transports } = factor.key;
  if (!BASE64URL.test(credentialId)) refuse("auth.mfa_factors", factor.id, "credential id is not base64url");
  if (!BASE64URL.test(publicKey)) refuse("auth.mfa_factors", factor.id, "public key is not base64url");
  return { credentialId, publicKey, counter, transports: transports.filter((t) => KNOWN_TRANSPORTS.has(t)) };
}
