import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from "@simplewebauthn/server";
import type { SupabaseClient } from "@supabase/supabase-js";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { SoftwareAuthenticator } from "../../fakes/authenticator";
import { PASSWORD, uniqueAddress, uniqueEmail } from "../../helpers";
import { userD1 } from "../../support/shards";
import { inBrowser } from "./in-browser";
import { FACE, PUBLISHABLE_KEY, supabaseClient, supabaseService } from "./support";

/**
 * auth-js's `webauthn` MFA factors (contract supabase.md §2), driven by the real supabase-js: `mfa.webauthn.register`
 * and `mfa.webauthn.authenticate` run whole, the browser being a software authenticator (test/fakes/authenticator.ts,
 * real keys and signatures), and `mfa.enroll` / `mfa.challenge` / `mfa.verify` with a `webauthn` body step by step.
 * A factor's key is a second factor only: no passkey, and its user's password sign-in is aal1 until it is asserted.
 */

const ORIGIN = "http://localhost:3000";
const RP = { rpId: "localhost", rpOrigins: [ORIGIN] };
const svc = supabaseService({ AUTH_WEBAUTHN_ENABLED: "true", AUTH_MFA_ENABLED: "true" });

const client = () => supabaseClient(svc, PUBLISHABLE_KEY, { "cf-connecting-ip": uniqueAddress() });

/** A user signed up through the face, and a verified `webauthn` factor made by `mfa.webauthn.register`. */
async function userWithKey(supabase: SupabaseClient = client()) {
  const email = uniqueEmail("sbwa");
  const signedUp = await supabase.auth.signUp({ email, password: PASSWORD });
  expect(signedUp.error).toBeNull();
  const device = new SoftwareAuthenticator(ORIGIN, "localhost");
  const { data, error } = await inBrowser(device, () =>
    supabase.auth.mfa.webauthn.register({ friendlyName: "yubikey", webauthn: RP }),
  );
  expect(error).toBeNull();
  const factors = await supabase.auth.mfa.listFactors();
  const factorId = factors.data!.all.find((f) => f.factor_type === "webauthn")!.id;
  return { supabase, email, userId: signedUp.data.user!.id, device, session: data!, factorId };
}

/** The same user signed in again with the password: GoTrue's aal1 session, short of the factor. */
async function passwordSession(email: string) {
  const fresh = client();
  const { error } = await fresh.auth.signInWithPassword({ email, password: PASSWORD });
  expect(error).toBeNull();
  return fresh;
}

const tokenOf = async (supabase: SupabaseClient) =>
  (await supabase.auth.getSession()).data.session!.access_token;

/** The same service with WebAuthn switched off (AUTH_WEBAUTHN_ENABLED): a config override, no second database. */
const withoutWebauthn = supabaseService({ AUTH_WEBAUTHN_ENABLED: "false", AUTH_MFA_ENABLED: "true" });

