import { env, runInDurableObject } from "cloudflare:test";
import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from "@simplewebauthn/server";
import { describe, expect, it } from "vitest";
import { type Algorithm, type AttestationFormat, SoftwareAuthenticator } from "../../fakes/authenticator";
import {
  auditTypesOf,
  decodeJwt,
  expectError,
  mailbox,
  NO_VERIFICATION,
  service,
  sessionFromRefresh,
  signUp,
  uniqueEmail,
  type WireSession,
} from "../../helpers";
import { userD1 } from "../../support/shards";

const ORIGIN = "http://localhost:3000";
const ON = { AUTH_WEBAUTHN_ENABLED: "true" };
const svc = service({ ...NO_VERIFICATION, ...ON });

const authenticator = () => new SoftwareAuthenticator(ORIGIN, "localhost");

async function json<T>(response: Response, status = 200): Promise<T> {
  const body = await response.json();
  if (response.status !== status)
    throw new Error(`expected ${status}, got ${response.status} ${JSON.stringify(body)}`);
  return body as T;
}

/** Signs up with a new security key and returns the session and the authenticator holding the key. */
async function signUpWithKey(
  alg: Algorithm = "ES256",
  attestation: AttestationFormat = "none",
  email = uniqueEmail("wa"),
) {
  const device = authenticator();
  const options = await json<PublicKeyCredentialCreationOptionsJSON>(
    await svc.post("/signup/webauthn", { email }),
  );
  const credential = await device.create(options, { alg, attestation });
  const { session } = await json<{ session: WireSession }>(
    await svc.post("/signup/webauthn/verify", { credential, nickname: "my key" }),
  );
  return { device, session, email };
}

async function signInWith(device: SoftwareAuthenticator, email?: string): Promise<Response> {
  const options = await json<PublicKeyCredentialRequestOptionsJSON>(
    await svc.post("/signin/webauthn", { email }),
  );
  return svc.post("/signin/webauthn/verify", { credential: await device.get(options) });
}

async function elevate(device: SoftwareAuthenticator, session: WireSession): Promise<WireSession> {
  const options = await json<PublicKeyCredentialRequestOptionsJSON>(
    await svc.request("POST", "/elevate/webauthn", { token: session.accessToken }),
  );
  const answer = await svc.post(
    "/elevate/webauthn/verify",
    { credential: await device.get(options) },
    session.accessToken,
  );
  return (await json<{ session: WireSession }>(answer)).session;
}

const claims = (session: WireSession) =>
  decodeJwt(session.accessToken).payload["https://hasura.io/jwt/claims"] as Record<string, unknown>;

