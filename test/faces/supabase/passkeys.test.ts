import { env } from "cloudflare:test";
import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from "@simplewebauthn/server";
import { AuthSessionMissingError, type SupabaseClient } from "@supabase/supabase-js";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { totpCode, totpStep } from "../../../src/auth/mfa/totp";
import { SoftwareAuthenticator } from "../../fakes/authenticator";
import { PASSWORD, signUp, type TestService, uniqueAddress, uniqueEmail } from "../../helpers";
import { inBrowser } from "./in-browser";
import { FACE, PUBLISHABLE_KEY, SECRET_KEY, supabaseClient, supabaseService } from "./support";

/**
 * GoTrue's passkeys through the face (contract supabase.md §2), driven by the real supabase-js: `signInWithPasskey`
 * and `registerPasskey` run whole, the browser's `navigator.credentials` being a software authenticator (real keys,
 * real attestations and assertions, test/fakes/authenticator.ts); the `passkey` namespace's two-step calls are given
 * the authenticator's answers. The keys are the core's: the Nhost API lists them and signs in with them too.
 */

const ORIGIN = "http://localhost:3000";
const svc = supabaseService({
  AUTH_WEBAUTHN_ENABLED: "true",
  AUTH_ANONYMOUS_USERS_ENABLED: "true",
  AUTH_MFA_ENABLED: "true",
});

/** A client of its own address, so the per-address sign-in limits count this file's requests only. */
const client = (service: TestService = svc) =>
  supabaseClient(service, PUBLISHABLE_KEY, { "cf-connecting-ip": uniqueAddress() });

/** A user signed in through the face with a password, and the client holding the session. */
async function signedInClient(service: TestService = svc) {
  const supabase = client(service);
  const email = uniqueEmail("pk");
  const { data, error } = await supabase.auth.signUp({ email, password: PASSWORD });
  expect(error).toBeNull();
  return { supabase, email, userId: data.user!.id, token: data.session!.access_token };
}

async function registered(supabase: SupabaseClient, device = new SoftwareAuthenticator(ORIGIN, "localhost")) {
  const { data, error } = await inBrowser(device, () => supabase.auth.registerPasskey());
  expect(error).toBeNull();
  return { device, passkey: data! };
}

/** The software authenticator's JSON as auth-js types a serialized credential. */
type Serialized = Parameters<SupabaseClient["auth"]["passkey"]["verifyRegistration"]>[0]["credential"];
const created = async (device: SoftwareAuthenticator, options: unknown) =>
  (await device.create(options as PublicKeyCredentialCreationOptionsJSON)) as unknown as Serialized;

