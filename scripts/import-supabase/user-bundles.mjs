// Supabase's rows (as read-supabase.mjs reads them) → the import wire's UserBundle (src/move-in/wire.ts, `system:
// "supabase"`): one user with its identities, factors and pending link, written whole or not at all by the service.
// Pure functions: no I/O. What GoTrue has and the core keeps elsewhere or not at all is said per row: `leftOut`
// (knowingly, exit 0) or `notCarried` (exit 1: something a person relied on does not come along).
import { iso } from "../import-nhost/user-bundles.mjs";
import { readFactorSecret } from "./factor-secrets.mjs";
import { pendingLinks } from "./pending-links.mjs";
import { supabaseSessionsOf } from "./sessions.mjs";
import { factorKeyOf, passkeyRow } from "./webauthn.mjs";

/** GoTrue's identities that are the account itself (its address or number), not a linked provider. */
const OWN_IDENTITIES = new Set(["email", "phone"]);

/** Why a user is not sent at all, or null. Soft-deleted users stay behind. */
export function notSent(user) {
  if (user.deleted_at) return { leftOut: "soft-deleted in Supabase (deleted_at): not carried" };
  return null;
}

/**
 * GoTrue keys an SSO user's identity by `sso:<provider id>` and the IdP's subject (NameID); this service's SAML
 * connection finds its user by the asserted address inside the org's verified domains (src/sso/jit.ts), and the org
 * is the provider under the same id (sso.mjs). So the identity travels as the user's address: it is carried when that
 * address is in one of the provider's domains, else the next SAML sign-in could not find the user.
 */
function ssoIdentityReason(user, identity, ssoDomains) {
  const providerId = identity.provider.slice("sso:".length);
  const domains = ssoDomains?.get(providerId);
  if (!domains) return "SSO identity of a provider Supabase no longer has";
  const email = String(user.email ?? "").toLowerCase();
  const domain = email.slice(email.lastIndexOf("@") + 1);
  if (!email.includes("@") || !domains.has(domain))
    return `SSO identity: the address ${email ? `@${domain}` : "(none)"} is outside the provider's domains, where this service's SAML sign-in finds its users`;
  return null;
}

/** GoTrue keeps numbers without `+` (`15551234567`); the core takes E.164. */
function phoneOf(value) {
  if (!value) return null;
  return /^\d+$/.test(value) ? `+${value}` : value;
}

/** `raw_app_meta_data` without what GoTrue derives from the identities (`provider`, `providers`). */
export function appMetadataOf(raw) {
  if (!raw || typeof raw !== "object") return null;
  const { provider: _provider, providers: _providers, ...rest } = raw;
  return Object.keys(rest).length > 0 ? rest : null;
}

/**
 * One UserBundle from an auth.users row and its rows in the other tables. `keys`: SUPABASE_ENCRYPTION_KEY's map or
 * null; `now`: ms; `otpExpiry`: GoTrue's mailer OTP lifetime in seconds.
 */
export function buildSupabaseBundle(
  user,
  { identities = [], factors = [], oneTimeTokens = null, passkeys = [], sessions = [], sessionTokens = [] },
  options,
) {
  const { keys = null, now, otpExpiry } = options;
  const leftOut = [];
  const notCarried = [];
  const id = user.id;
  const createdAt = iso(user.created_at) ?? iso(now);
  const metadata =
    user.raw_user_meta_data && typeof user.raw_user_meta_data === "object" ? user.raw_user_meta_data : {};
  const bannedUntil = iso(user.banned_until);
  const banned = bannedUntil !== null && Date.parse(bannedUntil) > now;

  const providers = [];
  let own = 0;
  for (const identity of identities) {
    if (OWN_IDENTITIES.has(identity.provider)) {
      own++;
      continue;
    }
    if (identity.provider.startsWith("sso:")) {
      const reason = ssoIdentityReason(user, identity, options.ssoDomains);
      if (reason) notCarried.push({ table: "auth.identities", id: identity.id, reason });
      else own++;
      continue;
    }
    providers.push({
      id: identity.id,
      providerId: identity.provider,
      providerUserId: identity.provider_id,
      createdAt: iso(identity.created_at) ?? undefined,
      updatedAt: iso(identity.updated_at) ?? undefined,
    });
  }

  const mfa = factorsOf(factors, keys, leftOut, notCarried);
  const carried = supabaseSessionsOf(sessions, sessionTokens, keys);
  notCarried.push(...carried.notCarried);
  const links = pendingLinks(user, oneTimeTokens, { now, otpExpiry });
  for (const reason of links.leftOut) leftOut.push({ table: "auth.one_time_tokens", id, reason });

  const bundle = {
    system: "supabase",
    id,
    createdAt,
    updatedAt: iso(user.updated_at) ?? createdAt,
    lastSeen: iso(user.last_sign_in_at),
    disabled: banned,
    bannedUntil: banned ? bannedUntil : null,
    displayName: String(metadata.full_name ?? metadata.name ?? "").slice(0, 1000),
    avatarUrl: String(metadata.avatar_url ?? metadata.picture ?? "").slice(0, 2048),
    email: user.email || null,
    phoneNumber: phoneOf(user.phone),
    // `confirmed_at` was the address's confirmation before GoTrue split it into email_ and phone_confirmed_at.
    emailVerified: (user.email_confirmed_at ?? (user.phone ? null : user.confirmed_at)) != null,
    phoneNumberVerified: user.phone_confirmed_at != null,
    newEmail: user.email_change || null,
    passwordHash: user.encrypted_password || null,
    isAnonymous: user.is_anonymous === true,
    activeMfaType: mfa.activeMfaType,
    totpSecret: mfa.totpSecret,
    totpSecretUnreadable: mfa.totpSecretUnreadable,
    ticket: links.ticket,
    ticketExpiresAt: links.ticketExpiresAt,
    metadata,
    appMetadata: appMetadataOf(user.raw_app_meta_data),
    providers,
    securityKeys: passkeys.map(passkeyRow),
    refreshTokens: [],
    factors: mfa.factors,
    supabaseSessions: carried.sessions,
  };
  return { bundle, leftOut, notCarried, own };
}