describe("WebAuthn sign-up", () => {
  it.each([
    ["ES256", "none"],
    ["ES256", "packed"],
    ["RS256", "none"],
    ["RS256", "packed"],
  ] as const)("creates the user and the key from a real %s attestation (%s)", async (alg, attestation) => {
    const { session, email } = await signUpWithKey(alg, attestation);
    expect(session.user).toMatchObject({ email, emailVerified: false });
    const keys = await userD1(session.user.id)
      .prepare("SELECT credential_id, counter, nickname FROM security_keys WHERE user_id = ?")
      .bind(session.user.id)
      .all<{ credential_id: string; counter: number; nickname: string }>();
    expect(keys.results).toHaveLength(1);
    expect(keys.results[0]!.nickname).toBe("my key");
  });

  it("offers options for the relying party and the new user, without the email in the user handle", async () => {
    const email = uniqueEmail("wa-options");
    const options = await json<PublicKeyCredentialCreationOptionsJSON>(
      await svc.post("/signup/webauthn", { email }),
    );
    expect(options.rp).toEqual({ id: "localhost", name: "edge-auth" });
    expect(options.user.name).toBe(email);
    expect(atob(options.user.id.replace(/-/g, "+").replace(/_/g, "/"))).toMatch(/^[0-9a-f-]{36}$/);
    expect(options.pubKeyCredParams.map((p) => p.alg)).toEqual(expect.arrayContaining([-7, -257]));
  });

  it("with verification required answers session null and mails the link", async () => {
    const verifying = service(ON);
    const email = uniqueEmail("wa-verify");
    const options = await json<PublicKeyCredentialCreationOptionsJSON>(
      await verifying.post("/signup/webauthn", { email }),
    );
    const credential = await authenticator().create(options);
    expect(await json(await verifying.post("/signup/webauthn/verify", { credential }))).toEqual({
      session: null,
    });
    expect((await mailbox(verifying, email))[0]!.subject).toBe("Verify your email");
  });

  it("refuses a taken email, a disabled feature, a foreign origin and a replayed challenge", async () => {
    const { email } = await signUpWithKey();
    await expectError(await svc.post("/signup/webauthn", { email }), 409, "email-already-in-use");
    await expectError(
      await service().post("/signup/webauthn", { email: uniqueEmail() }),
      409,
      "disabled-endpoint",
    );

    const options = await json<PublicKeyCredentialCreationOptionsJSON>(
      await svc.post("/signup/webauthn", { email: uniqueEmail() }),
    );
    const foreign = await authenticator().create(options, { origin: "https://evil.example" });
    await expectError(
      await svc.post("/signup/webauthn/verify", { credential: foreign }),
      400,
      "invalid-request",
    );
    // The failed attempt used the challenge up.
    const retry = await authenticator().create(options);
    await expectError(
      await svc.post("/signup/webauthn/verify", { credential: retry }),
      400,
      "invalid-request",
    );
  });
});

