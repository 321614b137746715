// The harness of the Nhost import's tests (issue 29): a real Postgres with Nhost's own migrations, and rows seeded
// as Nhost writes them. Each check reads a row back by a route independent of the seeding code (Postgres's sha256,
// bcryptjs's compare, a decryption written from the contract's words), so a wrong fixture fails here and not as a
// puzzling import failure later. Needs Node only, not the `wrangler dev` this project starts.
import { createDecipheriv, createHash } from "node:crypto";
import { decodeBase32IgnorePadding, decodeBase64urlIgnorePadding } from "@oslojs/encoding";
import { isoCBOR } from "@simplewebauthn/server/helpers";
import bcrypt from "bcryptjs";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedBucket, seedFile, seedUser } from "../fixtures/nhost/seed";
import { loadNhostSchema, type RunningPostgres, startPostgres } from "../support/postgres";

const KEY = "6368616e676520746869732070617373776f726420746f206120736563726574"; // 32 bytes, hex

/** move-in.md §1: hex-decode, nonce = the first 12 bytes, the last 16 the GCM tag, no AAD. */
function decryptTotp(column: string, keyHex: string): string {
  const bytes = Buffer.from(column, "hex");
  const decipher = createDecipheriv("aes-256-gcm", Buffer.from(keyHex, "hex"), bytes.subarray(0, 12));
  decipher.setAuthTag(bytes.subarray(bytes.length - 16));
  return Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]).toString(
    "utf8",
  );
}

let postgres: RunningPostgres;
let db: pg.Client;

beforeAll(async () => {
  postgres = await startPostgres();
  await loadNhostSchema(postgres.url);
  db = new pg.Client({ connectionString: postgres.url });
  await db.connect();
});

afterAll(async () => {
  await db?.end();
  await postgres?.stop();
});

describe("Nhost's schema from its own migrations", () => {
  it("is at auth 00020 and storage 000005, as golang-migrate records it", async () => {
    const auth = await db.query("SELECT version, dirty FROM auth.schema_migrations");
    const storage = await db.query("SELECT version, dirty FROM storage.schema_migrations");
    expect(auth.rows).toEqual([{ version: "20", dirty: false }]);
    expect(storage.rows).toEqual([{ version: "5", dirty: false }]);
  });

  it("has the column types the importer reads", async () => {
    const { rows } = await db.query<{ name: string; type: string }>(
      `SELECT c.relname || '.' || a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type
       FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
       WHERE c.relnamespace = 'auth'::regnamespace AND a.attnum > 0
         AND c.relname || '.' || a.attname = ANY($1)`,
      [["users.email", "users.locale", "users.totp_secret", "refresh_tokens.refresh_token_hash"]],
    );
    expect(Object.fromEntries(rows.map((r) => [r.name, r.type]))).toEqual({
      "users.email": "auth.email",
      "users.locale": "character varying(3)",
      "users.totp_secret": "text",
      "refresh_tokens.refresh_token_hash": "character varying(255)",
    });
  });
});

