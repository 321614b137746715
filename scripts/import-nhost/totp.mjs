// TOTP secrets as Nhost stores them in auth.users.totp_secret (contract move-in §1). Since Nhost Auth 0.43 the column
// holds hex(nonce(12) || AES-GCM ciphertext || tag(16)) under Nhost's AUTH_ENCRYPTION_KEY, no AAD; older rows
// (and older versions) hold the base32 secret itself. Nhost's secrets are 32 bytes, 52 base32 characters, so a value
// shorter than 64 characters is plain and a longer one is encrypted.
import { createDecipheriv } from "node:crypto";

const ENCRYPTED_FROM = 64;
const NONCE = 12;
const TAG = 16;
const BASE32 = /^[A-Z2-7]+=*$/;

/**
 * NHOST_ENCRYPTION_KEY (the environment): Nhost's AUTH_ENCRYPTION_KEY, hex. 32 bytes (AES-256) is what Nhost asks for; like Go's
 * aes.NewCipher, which picks AES-128/192/256 by the key's length, 16 and 24 bytes are taken too. Throws a message for
 * the usage error otherwise.
 */
export function parseEncryptionKey(hex) {
  const value = hex.trim();
  if (!/^(?:[0-9a-fA-F]{32}|[0-9a-fA-F]{48}|[0-9a-fA-F]{64})$/.test(value))
    throw new Error(
      "NHOST_ENCRYPTION_KEY must be Nhost's AUTH_ENCRYPTION_KEY: 64 hex characters (32 bytes; 16 or 24 bytes taken too)",
    );
  return Buffer.from(value, "hex");
}

/**
 * The plain base32 secret of a `totp_secret` value, or why it can't be read. `{secret: null, unreadable: false}`
 * when there is no secret at all; `unreadable: true` when Nhost had one and this key does not open it (the server
 * then keeps the user's MFA on without a secret: sign-in refused until an admin resets it, never downgraded).
 */
export function readTotpSecret(value, key) {
  if (value === null || value === undefined || value === "") return { secret: null, unreadable: false };
  if (value.length < ENCRYPTED_FROM) return { secret: value, unreadable: false };
  if (!key)
    return { secret: null, unreadable: true, why: "encrypted, and no NHOST_ENCRYPTION_KEY was given" };
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(value) || value.length / 2 < NONCE + TAG + 1)
    return { secret: null, unreadable: true, why: "neither base32 nor Nhost's encrypted format" };
  const bytes = Buffer.from(value, "hex");
  try {
    const decipher = createDecipheriv(`aes-${key.length * 8}-gcm`, key, bytes.subarray(0, NONCE));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG));
    const plain = Buffer.concat([
      decipher.update(bytes.subarray(NONCE, bytes.length - TAG)),
      decipher.final(),
    ]).toString("utf8");
    if (!BASE32.test(plain.toUpperCase()))
      return { secret: null, unreadable: true, why: "decrypts to something that is not base32" };
    return { secret: plain, unreadable: false };
  } catch {
    // GCM's tag check: a wrong key (or a damaged value) fails here rather than giving garbage.
    return { secret: null, unreadable: true, why: "does not decrypt with the given NHOST_ENCRYPTION_KEY" };
  }
}
