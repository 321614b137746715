// `npm run admin -- import-supabase` (scripts/import-supabase/): its pure parts, in Node. GoTrue's TOTP secrets
// (plain, or sealed as crypto.EncryptedString), the pending links GoTrue mailed, and the UserBundle built from
// Supabase's rows. The run against Postgres and the service is tested end to end in
// test/compat/supabase-import.test.ts.
import { execFile } from "node:child_process";
import { createCipheriv, randomBytes, randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  gotrueKey,
  parseSupabaseKeys,
  readFactorSecret,
  // @ts-expect-error: plain .mjs without types
} from "../../scripts/import-supabase/factor-secrets.mjs";
// @ts-expect-error: plain .mjs without types
import { pendingLinks } from "../../scripts/import-supabase/pending-links.mjs";
// @ts-expect-error: plain .mjs without types
import { derivedId } from "../../scripts/import-supabase/read-supabase.mjs";
// @ts-expect-error: plain .mjs without types
import { orgOf } from "../../scripts/import-supabase/sso.mjs";
import {
  appMetadataOf,
  buildSupabaseBundle,
  notSent,
  supabaseBundleRows,
  // @ts-expect-error: plain .mjs without types
} from "../../scripts/import-supabase/user-bundles.mjs";
import { gotrueTokenHash } from "../fixtures/supabase/seed";

const KEY = randomBytes(32).toString("base64url");
const SECRET = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";

/** As crypto.NewEncryptedString writes it (internal/crypto/crypto.go). */
function seal(factorId: string, plain: string, key = KEY, keyId = "key-1"): string {
  const nonce = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", gotrueKey(Buffer.from(key, "base64url"), factorId), nonce);
  const data = Buffer.concat([cipher.update(plain, "utf8"), cipher.final(), cipher.getAuthTag()]);
  return JSON.stringify({
    key_id: keyId,
    alg: "aes-gcm-hkdf",
    data: data.toString("base64"),
    nonce: nonce.toString("base64"),
  });
}

describe("TOTP secrets as GoTrue stores them", () => {
  const id = randomUUID();

  it("opens crypto.EncryptedString with the key of its key id, or with a bare key of any id", () => {
    const column = seal(id, SECRET);
    expect(readFactorSecret(column, id, parseSupabaseKeys(`key-1:${KEY}`))).toEqual({
      secret: SECRET,
      unreadable: false,
    });
    expect(readFactorSecret(column, id, parseSupabaseKeys(KEY))).toEqual({
      secret: SECRET,
      unreadable: false,
    });
  });

  it("takes a plain base32 secret as it is", () => {
    expect(readFactorSecret(SECRET, id, null)).toEqual({ secret: SECRET, unreadable: false });
  });

  // Threat: a sealed secret copied onto another factor's row (the id is HKDF's info) must not open there.
  it("says unreadable without the key, with another key id, under another factor's id, or damaged", () => {
    const column = seal(id, SECRET);
    expect(readFactorSecret(column, id, null)).toMatchObject({ secret: null, unreadable: true });
    expect(readFactorSecret(column, id, parseSupabaseKeys(`key-2:${KEY}`))).toMatchObject({
      unreadable: true,
    });
    expect(readFactorSecret(column, randomUUID(), parseSupabaseKeys(KEY))).toMatchObject({
      unreadable: true,
    });
    expect(readFactorSecret("{not json", id, parseSupabaseKeys(KEY))).toMatchObject({ unreadable: true });
  });

  it("refuses a key that is not 32 bytes of base64url", () => {
    expect(() => parseSupabaseKeys("short")).toThrow(/32 bytes/);
    expect(() => parseSupabaseKeys(`a:${KEY},b:nope`)).toThrow(/32 bytes/);
  });
});