describe("a user seeded with every part", () => {
  it("reads back as Nhost would read it", async () => {
    const user = await seedUser(db, {
      email: "Mixed.Case@Example.com",
      roles: ["user", "me", "editor"],
      metadata: { plan: "pro" },
      ticket: { type: "verifyEmail" },
      totp: { encryptionKey: KEY },
      providers: [{ providerId: "github", providerUserId: "4242" }],
      securityKeys: [{ nickname: "YubiKey" }],
      refreshTokens: [{}, {}],
      pat: { metadata: { name: "ci" } },
    });

    const { rows } = await db.query("SELECT * FROM auth.users WHERE email = 'mixed.case@example.com'");
    const row = rows[0];
    expect(row.id).toBe(user.id); // citext: found lower-cased
    expect(row.email).toBe("Mixed.Case@Example.com");
    expect(row.password_hash).toMatch(/^\$2a\$10\$/);
    expect(bcrypt.compareSync(user.password!, row.password_hash)).toBe(true);
    expect(row.metadata).toEqual({ plan: "pro" });
    expect(row.active_mfa_type).toBe("totp");
    expect(row.ticket).toMatch(/^verifyEmail:[0-9a-f-]{36}$/);
    expect(row.ticket_expires_at.getTime()).toBeGreaterThan(Date.now() + 29 * 24 * 3600 * 1000);

    expect(decryptTotp(row.totp_secret, KEY)).toBe(user.totpSecret);
    expect(decodeBase32IgnorePadding(user.totpSecret!)).toHaveLength(20);

    const roles = await db.query("SELECT role FROM auth.user_roles WHERE user_id = $1 ORDER BY role", [
      user.id,
    ]);
    expect(roles.rows.map((r) => r.role)).toEqual(["editor", "me", "user"]);

    const providers = await db.query("SELECT * FROM auth.user_providers WHERE user_id = $1", [user.id]);
    expect(providers.rows).toMatchObject([
      { provider_id: "github", provider_user_id: "4242", access_token: "unset" },
    ]);

    // Each hash as auth 00011's generated column made it, computed by Postgres: `\x` || hex(sha256(token text)).
    const held = [...user.refreshTokens.map((t) => [t, "regular"]), [user.pat!, "pat"]];
    for (const [token, type] of held) {
      const found = await db.query(
        `SELECT type, refresh_token_hash FROM auth.refresh_tokens
         WHERE user_id = $1 AND refresh_token_hash = sha256($2::text::bytea)::varchar`,
        [user.id, token],
      );
      expect(found.rows).toEqual([{ type, refresh_token_hash: `\\x${sha256(token!)}` }]);
    }
  });

  it("keeps a security key whose public key verifies what its private key signs", async () => {
    const user = await seedUser(db, { securityKeys: [{ counter: 7 }] });
    const { rows } = await db.query("SELECT * FROM auth.user_security_keys WHERE user_id = $1", [user.id]);
    const [key] = user.securityKeys;
    expect(rows[0]).toMatchObject({
      credential_id: key!.credentialId,
      counter: "7",
      transports: "",
      nickname: null,
    });
    expect(key!.credentialId).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeBase64urlIgnorePadding(rows[0].credential_id)).toEqual(key!.credential.id);
    expect(new TextDecoder().decode(decodeBase64urlIgnorePadding(key!.credential.userHandle))).toBe(user.id);

    // COSE_Key (EC2, P-256) → JWK, then a signature by the seeded private key.
    const cose = isoCBOR.decodeFirst<Map<number, number | Uint8Array>>(
      new Uint8Array(rows[0].credential_public_key),
    );
    const b64u = (value: unknown) => Buffer.from(value as Uint8Array).toString("base64url");
    const publicKey = await crypto.subtle.importKey(
      "jwk",
      { kty: "EC", crv: "P-256", x: b64u(cose.get(-2)), y: b64u(cose.get(-3)) },
      { name: "ECDSA", namedCurve: "P-256" },
      false,
      ["verify"],
    );
    const data = new TextEncoder().encode("assertion");
    const signature = await crypto.subtle.sign(
      { name: "ECDSA", hash: "SHA-256" },
      key!.credential.privateKey,
      data,
    );
    expect(await crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, publicKey, signature, data)).toBe(
      true,
    );
  });

  it("keeps a TOTP secret from before Nhost Auth 0.43 as plain base32", async () => {
    const user = await seedUser(db, { totp: {}, refreshTokens: [] });
    const { rows } = await db.query("SELECT totp_secret FROM auth.users WHERE id = $1", [user.id]);
    expect(rows[0].totp_secret).toBe(user.totpSecret);
    expect(rows[0].totp_secret.length).toBeLessThan(64);
  });
});

describe("storage rows", () => {
  it("keep the bucket's limits and the file's quoted etag", async () => {
    const bucket = await seedBucket(db, {
      id: "avatars",
      maxUploadFileSize: 1_000_000,
      presignedUrlsEnabled: false,
    });
    const owner = await seedUser(db);
    const file = await seedFile(db, {
      bucketId: bucket,
      name: "me.png",
      bytes: "png bytes",
      mimeType: "image/png",
      uploadedByUserId: owner.id,
      metadata: { alt: "me" },
    });
    const buckets = await db.query("SELECT * FROM storage.buckets WHERE id = $1", [bucket]);
    expect(buckets.rows[0]).toMatchObject({
      download_expiration: 30,
      min_upload_file_size: 1,
      max_upload_file_size: 1_000_000,
      cache_control: "max-age=3600",
      presigned_urls_enabled: false,
    });
    const files = await db.query("SELECT * FROM storage.files WHERE id = $1", [file.id]);
    expect(files.rows[0]).toMatchObject({
      bucket_id: "avatars",
      name: "me.png",
      size: 9,
      mime_type: "image/png",
      etag: `"${createHash("md5").update("png bytes").digest("hex")}"`,
      is_uploaded: true,
      uploaded_by_user_id: owner.id,
      metadata: { alt: "me" },
    });
  });
});

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
