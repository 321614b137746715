import {
  type PublicKeyCredentialCreationOptionsJSON,
  verifyRegistrationResponse,
} from "@simplewebauthn/server";
import { isoBase64URL } from "@simplewebauthn/server/helpers";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
// The command's own translation of GoTrue's rows (scripts/import-supabase/webauthn.mjs), run on what GoTrue stores.
// @ts-expect-error: plain .mjs without types
import { factorKeyOf, passkeyRow } from "../../scripts/import-supabase/webauthn.mjs";
import { inBrowser } from "../faces/supabase/in-browser";
import { PUBLISHABLE_KEY, supabaseClient, supabaseService } from "../faces/supabase/support";
import { SoftwareAuthenticator } from "../fakes/authenticator";
import { PASSWORD, uniqueAddress } from "../helpers";
import { userD1 } from "../support/shards";
import { importUsers, iso, nhostBcrypt } from "./support";

/**
 * Supabase's WebAuthn keys through the import API (contract supabase.md §5): a `webauthn` MFA factor (GoTrue's
 * `auth.mfa_factors.web_authn_credential`, go-webauthn's `webauthn.Credential` as JSON: `[]byte` as standard base64)
 * and a passkey (`auth.webauthn_credentials`, bytea columns), each made by a software authenticator with real keys
 * (test/fakes/authenticator.ts), stored as GoTrue stores it, translated by the command's own functions, imported,
 * then used with the same authenticator through supabase-js: the factor steps a password session up to aal2, the
 * passkey signs the same user in.
 */

const ORIGIN = "http://localhost:3000";
const RP = { rpId: "localhost", rpOrigins: [ORIGIN] };
const svc = supabaseService({ AUTH_WEBAUTHN_ENABLED: "true", AUTH_MFA_ENABLED: "true" });
const client = () => supabaseClient(svc, PUBLISHABLE_KEY, { "cf-connecting-ip": uniqueAddress() });
const DAY = 86_400_000;

/** A credential the authenticator makes for `userId` (GoTrue's user handle: the id as text), as GoTrue verified it. */
async function credentialFor(device: SoftwareAuthenticator, userId: string) {
  const challenge = isoBase64URL.fromBuffer(crypto.getRandomValues(new Uint8Array(32)));
  const options: PublicKeyCredentialCreationOptionsJSON = {
    challenge,
    rp: { id: "localhost", name: "Supabase" },
    user: { id: isoBase64URL.fromUTF8String(userId), name: userId, displayName: userId },
    pubKeyCredParams: [{ type: "public-key", alg: -7 }],
  };
  const verified = await verifyRegistrationResponse({
    response: await device.create(options),
    expectedChallenge: challenge,
    expectedOrigin: ORIGIN,
    expectedRPID: "localhost",
  });
  const { id, publicKey, counter } = verified.registrationInfo!.credential;
  return { id: isoBase64URL.toBuffer(id), publicKey, counter };
}

/** go-webauthn's Credential as GoTrue's `web_authn_credential` column holds it. */
const goTrueCredential = (c: { id: Uint8Array; publicKey: Uint8Array; counter: number }) => ({
  id: Buffer.from(c.id).toString("base64"),
  publicKey: Buffer.from(c.publicKey).toString("base64"),
  attestationType: "none",
  transport: ["usb"],
  flags: { userPresent: true, userVerified: true, backupEligible: false, backupState: false },
  authenticator: {
    AAGUID: Buffer.alloc(16).toString("base64"),
    signCount: c.counter,
    cloneWarning: false,
    attachment: "",
  },
  attestation: { type: "", format: "none", clientDataJSON: null, authenticatorData: null, object: null },
});