const raw = (path: string, body: unknown, token: string, service = svc) =>
  service.request("POST", `${FACE}/auth/v1${path}`, {
    headers: {
      apikey: PUBLISHABLE_KEY,
      "content-type": "application/json",
      "x-supabase-api-version": "2024-01-01",
      "cf-connecting-ip": uniqueAddress(),
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify(body),
  });

async function expectGoTrue(response: Response, status: number, code: string) {
  const body = (await response.json()) as { code: string };
  expect({ status: response.status, code: body.code }).toEqual({ status, code });
}

interface Challenge {
  id: string;
  type: string;
  expires_at: number;
  webauthn: { type: "create" | "request"; credential_options: { publicKey: Record<string, unknown> } };
}

async function challengeOf(factorId: string, token: string, body: unknown = { webauthn: RP }) {
  const response = await raw(`/factors/${factorId}/challenge`, body, token);
  expect(response.status).toBe(200);
  return (await response.json()) as Challenge;
}

describe("auth-js mfa with webauthn factors", () => {
  it("mfa.webauthn.register, then mfa.webauthn.authenticate: aal2 sessions whose amr is mfa/webauthn", async () => {
    const { supabase, email, device, session, factorId } = await userWithKey();
    expect(decodeJwt(session.access_token)).toMatchObject({
      aal: "aal2",
      amr: [{ method: "mfa/webauthn" }],
    });
    const listed = await supabase.auth.mfa.listFactors();
    expect(listed.data?.all).toEqual([
      expect.objectContaining({
        id: factorId,
        factor_type: "webauthn",
        status: "verified",
        friendly_name: "yubikey",
      }),
    ]);
    // The factor's key is no passkey: not listed among them, and it signs nobody in.
    expect((await supabase.auth.passkey.list()).data).toEqual([]);
    const stranger = client();
    const passkeySignIn = await inBrowser(device, () => stranger.auth.signInWithPasskey());
    expect(passkeySignIn.error).not.toBeNull();

    // A verified webauthn factor is a second factor: the password gives aal1, the key steps it up.
    const fresh = await passwordSession(email);
    const level = await fresh.auth.mfa.getAuthenticatorAssuranceLevel();
    expect(level.data).toMatchObject({ currentLevel: "aal1", nextLevel: "aal2" });
    const stepped = await inBrowser(device, () =>
      fresh.auth.mfa.webauthn.authenticate({ factorId, webauthn: RP }),
    );
    expect(stepped.error).toBeNull();
    expect(decodeJwt(stepped.data!.access_token)).toMatchObject({
      aal: "aal2",
      amr: [{ method: "mfa/webauthn" }],
    });
    expect((await fresh.auth.mfa.getAuthenticatorAssuranceLevel()).data?.currentLevel).toBe("aal2");
  });

  it("mfa.enroll({factorType: 'webauthn'}), mfa.challenge (create), mfa.verify with a webauthn body", async () => {
    const supabase = client();
    await supabase.auth.signUp({ email: uniqueEmail("sbwa2"), password: PASSWORD });
    const enrolled = await supabase.auth.mfa.enroll({ factorType: "webauthn", friendlyName: "key" });
    expect(enrolled.error).toBeNull();
    expect(enrolled.data).toEqual({ id: expect.any(String), type: "webauthn", friendly_name: "key" });
    const factorId = enrolled.data!.id;
    const unverified = await supabase.auth.mfa.listFactors();
    expect(unverified.data?.all).toEqual([expect.objectContaining({ id: factorId, status: "unverified" })]);

    const device = new SoftwareAuthenticator(ORIGIN, "localhost");
    // In a browser, auth-js hands the options to WebAuthn L3's JSON parser (here: as they are).
    const challenge = await inBrowser(device, () => supabase.auth.mfa.challenge({ factorId, webauthn: RP }));
    expect(challenge.error).toBeNull();
    const data = challenge.data as unknown as Challenge;
    expect(data).toMatchObject({ type: "webauthn", expires_at: expect.any(Number) });
    expect(data.webauthn.type).toBe("create");
    const options = data.webauthn.credential_options
      .publicKey as unknown as PublicKeyCredentialCreationOptionsJSON;
    expect(options.rp).toEqual({ id: "localhost", name: "edge-auth" });

    const json = await device.create(options);
    const verified = await supabase.auth.mfa.verify({
      factorId,
      challengeId: data.id,
      webauthn: { type: "create", ...RP, credential_response: { toJSON: () => json } as never },
    });
    expect(verified.error).toBeNull();
    expect(decodeJwt(verified.data!.access_token)).toMatchObject({ aal: "aal2" });

    // Now verified, its challenge asks for its one key only.
    const request = await inBrowser(device, () => supabase.auth.mfa.challenge({ factorId, webauthn: RP }));
    const requestData = request.data as unknown as Challenge;
    expect(requestData.webauthn.type).toBe("request");
    expect(requestData.webauthn.credential_options.publicKey).toMatchObject({
      rpId: "localhost",
      allowCredentials: [expect.objectContaining({ id: json.id })],
    });
  });

  it("the client's rpId and rpOrigins are ignored: the options are the service's, a key of another origin is refused", async () => {
    // Threat: a page asks for a key (or an assertion) for a relying party of its choosing.
    const supabase = client();
    await supabase.auth.signUp({ email: uniqueEmail("sbwa3"), password: PASSWORD });
    const enrolled = await supabase.auth.mfa.enroll({ factorType: "webauthn" });
    const token = await tokenOf(supabase);
    const evil = { webauthn: { rpId: "evil.example", rpOrigins: ["https://evil.example"] } };
    const challenge = await challengeOf(enrolled.data!.id, token, evil);
    const options = challenge.webauthn.credential_options
      .publicKey as unknown as PublicKeyCredentialCreationOptionsJSON;
    expect(options.rp.id).toBe("localhost");
    const device = new SoftwareAuthenticator("https://evil.example", "evil.example");
    const json = await device.create({ ...options, rp: { ...options.rp, id: "evil.example" } });
    const response = await raw(
      `/factors/${enrolled.data!.id}/verify`,
      {
        challenge_id: challenge.id,
        webauthn: { type: "create", ...evil.webauthn, credential_response: json },
      },
      token,
    );
    await expectGoTrue(response, 400, "webauthn_verification_failed");
    expect((await supabase.auth.mfa.listFactors()).data?.all[0]?.status).toBe("unverified");
  });

  it("mfa.challenge of another user's factor is mfa_factor_not_found, and so is its challenge answered by another", async () => {
    // Threat: a user challenges, or answers the challenge of, a factor that is someone else's.
    const owner = await userWithKey();
    const other = await userWithKey();
    const otherToken = await tokenOf(other.supabase);
    await expectGoTrue(
      await raw(`/factors/${owner.factorId}/challenge`, {}, otherToken),
      404,
      "mfa_factor_not_found",
    );
    const ownerChallenge = await challengeOf(owner.factorId, await tokenOf(owner.supabase));
    const json = await owner.device.get(
      ownerChallenge.webauthn.credential_options
        .publicKey as unknown as PublicKeyCredentialRequestOptionsJSON,
    );
    const answered = await raw(
      `/factors/${other.factorId}/verify`,
      { challenge_id: ownerChallenge.id, webauthn: { type: "request", credential_response: json } },
      otherToken,
    );
    await expectGoTrue(answered, 422, "mfa_factor_not_found");
  });

  it("mfa.verify: a replayed assertion finds its challenge gone, a stale challenge is mfa_challenge_expired", async () => {
    const { email, device, factorId, userId } = await userWithKey();
    const fresh = await passwordSession(email);
    const token = await tokenOf(fresh);
    const challenge = await challengeOf(factorId, token);
    const json = await device.get(
      challenge.webauthn.credential_options.publicKey as unknown as PublicKeyCredentialRequestOptionsJSON,
    );
    const body = { challenge_id: challenge.id, webauthn: { type: "request", credential_response: json } };
    expect((await raw(`/factors/${factorId}/verify`, body, token)).status).toBe(200);
    // Threat: a replayed assertion (the same response sent again).
    const again = await passwordSession(email);
    await expectGoTrue(
      await raw(`/factors/${factorId}/verify`, body, await tokenOf(again)),
      422,
      "mfa_factor_not_found",
    );

    // Threat: a stale challenge.
    const againToken = await tokenOf(again);
    const stale = await challengeOf(factorId, againToken);
    await userD1(userId)
      .prepare("UPDATE mfa_tickets SET expires_at = 0 WHERE user_id = ?")
      .bind(userId)
      .run();
    const late = await device.get(
      stale.webauthn.credential_options.publicKey as unknown as PublicKeyCredentialRequestOptionsJSON,
    );
    const response = await raw(
      `/factors/${factorId}/verify`,
      { challenge_id: stale.id, webauthn: { type: "request", credential_response: late } },
      againToken,
    );
    await expectGoTrue(response, 422, "mfa_challenge_expired");
  });

  it("a request challenge is answered by its factor's key only, not by another key of the same user", async () => {
    const { supabase, device, factorId } = await userWithKey();
    // A second factor of the same user, enrolled at aal2 with another authenticator.
    const second = new SoftwareAuthenticator(ORIGIN, "localhost");
    const made = await inBrowser(second, () =>
      supabase.auth.mfa.webauthn.register({ friendlyName: "backup", webauthn: RP }),
    );
    expect(made.error).toBeNull();
    const token = await tokenOf(supabase);
    const challenge = await challengeOf(factorId, token);
    const options = challenge.webauthn.credential_options
      .publicKey as unknown as PublicKeyCredentialRequestOptionsJSON;
    // Threat: an assertion by another key of the user (its other factor's) for this factor's challenge.
    const json = await second.get(options, { credential: second.credentials[0] });
    const response = await raw(
      `/factors/${factorId}/verify`,
      { challenge_id: challenge.id, webauthn: { type: "request", credential_response: json } },
      token,
    );
    await expectGoTrue(response, 400, "webauthn_verification_failed");
    expect(device.credentials).toHaveLength(1);
  });

  it("registerPasskey at aal1 is refused once a webauthn factor is verified; a passkey alone asks for no aal2", async () => {
    // Threat: a stolen password's aal1 session adds a passkey, which signs in with no second factor.
    const { email } = await userWithKey();
    const fresh = await passwordSession(email);
    const refused = await inBrowser(new SoftwareAuthenticator(ORIGIN, "localhost"), () =>
      fresh.auth.registerPasskey(),
    );
    expect(refused.error).toMatchObject({ status: 403, code: "insufficient_aal" });

    const plain = client();
    const plainEmail = uniqueEmail("sbwa4");
    await plain.auth.signUp({ email: plainEmail, password: PASSWORD });
    const passkey = await inBrowser(new SoftwareAuthenticator(ORIGIN, "localhost"), () =>
      plain.auth.registerPasskey(),
    );
    expect(passkey.error).toBeNull();
    const again = await passwordSession(plainEmail);
    expect(decodeJwt(await tokenOf(again))).toMatchObject({ aal: "aal1" });
    expect((await again.auth.mfa.getAuthenticatorAssuranceLevel()).data?.nextLevel).toBe("aal1");
  });

  it("bad webauthn bodies are GoTrue's 400s; with WebAuthn off, enroll and challenge are its 422s", async () => {
    const supabase = client();
    await supabase.auth.signUp({ email: uniqueEmail("sbwa5"), password: PASSWORD });
    const enrolled = await supabase.auth.mfa.enroll({ factorType: "webauthn" });
    const factorId = enrolled.data!.id;
    const token = await tokenOf(supabase);
    const challenge = await challengeOf(factorId, token);
    const verify = (body: unknown) => raw(`/factors/${factorId}/verify`, body, token);
    await expectGoTrue(await verify({ challenge_id: challenge.id }), 400, "validation_failed");
    await expectGoTrue(
      await verify({ challenge_id: challenge.id, webauthn: { type: "sign", credential_response: {} } }),
      400,
      "validation_failed",
    );
    await expectGoTrue(
      await verify({
        challenge_id: challenge.id,
        webauthn: { type: "create", credential_response: { id: 1 } },
      }),
      400,
      "validation_failed",
    );

    const off = (path: string, body: unknown) => raw(path, body, token, withoutWebauthn);
    await expectGoTrue(
      await off("/factors", { factor_type: "webauthn" }),
      422,
      "mfa_webauthn_enroll_not_enabled",
    );
    await expectGoTrue(
      await off(`/factors/${factorId}/challenge`, {}),
      422,
      "mfa_webauthn_verify_not_enabled",
    );
  });

  it("an unverified webauthn factor cannot be finished at aal1 once another factor is verified (403 insufficient_aal)", async () => {
    // Threat: a stolen password's aal1 session makes its own key for a factor the user left unverified, and steps up.
    const { supabase, email } = await userWithKey();
    const left = await supabase.auth.mfa.enroll({ factorType: "webauthn", friendlyName: "left over" });
    expect(left.error).toBeNull();
    const stolen = await passwordSession(email);
    const response = await raw(
      `/factors/${left.data!.id}/challenge`,
      { webauthn: RP },
      await tokenOf(stolen),
    );
    await expectGoTrue(response, 403, "insufficient_aal");
  });
});