describe("links GoTrue mailed before the move", () => {
  const now = Date.parse("2026-01-02T00:00:00Z");
  const hash = gotrueTokenHash("ana@example.com", "123456");
  const sentAt = new Date(now - 3600_000);

  it("carries a pending confirmation as a ticket of its hash, until GoTrue's OTP lifetime ends", () => {
    const user = { confirmation_token: hash, confirmation_sent_at: sentAt };
    const tokens = [{ token_type: "confirmation_token", token_hash: hash }];
    expect(pendingLinks(user, tokens, { now, otpExpiry: 86_400 })).toEqual({
      ticket: `verifyEmail:${hash}`,
      ticketExpiresAt: new Date(sentAt.getTime() + 86_400_000).toISOString(),
      leftOut: [],
    });
    expect(pendingLinks(user, tokens, { now, otpExpiry: 60 })).toMatchObject({ ticket: null });
  });

  it("takes a PKCE link by its bare hash, and the users' columns alone before one_time_tokens existed", () => {
    const user = { recovery_token: `pkce_${hash}`, recovery_sent_at: sentAt };
    expect(pendingLinks(user, null, { now })).toMatchObject({ ticket: `passwordReset:${hash}` });
  });

  // Threat: GoTrue's secure email change asks both addresses; the new address's link alone must not complete it.
  it("leaves an email change awaiting the current address's confirmation", () => {
    const user = {
      email_change_token_new: hash,
      email_change_token_current: gotrueTokenHash("old@example.com", "654321"),
      email_change_confirm_status: 0,
      email_change_sent_at: sentAt,
    };
    expect(pendingLinks(user, null, { now })).toMatchObject({
      ticket: null,
      leftOut: [expect.stringMatching(/both/)],
    });
    expect(pendingLinks({ ...user, email_change_confirm_status: 1 }, null, { now })).toMatchObject({
      ticket: `emailConfirmChange:${hash}`,
    });
  });
});

