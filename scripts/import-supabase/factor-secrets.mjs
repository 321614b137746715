// TOTP secrets as GoTrue stores them in auth.mfa_factors.secret (internal/models/factor.go `SetSecret`): the base32
// secret itself, or, with GOTRUE_SECURITY_DB_ENCRYPTION_ENCRYPT=true, the JSON of crypto.EncryptedString:
// {"key_id", "alg": "aes-gcm-hkdf", "data": base64(ciphertext ‖ tag), "nonce": base64(12 bytes)}. Its AES-256-GCM key
// is HKDF-SHA256 of the named key (base64url, 32 bytes), no salt, the factor's id as info (internal/crypto/crypto.go
// `deriveSymmetricKey`), no additional data.
import { createDecipheriv, hkdfSync } from "node:crypto";

const BASE32 = /^[A-Z2-7]+=*$/;

/**
 * SUPABASE_ENCRYPTION_KEY (the environment): GoTrue's `GOTRUE_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY` (base64url, 32
 * bytes), taken for any key id; or `id:key` pairs separated by commas, as its `…_DECRYPTION_KEYS`. Answers key id →
 * key bytes (`*` for a key of any id). Throws a message for the usage error otherwise.
 */
export function parseSupabaseKeys(value) {
  const keys = new Map();
  for (const part of value
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean)) {
    const at = part.lastIndexOf(":");
    const [id, text] = at === -1 ? ["*", part] : [part.slice(0, at), part.slice(at + 1)];
    const bytes = /^[A-Za-z0-9_-]+$/.test(text) ? Buffer.from(text, "base64url") : Buffer.alloc(0);
    if (bytes.length !== 32)
      throw new Error(
        "SUPABASE_ENCRYPTION_KEY must be GoTrue's DB encryption key (base64url of 32 bytes), or id:key pairs " +
          "separated by commas",
      );
    keys.set(id, bytes);
  }
  if (keys.size === 0) throw new Error("SUPABASE_ENCRYPTION_KEY is empty");
  return keys;
}

/** Seals a secret as GoTrue does (for tests and fixtures: the same layout `readFactorSecret` opens). */
export function gotrueKey(keyBytes, factorId) {
  return Buffer.from(hkdfSync("sha256", keyBytes, Buffer.alloc(0), Buffer.from(factorId, "utf8"), 32));
}

/**
 * The plain base32 secret of a factor's `secret` column, or why it can't be read: `{secret, unreadable: false}`, or
 * `{secret: null, unreadable: true, why}`. `keys`: parseSupabaseKeys's map, or null.
 */
export function readFactorSecret(value, factorId, keys) {
  if (value === null || value === undefined || value === "") return { secret: null, unreadable: false };
  if (!value.startsWith("{")) {
    const plain = value.replace(/\s+/g, "").toUpperCase();
    return BASE32.test(plain)
      ? { secret: plain, unreadable: false }
      : { secret: null, unreadable: true, why: "neither base32 nor GoTrue's encrypted format" };
  }
  const opened = openEncryptedString(value, factorId, keys);
  if (opened.why) return { secret: null, unreadable: true, why: opened.why };
  const plain = opened.plain.toUpperCase();
  if (!BASE32.test(plain))
    return { secret: null, unreadable: true, why: "decrypts to something that is not base32" };
  return { secret: plain, unreadable: false };
}

/**
 * Opens a crypto.EncryptedString of GoTrue (a TOTP secret, a session's refresh_token_hmac_key), sealed with `id` (the
 * row's) as the HKDF info: `{plain}` (utf-8), or `{why}` it can't be read. `keys`: parseSupabaseKeys's map, or null.
 */
export function openEncryptedString(value, id, keys) {
  let sealed;
  try {
    sealed = JSON.parse(value);
  } catch {
    return { why: "neither base32 nor GoTrue's encrypted format" };
  }
  const nonce = Buffer.from(String(sealed?.nonce ?? ""), "base64");
  const data = Buffer.from(String(sealed?.data ?? ""), "base64");
  if (sealed?.alg !== "aes-gcm-hkdf" || !sealed.key_id || nonce.length !== 12 || data.length <= 16)
    return { why: "GoTrue's encrypted format, damaged" };
  const key = keys?.get(sealed.key_id) ?? keys?.get("*");
  if (!key)
    return { why: `encrypted under key "${sealed.key_id}", and SUPABASE_ENCRYPTION_KEY does not hold it` };
  try {
    const decipher = createDecipheriv("aes-256-gcm", gotrueKey(key, id), nonce);
    decipher.setAuthTag(data.subarray(data.length - 16));
    return {
      plain: Buffer.concat([decipher.update(data.subarray(0, data.length - 16)), decipher.final()]).toString(
        "utf8",
      ),
    };
  } catch {
    // GCM's tag: a wrong key, or a value moved to another row (the id is in the key), fails here.
    return { why: "does not decrypt with SUPABASE_ENCRYPTION_KEY" };
  }
}