describe("WebAuthn sign-in", () => {
  it("with an email the user's keys are allowed; the assertion signs in and the counter is stored", async () => {
    const { device, session, email } = await signUpWithKey();
    const options = await json<PublicKeyCredentialRequestOptionsJSON>(
      await svc.post("/signin/webauthn", { email }),
    );
    expect(options.allowCredentials?.map((c) => c.id)).toHaveLength(1);
    const answer = await svc.post("/signin/webauthn/verify", { credential: await device.get(options) });
    expect((await json<{ session: WireSession }>(answer)).session.user.id).toBe(session.user.id);
    const row = await userD1(session.user.id)
      .prepare("SELECT counter FROM security_keys WHERE user_id = ?")
      .bind(session.user.id)
      .first<{ counter: number }>();
    expect(row!.counter).toBe(1);
  });

  it("without an email a discoverable credential signs in its own user", async () => {
    const { device, session } = await signUpWithKey("RS256", "packed");
    const signedIn = await json<{ session: WireSession }>(await signInWith(device));
    expect(signedIn.session.user.id).toBe(session.user.id);
  });

  it("a challenge is used once: a replayed assertion is refused, and parallel copies succeed once", async () => {
    const { device, email } = await signUpWithKey();
    const options = await json<PublicKeyCredentialRequestOptionsJSON>(
      await svc.post("/signin/webauthn", { email }),
    );
    const credential = await device.get(options);
    const answers = await Promise.all(
      [1, 2, 3].map(() => svc.post("/signin/webauthn/verify", { credential })),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([200, 400, 400]);
    await expectError(await svc.post("/signin/webauthn/verify", { credential }), 400, "invalid-request");
  });

  it("refuses a cloned authenticator whose counter went back", async () => {
    const { device } = await signUpWithKey();
    expect((await signInWith(device)).status).toBe(200);
    device.credentials[0]!.counter = 0; // the clone still says 0; its next assertion says 1 again
    await expectError(await signInWith(device), 400, "invalid-request");
  });

  it("refuses an expired challenge, a key of another user, a tampered signature and a sign-up challenge", async () => {
    const { device, email } = await signUpWithKey();
    const options = await json<PublicKeyCredentialRequestOptionsJSON>(
      await svc.post("/signin/webauthn", { email }),
    );
    const stub = env.WEBAUTHN_CHALLENGES.get(env.WEBAUTHN_CHALLENGES.idFromName(options.challenge));
    await runInDurableObject(stub, (_instance, state) => {
      const stored = state.storage.kv.get<{ ceremony: unknown; expiresAt: number }>("ceremony")!;
      state.storage.kv.put("ceremony", { ...stored, expiresAt: 1 });
    });
    await expectError(
      await svc.post("/signin/webauthn/verify", { credential: await device.get(options) }),
      400,
      "invalid-request",
    );

    const other = await signUpWithKey();
    const forOther = await json<PublicKeyCredentialRequestOptionsJSON>(
      await svc.post("/signin/webauthn", { email: other.email }),
    );
    const wrongKey = await device.get({ ...forOther, allowCredentials: [] });
    await expectError(
      await svc.post("/signin/webauthn/verify", { credential: wrongKey }),
      400,
      "invalid-request",
    );

    const tampered = await device.get(
      await json<PublicKeyCredentialRequestOptionsJSON>(await svc.post("/signin/webauthn", { email })),
    );
    tampered.response.signature = `${tampered.response.signature.slice(0, -4)}AAAA`;
    await expectError(
      await svc.post("/signin/webauthn/verify", { credential: tampered }),
      400,
      "invalid-request",
    );

    const signUpOptions = await json<PublicKeyCredentialCreationOptionsJSON>(
      await svc.post("/signup/webauthn", { email: uniqueEmail() }),
    );
    const mismatched = await device.get({ challenge: signUpOptions.challenge, rpId: "localhost" });
    await expectError(
      await svc.post("/signin/webauthn/verify", { credential: mismatched }),
      400,
      "invalid-request",
    );
  });

  it("refuses malformed credentials with 400, and disabled users after a good assertion", async () => {
    for (const credential of [
      {},
      { id: "x" },
      { id: "a", rawId: "a", type: "public-key", response: {} },
      "nope",
    ]) {
      await expectError(await svc.post("/signin/webauthn/verify", { credential }), 400, "invalid-request");
    }
    const { device, session } = await signUpWithKey();
    await userD1(session.user.id)
      .prepare("UPDATE users SET disabled = 1 WHERE id = ?")
      .bind(session.user.id)
      .run();
    await expectError(await signInWith(device), 401, "disabled-user");
  });
});

describe("security keys and elevation", () => {
  it("a password user adds a first key without elevation, and then signs in with it", async () => {
    const required = service({ ...NO_VERIFICATION, ...ON, AUTH_REQUIRE_ELEVATED_CLAIM: "required" });
    const session = await signUp(required);
    const device = authenticator();
    const options = await json<PublicKeyCredentialCreationOptionsJSON>(
      await required.request("POST", "/user/webauthn/add", { token: session.accessToken }),
    );
    expect(options.excludeCredentials).toEqual([]);
    const created = await device.create(options);
    const added = await json<{ id: string; nickname: string }>(
      await required.post(
        "/user/webauthn/verify",
        { credential: created, nickname: "laptop" },
        session.accessToken,
      ),
    );
    expect(added).toMatchObject({ nickname: "laptop" });
    expect(await auditTypesOf(session.user.id)).toContain("security-key.added");
    expect(
      (await json<{ session: WireSession }>(await signInWith(device, session.user.email))).session.user.id,
    ).toBe(session.user.id);
    // A second key now needs elevation.
    await expectError(
      await required.request("POST", "/user/webauthn/add", { token: session.accessToken }),
      401,
      "unauthorized",
    );
    const elevated = await elevate(device, session);
    const second = await json<PublicKeyCredentialCreationOptionsJSON>(
      await required.request("POST", "/user/webauthn/add", { token: elevated.accessToken }),
    );
    expect(second.excludeCredentials?.map((c) => c.id)).toEqual([created.id]);
  });

  it("verifyElevateWebauthn gives a token with x-hasura-auth-elevated; its refresh does not carry it", async () => {
    const { device, session } = await signUpWithKey();
    const elevated = await elevate(device, session);
    expect(claims(elevated)["x-hasura-auth-elevated"]).toBe(session.user.id);
    expect(claims(session)["x-hasura-auth-elevated"]).toBeUndefined();
    const refreshed = await sessionFromRefresh(svc, elevated.refreshToken);
    expect(claims(refreshed)["x-hasura-auth-elevated"]).toBeUndefined();
  });

  it("elevation needs a key of the caller's own", async () => {
    const session = await signUp(svc);
    await expectError(
      await svc.request("POST", "/elevate/webauthn", { token: session.accessToken }),
      400,
      "invalid-request",
    );
    const { device, session: owner } = await signUpWithKey();
    const options = await json<PublicKeyCredentialRequestOptionsJSON>(
      await svc.request("POST", "/elevate/webauthn", { token: owner.accessToken }),
    );
    // Someone else answering the owner's challenge with the owner's key still is not the owner.
    await expectError(
      await svc.post(
        "/elevate/webauthn/verify",
        { credential: await device.get(options) },
        session.accessToken,
      ),
      400,
      "invalid-request",
    );
  });

  it("AUTH_REQUIRE_ELEVATED_CLAIM=required guards createPAT, email change and password change", async () => {
    const required = service({ ...NO_VERIFICATION, ...ON, AUTH_REQUIRE_ELEVATED_CLAIM: "required" });
    const { device, session } = await signUpWithKey();
    const pat = (token: string) =>
      required.post("/pat", { expiresAt: new Date(Date.now() + 86_400_000).toISOString() }, token);
    const body = await expectError(await pat(session.accessToken), 401, "unauthorized");
    expect(body.message).toMatch(/elevated permission required/);
    await expectError(
      await required.post("/user/email/change", { newEmail: uniqueEmail() }, session.accessToken),
      401,
      "unauthorized",
    );
    await expectError(
      await required.post("/user/password", { newPassword: "a new long password" }, session.accessToken),
      401,
      "unauthorized",
    );
    const elevated = await elevate(device, session);
    expect((await pat(elevated.accessToken)).status).toBe(200);
    expect(
      (await required.post("/user/password", { newPassword: "a new long password" }, elevated.accessToken))
        .status,
    ).toBe(200);
  });

  it("recommended asks only users who have a key; disabled (the default) asks no one", async () => {
    const recommended = service({ ...NO_VERIFICATION, ...ON, AUTH_REQUIRE_ELEVATED_CLAIM: "recommended" });
    const pat = (svcUnder: typeof svc, token: string) =>
      svcUnder.post("/pat", { expiresAt: new Date(Date.now() + 86_400_000).toISOString() }, token);
    const withoutKey = await signUp(recommended);
    expect((await pat(recommended, withoutKey.accessToken)).status).toBe(200);
    const { session } = await signUpWithKey();
    await expectError(await pat(recommended, session.accessToken), 401, "unauthorized");
    expect((await pat(svc, session.accessToken)).status).toBe(200);
  });

  it("a password reset by ticket needs no elevation", async () => {
    const required = service({ ...NO_VERIFICATION, ...ON, AUTH_REQUIRE_ELEVATED_CLAIM: "required" });
    const email = uniqueEmail("wa-reset");
    await signUp(required, email);
    await required.post("/user/password/reset", { email });
    const ticket = /ticket=([^&\s]+)/.exec((await mailbox(required, email))[0]!.text)![1]!;
    const answer = await required.post("/user/password", {
      newPassword: "reset without elevation",
      ticket: decodeURIComponent(ticket),
    });
    expect(answer.status).toBe(200);
    const signIn = await required.post("/signin/email-password", {
      email,
      password: "reset without elevation",
    });
    expect(signIn.status).toBe(200);
  });
});

describe("WebAuthn hardening", () => {
  const handleOf = (userId: string) =>
    btoa(userId).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

  it("a discoverable assertion whose userHandle names another user, or none, is refused (WebAuthn §7.2 step 6)", async () => {
    const { device } = await signUpWithKey();
    const other = await signUpWithKey();
    const options = await json<PublicKeyCredentialRequestOptionsJSON>(await svc.post("/signin/webauthn", {}));
    const assertion = await device.get(options);
    const forged = {
      ...assertion,
      response: { ...assertion.response, userHandle: handleOf(other.session.user.id) },
    };
    await expectError(
      await svc.post("/signin/webauthn/verify", { credential: forged }),
      400,
      "invalid-request",
    );

    const again = await json<PublicKeyCredentialRequestOptionsJSON>(await svc.post("/signin/webauthn", {}));
    const withoutHandle = await device.get(again);
    delete (withoutHandle.response as { userHandle?: string }).userHandle;
    await expectError(
      await svc.post("/signin/webauthn/verify", { credential: withoutHandle }),
      400,
      "invalid-request",
    );
    // The honest assertion still signs in.
    expect((await signInWith(device)).status).toBe(200);
  });

  it("an address without keys is offered a decoy credential id, stable and shaped like a real one", async () => {
    const allow = async (email: string) =>
      (await json<PublicKeyCredentialRequestOptionsJSON>(await svc.post("/signin/webauthn", { email })))
        .allowCredentials ?? [];
    const unknown = uniqueEmail("nobody");
    const [decoy] = await allow(unknown);
    expect(decoy!.id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await allow(unknown)).toEqual([decoy]);
    expect((await allow(uniqueEmail("nobody")))[0]!.id).not.toBe(decoy!.id);
    // A real user without a key looks the same; one with a key gets the key.
    const keyless = await signUp(svc);
    expect(await allow(keyless.user.email)).toHaveLength(1);
    const { email, device } = await signUpWithKey();
    const [real] = await allow(email);
    expect(real!.id).toBe(
      btoa(String.fromCharCode(...device.credentials[0]!.id))
        .replace(/\+/g, "-")
        .replace(/\//g, "_")
        .replace(/=+$/, ""),
    );
  });

  it("two assertions carrying the same signature counter, in parallel: one signs in (a cloned key)", async () => {
    const { device, email } = await signUpWithKey();
    const first = await json<PublicKeyCredentialRequestOptionsJSON>(
      await svc.post("/signin/webauthn", { email }),
    );
    const second = await json<PublicKeyCredentialRequestOptionsJSON>(
      await svc.post("/signin/webauthn", { email }),
    );
    const a = await device.get(first);
    device.credentials[0]!.counter -= 1; // the clone sends the same counter as the original
    const b = await device.get(second);
    const answers = await Promise.all([
      svc.post("/signin/webauthn/verify", { credential: a }),
      svc.post("/signin/webauthn/verify", { credential: b }),
    ]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 400]);
  });

  it("a user lists their keys and removes one; a removed key no longer signs in; others' keys are out of reach", async () => {
    const { session, device } = await signUpWithKey();
    const listed = await json<{ securityKeys: { id: string; nickname: string; createdAt: string }[] }>(
      await svc.get("/user/security-keys", session.accessToken),
    );
    expect(listed.securityKeys).toEqual([
      { id: expect.any(String), nickname: "my key", transports: ["usb"], createdAt: expect.any(String) },
    ]);
    const keyId = listed.securityKeys[0]!.id;
    const stranger = await signUpWithKey();
    await expectError(
      await svc.request("DELETE", `/user/security-keys/${keyId}`, { token: stranger.session.accessToken }),
      400,
      "invalid-request",
    );
    await expectError(await svc.request("DELETE", `/user/security-keys/${keyId}`), 401, "unauthorized");
    const required = service({ ...NO_VERIFICATION, ...ON, AUTH_REQUIRE_ELEVATED_CLAIM: "required" });
    await expectError(
      await required.request("DELETE", `/user/security-keys/${keyId}`, { token: session.accessToken }),
      401,
      "unauthorized",
    );
    const removed = await svc.request("DELETE", `/user/security-keys/${keyId}`, {
      token: session.accessToken,
    });
    expect(await removed.json()).toBe("OK");
    expect(
      (await json<{ securityKeys: unknown[] }>(await svc.get("/user/security-keys", session.accessToken)))
        .securityKeys,
    ).toEqual([]);
    await expectError(await signInWith(device), 400, "invalid-request");
  });
});