describe("the UserBundle built from Supabase's rows", () => {
  const now = Date.now();
  const base = {
    id: randomUUID(),
    email: "ana@example.com",
    encrypted_password: "$2a$10$abcdefghijklmnopqrstuu5b0mC7XgJ8mPf6mYJ6mC7XgJ8mPf6mYJ",
    email_confirmed_at: new Date(now),
    created_at: new Date(now),
    updated_at: new Date(now),
    raw_user_meta_data: { full_name: "Ana" },
    raw_app_meta_data: { provider: "email", providers: ["email", "github"], tier: "gold" },
    phone: "15551234567",
    phone_confirmed_at: null,
  };

  it("carries app_metadata without provider/providers, the number as E.164, the linked identities", () => {
    const identities = [
      { id: randomUUID(), provider: "email", provider_id: base.id },
      { id: randomUUID(), provider: "github", provider_id: "42" },
    ];
    const { bundle, own } = buildSupabaseBundle(base, { identities }, { now, otpExpiry: 86_400 });
    // The email identity is the account itself: counted with the user, not linked as a provider.
    expect(own).toBe(1);
    expect(bundle).toMatchObject({
      system: "supabase",
      appMetadata: { tier: "gold" },
      metadata: { full_name: "Ana" },
      displayName: "Ana",
      phoneNumber: "+15551234567",
      emailVerified: true,
      disabled: false,
      bannedUntil: null,
      providers: [{ providerId: "github", providerUserId: "42" }],
    });
    expect(appMetadataOf({ provider: "email", providers: ["email"] })).toBeNull();
  });

  it("a ban still running disables the user until then; one that ended does not", () => {
    const until = new Date(now + 3600_000);
    expect(buildSupabaseBundle({ ...base, banned_until: until }, {}, { now }).bundle).toMatchObject({
      disabled: true,
      bannedUntil: until.toISOString(),
    });
    expect(
      buildSupabaseBundle({ ...base, banned_until: new Date(now - 1) }, {}, { now }).bundle,
    ).toMatchObject({
      disabled: false,
      bannedUntil: null,
    });
  });

  it("a verified TOTP factor it can't open keeps MFA on and is listed; unverified ones are not needed", () => {
    const factors = [
      { id: randomUUID(), factor_type: "totp", status: "verified", secret: seal(randomUUID(), SECRET) },
      { id: randomUUID(), factor_type: "totp", status: "unverified", secret: SECRET },
      { id: randomUUID(), factor_type: "webauthn", status: "verified" },
    ];
    const built = buildSupabaseBundle(base, { factors }, { now, keys: null });
    expect(built.bundle).toMatchObject({
      activeMfaType: "totp",
      totpSecret: null,
      totpSecretUnreadable: true,
      factors: [],
    });
    expect(built.notCarried.map((row: { reason: string }) => row.reason)).toEqual([
      expect.stringMatching(/TOTP secret unreadable/),
      expect.stringMatching(/WebAuthn factor: no web_authn_credential/),
    ]);
    expect(built.leftOut).toEqual([
      expect.objectContaining({ reason: "unverified TOTP factor: not needed" }),
    ]);
  });

  it("a WebAuthn factor's go-webauthn JSON and a passkey's bytea columns become base64url keys, exactly", () => {
    const id = randomBytes(32);
    const cose = randomBytes(77);
    const factor = {
      id: randomUUID(),
      factor_type: "webauthn",
      status: "verified",
      web_authn_credential: {
        id: id.toString("base64"),
        publicKey: cose.toString("base64"),
        transport: ["usb", "nfc"],
        authenticator: { AAGUID: Buffer.alloc(16).toString("base64"), signCount: 7, cloneWarning: false },
      },
    };
    const unverified = { id: randomUUID(), factor_type: "webauthn", status: "unverified" };
    const passkey = {
      id: randomUUID(),
      credential_id: id,
      public_key: cose,
      sign_count: "3",
      transports: ["internal"],
      friendly_name: "laptop",
    };
    const built = buildSupabaseBundle(base, { factors: [factor, unverified], passkeys: [passkey] }, { now });
    expect(built.bundle.factors).toEqual([
      expect.objectContaining({
        id: factor.id,
        type: "webauthn",
        key: {
          credentialId: id.toString("base64url"),
          publicKey: cose.toString("base64url"),
          counter: 7,
          transports: ["usb", "nfc"],
        },
      }),
    ]);
    expect(built.bundle.securityKeys).toEqual([
      {
        id: passkey.id,
        credentialId: id.toString("base64url"),
        publicKey: cose.toString("base64url"),
        counter: 3,
        transports: "internal",
        nickname: "laptop",
      },
    ]);
    expect(built.leftOut).toEqual([
      expect.objectContaining({ reason: "unverified WebAuthn factor: not needed" }),
    ]);
    const broken = { ...factor, web_authn_credential: { ...factor.web_authn_credential, publicKey: "%%" } };
    expect(buildSupabaseBundle(base, { factors: [broken] }, { now }).notCarried).toEqual([
      expect.objectContaining({ reason: "WebAuthn factor: public key unreadable" }),
    ]);
  });

  it("soft-deleted users stay behind; SSO users are sent", () => {
    expect(notSent({ ...base, deleted_at: new Date() })).toEqual({
      leftOut: expect.stringMatching(/soft-deleted/),
    });
    expect(notSent({ ...base, is_sso_user: true })).toBeNull();
    expect(notSent(base)).toBeNull();
  });

  // Threat: an SSO identity counted as carried while no SAML sign-in here could find its user (the address outside
  // the provider's domains, which the service's connection requires) would let an exit 0 hide a locked-out user.
  it("an SSO identity travels as the address inside its provider's domains, else is listed", () => {
    const providerId = randomUUID();
    const sso = { ...base, is_sso_user: true, encrypted_password: "", email: "jane@corp.test" };
    const identity = { id: randomUUID(), provider: `sso:${providerId}`, provider_id: "00u1-nameid" };
    const ssoDomains = new Map([[providerId, new Set(["corp.test"])]]);
    const inside = buildSupabaseBundle(sso, { identities: [identity] }, { now, ssoDomains });
    expect(inside.notCarried).toEqual([]);
    expect(inside.bundle).toMatchObject({ email: "jane@corp.test", emailVerified: true, providers: [] });
    expect(supabaseBundleRows(inside.bundle, inside.own)["auth.identities"]).toBe(1);
    const outside = buildSupabaseBundle(
      { ...sso, email: "jane@elsewhere.test" },
      { identities: [identity] },
      {
        now,
        ssoDomains,
      },
    );
    expect(outside.notCarried).toEqual([
      expect.objectContaining({
        id: identity.id,
        reason: expect.stringMatching(/outside the provider's domains/),
      }),
    ]);
    const gone = buildSupabaseBundle(sso, { identities: [identity] }, { now, ssoDomains: new Map() });
    expect(gone.notCarried).toEqual([
      expect.objectContaining({ reason: expect.stringMatching(/no longer has/) }),
    ]);
  });

  it("an SSO provider becomes an org named by its resource id, else its first domain; no SAML provider, no org", () => {
    const provider = {
      id: randomUUID(),
      resource_id: null,
      disabled: true,
      saml_id: randomUUID(),
      entity_id: "https://idp.test/metadata",
      metadata_xml: "<EntityDescriptor/>",
      attribute_mapping: { keys: { email: { name: "mail" } } },
      name_id_format: null,
      domains: ["corp.test", "corp2.test"],
    };
    expect(orgOf(provider).org).toEqual({
      id: provider.id,
      name: "corp.test",
      domains: ["corp.test", "corp2.test"],
      saml: {
        metadataXml: "<EntityDescriptor/>",
        nameIdFormat: null,
        attributeMapping: provider.attribute_mapping,
      },
      enabled: false,
    });
    expect(orgOf({ ...provider, resource_id: "acme-okta" }).org.name).toBe("acme-okta");
    expect(orgOf({ ...provider, saml_id: null })).toEqual({
      reason: expect.stringMatching(/without a SAML provider/),
    });
    // Past the connection's bounds: one line for this provider, not a refused batch that stops the run.
    expect(orgOf({ ...provider, metadata_xml: "x".repeat(60_001) })).toEqual({
      reason: expect.stringMatching(/at most 60000/),
    });
  });

  it("derives the same uuid for an identity GoTrue keyed by its subject, on every run", () => {
    expect(derivedId("github", "42")).toBe(derivedId("github", "42"));
    expect(derivedId("github", "42")).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  });
});

/** The command as a person runs it, against nothing (port 1 refuses at once): only what it says is checked. */
function runCommand(args: string[], env: Record<string, string>): Promise<{ code: number; output: string }> {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !/^(AUTH_URL|ADMIN_SECRET|SUPABASE_.*|NHOST_.*)$/.test(name),
    ),
  );
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [
        "scripts/admin.mjs",
        "import-supabase",
        "--dry-run",
        "--server",
        "http://127.0.0.1:1/auth/v1",
        ...args,
      ],
      { env: { ...clean, NO_COLOR: "1", ADMIN_SECRET: "admin-secret-5d1e", ...env }, timeout: 30_000 },
      (error, stdout, stderr) =>
        resolve({
          code: error ? (typeof error.code === "number" ? error.code : -1) : 0,
          output: `${stdout}${stderr}`,
        }),
    );
  });
}

