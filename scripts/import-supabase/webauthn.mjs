// GoTrue's WebAuthn keys in the core's terms: the `webauthn` MFA factors (`auth.mfa_factors.web_authn_credential`)
// and the newer passkeys (`auth.webauthn_credentials`, GoTrue 2026). Pure functions: no I/O.
//
// A key carries exactly: its credential id and COSE public key (base64url here, as the browser reports them and the
// core stores them), its signature counter and transports. GoTrue's user handle is the user's id as text, as the
// core's is (src/auth/webauthn/registration.ts), so a discoverable passkey names the same user after the move.

/** Bytes as base64url. Go's encoding/json writes `[]byte` as standard base64 with padding. */
const fromStdBase64 = (value) => Buffer.from(value, "base64").toString("base64url");

const STD_BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * The key of a verified `webauthn` factor: GoTrue's column holds go-webauthn's `webauthn.Credential` as JSON
 * (`id`, `publicKey`: []byte; `transport`; `authenticator.signCount`). Null with the reason when it can't be read.
 */
export function factorKeyOf(credential) {
  const value = typeof credential === "string" ? safeJson(credential) : credential;
  if (!value || typeof value !== "object") return { key: null, why: "no web_authn_credential" };
  const { id, publicKey, transport, authenticator } = value;
  if (typeof id !== "string" || !STD_BASE64.test(id)) return { key: null, why: "credential id unreadable" };
  if (typeof publicKey !== "string" || !STD_BASE64.test(publicKey))
    return { key: null, why: "public key unreadable" };
  const counter = Number(authenticator?.signCount ?? 0);
  return {
    key: {
      credentialId: fromStdBase64(id),
      publicKey: fromStdBase64(publicKey),
      counter: Number.isSafeInteger(counter) && counter >= 0 ? counter : 0,
      transports: Array.isArray(transport) ? transport.filter((t) => typeof t === "string").slice(0, 10) : [],
    },
    why: null,
  };
}

function safeJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/**
 * A passkey (`auth.webauthn_credentials`: bytea credential id and public key) as the wire's security key (the
 * Nhost import's `securityKeys`, whose transports are one comma-separated text as Nhost's column holds them).
 */
export function passkeyRow(row) {
  const transports = Array.isArray(row.transports) ? row.transports.filter((t) => typeof t === "string") : [];
  return {
    id: row.id,
    credentialId: Buffer.from(row.credential_id).toString("base64url"),
    publicKey: Buffer.from(row.public_key).toString("base64url"),
    counter: Number(row.sign_count ?? 0),
    transports: transports.join(",") || null,
    nickname: row.friendly_name ? String(row.friendly_name).slice(0, 255) : null,
  };
}