const raw = (method: string, path: string, body?: unknown, token?: string, service: TestService = svc) =>
  service.request(method, `${FACE}/auth/v1${path}`, {
    headers: {
      apikey: PUBLISHABLE_KEY,
      "content-type": "application/json",
      "x-supabase-api-version": "2024-01-01",
      "cf-connecting-ip": uniqueAddress(),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

async function expectGoTrue(response: Response, status: number, code: string) {
  const body = (await response.json()) as { code: string };
  expect({ status: response.status, code: body.code }).toEqual({ status, code });
}

describe("auth-js passkeys against the face", () => {
  it("registerPasskey, passkey.list, signInWithPasskey: a GoTrue session whose amr is passkey", async () => {
    const { supabase, userId } = await signedInClient();
    const { device, passkey } = await registered(supabase);
    expect(passkey).toEqual({ id: expect.any(String), created_at: expect.any(String) });

    const listed = await supabase.auth.passkey.list();
    expect(listed.error).toBeNull();
    expect(listed.data).toEqual([{ id: passkey.id, created_at: passkey.created_at }]);

    const fresh = client();
    const { data, error } = await inBrowser(device, () => fresh.auth.signInWithPasskey());
    expect(error).toBeNull();
    expect(data?.session?.token_type).toBe("bearer");
    expect(data?.user?.id).toBe(userId);
    const claims = decodeJwt(data!.session!.access_token);
    expect(claims).toMatchObject({ sub: userId, aal: "aal1", iss: `${FACE}/auth/v1` });
    expect(claims.amr).toEqual([{ method: "passkey", timestamp: expect.any(Number) }]);
    expect((await fresh.auth.getUser()).data.user?.id).toBe(userId);
  });

  it("registration asks for a discoverable credential (a passkey) and excludes the user's keys", async () => {
    const { supabase } = await signedInClient();
    await registered(supabase);
    const { data, error } = await supabase.auth.passkey.startRegistration();
    expect(error).toBeNull();
    expect(data!.challenge_id).toBe(data!.options.challenge);
    expect(data!.expires_at).toBeGreaterThan(Date.now() / 1000 + 200);
    expect(data!.options.authenticatorSelection).toMatchObject({ residentKey: "required" });
    expect(data!.options.excludeCredentials).toHaveLength(1);
    expect(data!.options.rp).toEqual({ id: "localhost", name: "edge-auth" });
  });

  it("the two steps: passkey.startRegistration / verifyRegistration, startAuthentication / verifyAuthentication", async () => {
    const { supabase, userId } = await signedInClient();
    const device = new SoftwareAuthenticator(ORIGIN, "localhost");
    const started = await supabase.auth.passkey.startRegistration();
    const credential = await created(device, started.data!.options);
    const made = await supabase.auth.passkey.verifyRegistration({
      challengeId: started.data!.challenge_id,
      credential,
    });
    expect(made.error).toBeNull();

    const fresh = client();
    const options = await fresh.auth.passkey.startAuthentication({ options: { captchaToken: "unused" } });
    expect(options.error).toBeNull();
    expect(options.data!.options.allowCredentials).toEqual([]);
    const assertion = await device.get(options.data!.options as PublicKeyCredentialRequestOptionsJSON);
    const signedIn = await fresh.auth.passkey.verifyAuthentication({
      challengeId: options.data!.challenge_id,
      credential: assertion,
    });
    expect(signedIn.error).toBeNull();
    expect(signedIn.data?.session?.user.id).toBe(userId);

    // Threat: a replayed assertion (its challenge was taken by the first verify): refused, no second session.
    const replay = await fresh.auth.passkey.verifyAuthentication({
      challengeId: options.data!.challenge_id,
      credential: assertion,
    });
    expect(replay.error).toMatchObject({ status: 400, code: "webauthn_challenge_not_found" });
  });

  it("passkey.update renames, passkey.delete removes; the Nhost API sees both", async () => {
    const { supabase, email } = await signedInClient();
    const { passkey } = await registered(supabase);
    const renamed = await supabase.auth.passkey.update({ passkeyId: passkey.id, friendlyName: "Laptop" });
    expect(renamed.error).toBeNull();
    expect(renamed.data).toEqual({ id: passkey.id, friendly_name: "Laptop", created_at: passkey.created_at });

    const nhost = await svc.post("/signin/email-password", { email, password: PASSWORD });
    const { session } = (await nhost.json()) as { session: { accessToken: string } };
    const keys = async () =>
      (
        (await (await svc.get("/user/security-keys", session.accessToken)).json()) as {
          securityKeys: { id: string; nickname: string | null }[];
        }
      ).securityKeys;
    expect(await keys()).toMatchObject([{ id: passkey.id, nickname: "Laptop" }]);

    const tooLong = await supabase.auth.passkey.update({
      passkeyId: passkey.id,
      friendlyName: "x".repeat(121),
    });
    expect(tooLong.error).toMatchObject({ status: 400, code: "validation_failed" });

    expect(await supabase.auth.passkey.delete({ passkeyId: passkey.id })).toEqual({
      data: null,
      error: null,
    });
    expect(await keys()).toEqual([]);
    expect((await supabase.auth.passkey.list()).data).toEqual([]);
    const again = await supabase.auth.passkey.delete({ passkeyId: passkey.id });
    expect(again.error).toMatchObject({ status: 404, code: "validation_failed" });
  });

  it("a key added through the Nhost API is listed here and signs in with signInWithPasskey", async () => {
    const email = uniqueEmail("pk-nhost");
    const session = await signUp(svc, email);
    const device = new SoftwareAuthenticator(ORIGIN, "localhost");
    const options = (await (
      await svc.request("POST", "/user/webauthn/add", { token: session.accessToken })
    ).json()) as PublicKeyCredentialCreationOptionsJSON;
    const added = await svc.post(
      "/user/webauthn/verify",
      { credential: await device.create(options), nickname: "Phone" },
      session.accessToken,
    );
    const { id } = (await added.json()) as { id: string };

    const supabase = client();
    const { data, error } = await inBrowser(device, () => supabase.auth.signInWithPasskey());
    expect(error).toBeNull();
    expect(data?.user?.id).toBe(session.user.id);
    expect((await supabase.auth.passkey.list()).data).toEqual([
      { id, friendly_name: "Phone", created_at: expect.any(String) },
    ]);
  });

  it("auth.admin.passkey lists and deletes a user's passkeys with the secret key", async () => {
    const { supabase, userId } = await signedInClient();
    const { passkey } = await registered(supabase);
    const admin = supabaseClient(svc, SECRET_KEY);
    const listed = await admin.auth.admin.passkey.listPasskeys({ userId });
    expect(listed.data).toEqual([{ id: passkey.id, created_at: passkey.created_at }]);
    const removed = await admin.auth.admin.passkey.deletePasskey({ userId, passkeyId: passkey.id });
    expect(removed.error).toBeNull();
    expect((await supabase.auth.passkey.list()).data).toEqual([]);
    // A user's token is no service role.
    const { token } = await signedInClient();
    const refused = await svc.request("GET", `${FACE}/auth/v1/admin/users/${userId}/passkeys`, {
      headers: { apikey: PUBLISHABLE_KEY, authorization: `Bearer ${token}` },
    });
    expect(refused.status).toBe(403);
  });
});

describe("passkey threats", () => {
  // Threat: registration without a session (a passkey planted on nobody's, or anybody's, account).
  it("registration needs a signed-in user: auth-js refuses before asking, the face answers 401", async () => {
    const started = await client().auth.passkey.startRegistration();
    expect(started.error).toBeInstanceOf(AuthSessionMissingError);
    await expectGoTrue(await raw("POST", "/passkeys/registration/options", {}), 401, "no_authorization");
    await expectGoTrue(
      await raw("POST", "/passkeys/registration/verify", { challenge_id: "x", credential: {} }),
      401,
      "no_authorization",
    );
    await expectGoTrue(await raw("GET", "/passkeys"), 401, "no_authorization");
  });

  // Threat: a challenge issued to one user answered from another user's session, to put a key on either account.
  it("a registration challenge of another user is refused, and the key lands nowhere", async () => {
    const alice = await signedInClient();
    const mallory = await signedInClient();
    const started = await alice.supabase.auth.passkey.startRegistration();
    const credential = await created(new SoftwareAuthenticator(ORIGIN, "localhost"), started.data!.options);
    const stolen = await mallory.supabase.auth.passkey.verifyRegistration({
      challengeId: started.data!.challenge_id,
      credential,
    });
    expect(stolen.error).toMatchObject({ status: 400, code: "webauthn_challenge_not_found" });
    expect((await mallory.supabase.auth.passkey.list()).data).toEqual([]);
    expect((await alice.supabase.auth.passkey.list()).data).toEqual([]);
  });

  // Threat: an assertion made for another site (a phishing origin, another relying party) replayed here.
  it("a credential of another relying party, or from another origin, does not verify", async () => {
    const { supabase } = await signedInClient();
    const started = await supabase.auth.passkey.startRegistration();
    const elsewhere = new SoftwareAuthenticator("https://evil.example", "evil.example");
    const options = started.data!.options as PublicKeyCredentialCreationOptionsJSON;
    const foreign = await created(elsewhere, { ...options, rp: { ...options.rp, id: "evil.example" } });
    const refused = await supabase.auth.passkey.verifyRegistration({
      challengeId: started.data!.challenge_id,
      credential: foreign,
    });
    expect(refused.error).toMatchObject({ status: 400, code: "webauthn_verification_failed" });

    const { device } = await registered(supabase);
    const fresh = client();
    const request = await fresh.auth.passkey.startAuthentication();
    const phished = await device.get(request.data!.options as PublicKeyCredentialRequestOptionsJSON, {
      origin: "https://evil.example",
    });
    const signIn = await fresh.auth.passkey.verifyAuthentication({
      challengeId: request.data!.challenge_id,
      credential: phished,
    });
    expect(signIn.error).toMatchObject({ status: 400, code: "webauthn_verification_failed" });
    expect(signIn.data).toBeNull();
  });

  // Threat: a response sent with the id of another challenge than the one its signed client data answers, or
  // answering a challenge issued for another ceremony (a sign-in's challenge used to register a key).
  it("a challenge_id that is not the one the response answers, and a sign-in challenge used to register", async () => {
    const { supabase } = await signedInClient();
    const device = new SoftwareAuthenticator(ORIGIN, "localhost");
    const started = await supabase.auth.passkey.startRegistration();
    const credential = await created(device, started.data!.options);
    const other = await supabase.auth.passkey.startRegistration();
    const mismatched = await supabase.auth.passkey.verifyRegistration({
      challengeId: other.data!.challenge_id,
      credential,
    });
    expect(mismatched.error).toMatchObject({ status: 400, code: "webauthn_challenge_not_found" });

    const signIn = await client().auth.passkey.startAuthentication();
    const crossed = await supabase.auth.passkey.verifyRegistration({
      challengeId: signIn.data!.challenge_id,
      credential: await created(device, { ...other.data!.options, challenge: signIn.data!.challenge_id }),
    });
    expect(crossed.error).toMatchObject({ status: 400, code: "webauthn_challenge_not_found" });
    expect((await supabase.auth.passkey.list()).data).toEqual([]);

    // A malformed credential and a missing challenge_id: GoTrue's own 400s.
    await expectGoTrue(
      await raw("POST", "/passkeys/authentication/verify", { challenge_id: "abc", credential: { id: "x" } }),
      400,
      "webauthn_verification_failed",
    );
    await expectGoTrue(
      await raw("POST", "/passkeys/authentication/verify", { credential }),
      400,
      "validation_failed",
    );
  });

  // Threat: a credential id registered a second time, with a key of the sender's choosing (an authenticator's
  // exclusion list is the browser's courtesy, not a check): the stored key stays the one first registered.
  it("a credential already registered is refused with webauthn_credential_exists", async () => {
    const { supabase } = await signedInClient();
    const { device, passkey } = await registered(supabase);
    const started = await supabase.auth.passkey.startRegistration();
    const copy = (await device.create(started.data!.options as PublicKeyCredentialCreationOptionsJSON, {
      id: device.credentials[0]!.id,
    })) as unknown as Serialized;
    const refused = await supabase.auth.passkey.verifyRegistration({
      challengeId: started.data!.challenge_id,
      credential: copy,
    });
    expect(refused.error).toMatchObject({ status: 422, code: "webauthn_credential_exists" });
    expect((await supabase.auth.passkey.list()).data).toEqual([
      { id: passkey.id, created_at: passkey.created_at },
    ]);
  });

  it("another user's passkey can be neither renamed nor deleted (404), and an anonymous user registers none", async () => {
    const owner = await signedInClient();
    const { passkey } = await registered(owner.supabase);
    const other = await signedInClient();
    const rename = await other.supabase.auth.passkey.update({ passkeyId: passkey.id, friendlyName: "mine" });
    expect(rename.error).toMatchObject({ status: 404 });
    const remove = await other.supabase.auth.passkey.delete({ passkeyId: passkey.id });
    expect(remove.error).toMatchObject({ status: 404 });
    expect((await owner.supabase.auth.passkey.list()).data).toHaveLength(1);

    const anonymous = client();
    expect((await anonymous.auth.signInAnonymously()).error).toBeNull();
    const refused = await anonymous.auth.passkey.startRegistration();
    expect(refused.error).toMatchObject({ status: 403, code: "no_authorization" });
  });

  // Threat: a first-factor session of an account with a second factor adds a passkey, which then signs in alone.
  it("with TOTP on, an AAL1 session manages no passkey (GoTrue's insufficient_aal)", async () => {
    const { supabase, email } = await signedInClient();
    const { device } = await registered(supabase);
    const nhost = (await (
      await svc.post("/signin/email-password", { email, password: PASSWORD })
    ).json()) as { session: { accessToken: string } };
    const token = nhost.session.accessToken;
    const generated = (await (await svc.get("/mfa/totp/generate", token)).json()) as { totpSecret: string };
    const code = totpCode(decodeBase32IgnorePadding(generated.totpSecret), totpStep(Date.now()));
    expect(await (await svc.post("/user/mfa", { code, activeMfaType: "totp" }, token)).json()).toBe("OK");

    const byPasskey = client();
    const { data } = await inBrowser(device, () => byPasskey.auth.signInWithPasskey());
    expect(decodeJwt(data!.session!.access_token).aal).toBe("aal1");
    const refused = await byPasskey.auth.passkey.startRegistration();
    expect(refused.error).toMatchObject({ status: 403, code: "insufficient_aal" });
    const list = await byPasskey.auth.passkey.list();
    const removal = await byPasskey.auth.passkey.delete({ passkeyId: list.data![0]!.id });
    expect(removal.error).toMatchObject({ status: 403, code: "insufficient_aal" });
  });

  it("under AUTH_REQUIRE_ELEVATED_CLAIM=recommended a second passkey, or a removal, needs an elevated session", async () => {
    const elevated = supabaseService({
      AUTH_WEBAUTHN_ENABLED: "true",
      AUTH_REQUIRE_ELEVATED_CLAIM: "recommended",
    });
    const { supabase } = await signedInClient(elevated);
    const { passkey } = await registered(supabase);
    const second = await supabase.auth.passkey.startRegistration();
    expect(second.error).toMatchObject({ status: 403, code: "insufficient_aal" });
    const removal = await supabase.auth.passkey.delete({ passkeyId: passkey.id });
    expect(removal.error).toMatchObject({ status: 403, code: "insufficient_aal" });
  });

  // Threat: a key outliving the account's standing: a banned user, or an address never proven, signs in by passkey.
  it("signInWithPasskey refuses a banned user (403 user_banned) and an unverified address (email_not_confirmed)", async () => {
    const { supabase, userId } = await signedInClient();
    const { device } = await registered(supabase);
    const ban = await svc.request("PATCH", `/admin/users/${userId}`, {
      headers: { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) },
      json: { disabled: true },
    });
    expect(ban.status).toBe(200);
    const banned = await inBrowser(device, () => client().auth.signInWithPasskey());
    expect(banned.error).toMatchObject({ status: 403, code: "user_banned" });

    const verifying = supabaseService({
      AUTH_WEBAUTHN_ENABLED: "true",
      AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "true",
    });
    const unproven = new SoftwareAuthenticator(ORIGIN, "localhost");
    const options = (await (
      await verifying.post("/signup/webauthn", { email: uniqueEmail("pk-unverified") })
    ).json()) as PublicKeyCredentialCreationOptionsJSON;
    const made = await verifying.post("/signup/webauthn/verify", {
      credential: await unproven.create(options),
    });
    expect(await made.json()).toEqual({ session: null });
    const refused = await inBrowser(unproven, () => client(verifying).auth.signInWithPasskey());
    expect(refused.error).toMatchObject({ status: 400, code: "email_not_confirmed" });
  });

  it("with WebAuthn off, every passkey route is GoTrue's 404 passkey_disabled", async () => {
    const off = supabaseService();
    await expectGoTrue(
      await raw("POST", "/passkeys/authentication/options", {}, undefined, off),
      404,
      "passkey_disabled",
    );
    await expectGoTrue(await raw("GET", "/passkeys", undefined, undefined, off), 404, "passkey_disabled");
  });
});