// Threat: npm prints the command line it runs; a secret given as a flag lands in terminals, CI logs and `ps`.
describe("import-supabase: secrets from the environment", () => {
  const DB_PASSWORD = "pw-1b9e7c3a-db";

  it("reads the database URL from SUPABASE_DATABASE_URL and never prints its password", async () => {
    const result = await runCommand([], {
      SUPABASE_DATABASE_URL: `postgres://postgres:${DB_PASSWORD}@127.0.0.1:1/postgres`,
    });
    expect(result.code, result.output).toBe(1);
    expect(result.output).toContain(
      "cannot connect to the Supabase database at postgres://postgres:***@127.0.0.1:1/postgres",
    );
    expect(result.output).not.toContain(DB_PASSWORD);
  });

  it("refuses the key and a password-holding URL as flags, and a malformed key, never repeating them", async () => {
    const database = { SUPABASE_DATABASE_URL: "postgres://postgres@127.0.0.1:1/postgres" };
    const flag = await runCommand(["--supabase-encryption-key", KEY], database);
    expect(flag.code).toBe(2);
    expect(flag.output).toContain("SUPABASE_ENCRYPTION_KEY");
    expect(flag.output).not.toContain(KEY);
    const anon = await runCommand(["--supabase-anon-key", "eyJ.anon.key"], database);
    expect(anon.code).toBe(2);
    expect(anon.output).toContain("SUPABASE_ANON_KEY");
    expect(anon.output).not.toContain("eyJ.anon.key");
    const url = await runCommand(["--database-url", `postgres://postgres:${DB_PASSWORD}@127.0.0.1:1/db`], {});
    expect(url.code).toBe(2);
    expect(url.output).toContain("SUPABASE_DATABASE_URL");
    expect(url.output).not.toContain(DB_PASSWORD);
    const malformed = await runCommand([], { ...database, SUPABASE_ENCRYPTION_KEY: `${KEY}x!` });
    expect(malformed.code).toBe(2);
    expect(malformed.output).toContain("SUPABASE_ENCRYPTION_KEY must be");
    expect(malformed.output).not.toContain(KEY);
  });
});