async function supabaseUserWithKeys() {
  const id = crypto.randomUUID();
  const email = `sbwa-${id.slice(0, 8)}@example.com`;
  const factorDevice = new SoftwareAuthenticator(ORIGIN, "localhost");
  const passkeyDevice = new SoftwareAuthenticator(ORIGIN, "localhost");
  const factorKey = factorKeyOf(goTrueCredential(await credentialFor(factorDevice, id)));
  expect(factorKey.why).toBeNull();
  const passkey = await credentialFor(passkeyDevice, id);
  const factorId = crypto.randomUUID();
  const now = Date.now();
  const factor = {
    id: factorId,
    type: "webauthn",
    friendlyName: "yubikey",
    status: "verified",
    phone: null,
    key: factorKey.key,
    createdAt: iso(now - DAY),
    updatedAt: iso(now - DAY),
  };
  const bundle = {
    system: "supabase",
    id,
    createdAt: iso(now - 10 * DAY),
    updatedAt: iso(now - DAY),
    lastSeen: null,
    disabled: false,
    bannedUntil: null,
    displayName: "",
    avatarUrl: "",
    email,
    phoneNumber: null,
    emailVerified: true,
    phoneNumberVerified: false,
    newEmail: null,
    passwordHash: await nhostBcrypt(PASSWORD),
    isAnonymous: false,
    activeMfaType: null,
    totpSecret: null,
    totpSecretUnreadable: false,
    ticket: null,
    ticketExpiresAt: null,
    metadata: {},
    appMetadata: null,
    providers: [],
    securityKeys: [
      passkeyRow({
        id: crypto.randomUUID(),
        credential_id: passkey.id,
        public_key: passkey.publicKey,
        sign_count: passkey.counter,
        transports: ["internal", "hybrid"],
        friendly_name: "laptop",
      }),
    ],
    refreshTokens: [],
    factors: [factor],
  };
  return { id, email, factorId, factor, bundle, factorDevice, passkeyDevice };
}

describe("Supabase WebAuthn keys through the import API", () => {
  // Threat: a key that did not carry exactly would leave a user enrolled with a security key with a second factor
  // nobody can give (locked out), or, if dropped, with a password alone where Supabase asked for the key.
  it("an imported webauthn factor steps a password session up to aal2 with the same authenticator", async () => {
    const { id, email, factorId, bundle, factorDevice } = await supabaseUserWithKeys();
    expect((await importUsers(svc, [bundle])).results).toEqual([{ id, outcome: "imported" }]);

    const supabase = client();
    expect((await supabase.auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();
    const level = await supabase.auth.mfa.getAuthenticatorAssuranceLevel();
    expect(level.data).toMatchObject({ currentLevel: "aal1", nextLevel: "aal2" });
    const factors = await supabase.auth.mfa.listFactors();
    expect(factors.data?.all).toEqual([
      expect.objectContaining({
        id: factorId,
        factor_type: "webauthn",
        status: "verified",
        friendly_name: "yubikey",
      }),
    ]);
    const stepped = await inBrowser(factorDevice, () =>
      supabase.auth.mfa.webauthn.authenticate({ factorId, webauthn: RP }),
    );
    expect(stepped.error).toBeNull();
    expect(decodeJwt(stepped.data!.access_token)).toMatchObject({ sub: id, aal: "aal2" });
  });

  // Threat: a later run writing Supabase's older signature counter over the one grown here would weaken the
  // clone check (WebAuthn §6.1.1). Using a key here means a session here: the user's row and factors are kept.
  it("a later run keeps the factor as used here, its counter grown", async () => {
    const { id, email, factorId, bundle, factorDevice } = await supabaseUserWithKeys();
    await importUsers(svc, [bundle]);
    const supabase = client();
    await supabase.auth.signInWithPassword({ email, password: PASSWORD });
    const stepped = await inBrowser(factorDevice, () =>
      supabase.auth.mfa.webauthn.authenticate({ factorId, webauthn: RP }),
    );
    expect(stepped.error).toBeNull();
    const renamed = { ...bundle, factors: [{ ...bundle.factors[0], friendlyName: "renamed" }] };
    expect((await importUsers(svc, [renamed])).results).toEqual([
      expect.objectContaining({ id, outcome: "kept" }),
    ]);
    const row = await userD1(id)
      .prepare("SELECT friendly_name, secret FROM mfa_factors WHERE id = ?")
      .bind(factorId)
      .first<{ friendly_name: string; secret: string }>();
    expect(row?.friendly_name).toBe("yubikey");
    expect(JSON.parse(row!.secret).counter).toBe(1);
  });

  it("an imported passkey signs the same user in", async () => {
    const { id, bundle, passkeyDevice } = await supabaseUserWithKeys();
    await importUsers(svc, [bundle]);
    const { data, error } = await inBrowser(passkeyDevice, () => client().auth.signInWithPasskey());
    expect(error).toBeNull();
    expect(data?.user?.id).toBe(id);
  });

  it("a verified webauthn factor without its key is refused, the user with it", async () => {
    const { id, bundle } = await supabaseUserWithKeys();
    const keyless = { ...bundle, factors: [{ ...bundle.factors[0], key: null }] };
    const answer = await importUsers(svc, [keyless]);
    expect(answer.results).toEqual([
      {
        id,
        outcome: "skipped",
        reasons: [
          expect.objectContaining({
            table: "auth.mfa_factors",
            reason: expect.stringMatching(/without its key/),
          }),
        ],
      },
    ]);
  });
});