/**
 * The factors the core holds: one TOTP factor (its secret on the user's row, the newest verified one) and phone
 * factors. A verified TOTP factor whose secret can't be read keeps MFA on without it (sign-in refused until an admin
 * resets it, never a password alone), as the Nhost import does.
 */
function factorsOf(factors, keys, leftOut, notCarried) {
  const out = [];
  let totp = null;
  const totps = factors
    .filter((f) => f.factor_type === "totp" && f.status === "verified")
    .sort((a, b) => new Date(b.updated_at) - new Date(a.updated_at));
  for (const factor of totps) {
    if (totp) {
      notCarried.push({
        table: "auth.mfa_factors",
        id: factor.id,
        reason:
          "a second verified TOTP factor: the service holds one TOTP factor per user (the newest is carried)",
      });
      continue;
    }
    totp = { factor, ...readFactorSecret(factor.secret, factor.id, keys) };
  }
  let unreadable = false;
  if (totp?.unreadable) {
    unreadable = true;
    notCarried.push({
      table: "auth.mfa_factors",
      id: totp.factor.id,
      reason: `TOTP secret unreadable (${totp.why}): MFA stays on, sign-in refused until an admin resets it`,
    });
  } else if (totp) out.push(factorRow(totp.factor, "totp"));
  for (const factor of factors) {
    if (factor.factor_type === "totp" && factor.status !== "verified")
      leftOut.push({
        table: "auth.mfa_factors",
        id: factor.id,
        reason: "unverified TOTP factor: not needed",
      });
    else if (factor.factor_type === "phone") out.push(factorRow(factor, "phone"));
    else if (factor.factor_type === "webauthn") webauthnFactor(factor, out, leftOut, notCarried);
    else if (factor.factor_type !== "totp")
      notCarried.push({
        table: "auth.mfa_factors",
        id: factor.id,
        reason: `${factor.factor_type} factor: not carried yet`,
      });
  }
  return {
    factors: out,
    activeMfaType: totp ? "totp" : null,
    totpSecret: totp && !totp.unreadable ? totp.secret : null,
    totpSecretUnreadable: unreadable,
  };
}

/**
 * A verified `webauthn` factor with its key, exactly (credential id, public key, counter): the user asserts it here
 * with the same authenticator. An unverified one never got its key (its registration never finished): not needed.
 */
function webauthnFactor(factor, out, leftOut, notCarried) {
  if (factor.status !== "verified") {
    leftOut.push({
      table: "auth.mfa_factors",
      id: factor.id,
      reason: "unverified WebAuthn factor: not needed",
    });
    return;
  }
  const { key, why } = factorKeyOf(factor.web_authn_credential);
  if (!key) {
    notCarried.push({ table: "auth.mfa_factors", id: factor.id, reason: `WebAuthn factor: ${why}` });
    return;
  }
  out.push({ ...factorRow(factor, "webauthn"), key });
}

function factorRow(factor, type) {
  return {
    id: factor.id,
    type,
    friendlyName: factor.friendly_name || null,
    status: factor.status === "verified" ? "verified" : "unverified",
    phone: type === "phone" ? (phoneOf(factor.phone) ?? null) : null,
    createdAt: iso(factor.created_at),
    updatedAt: iso(factor.updated_at) ?? iso(factor.created_at),
  };
}

/**
 * Rows of a bundle per table, to count them in the report with their user's outcome: the identities that are the
 * account itself (`own`, its email or phone) go with it too.
 */
export function supabaseBundleRows(bundle, own = 0) {
  return {
    "auth.identities": bundle.providers.length + own,
    "auth.mfa_factors": bundle.factors.length,
    "auth.webauthn_credentials": bundle.securityKeys.length,
    "auth.sessions": bundle.supabaseSessions.length,
    "auth.refresh_tokens": bundle.supabaseSessions.reduce((n, s) => n + s.refreshTokens.length, 0),
  };
}
