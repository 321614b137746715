// ID tokens a native app got from Google or Apple (`/signin/idtoken`, `/signup/idtoken`, `/link/idtoken`). Threats:
// a token for another app (audience), an expired one, one signed by someone else's key or by none (`alg: none`),
// one replayed from another sign-in (nonce), and linking an identity another user holds.
import { env } from "cloudflare:test";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { expectError, signUp, uniqueEmail } from "../helpers";
import { mintIdToken, withProviders } from "./support";

const svc = withProviders({
  AUTH_PROVIDER_GOOGLE_AUDIENCE: "ios-client,web-client",
  // The fake plays Google: its issuer and keys (test/fakes/outbound.js).
});
const off = withProviders();

const mint = mintIdToken;

const signIn = (idToken: string, extra: Record<string, unknown> = {}) =>
  svc.post("/signin/idtoken", { provider: "google", idToken, ...extra });

describe("signing in with a Google ID token", () => {
  it("signs a new user up, and the same user in again; options apply to the new user", async () => {
    const email = uniqueEmail("idtoken");
    const sub = `g-${crypto.randomUUID()}`;
    const token = await mint({ sub, email, email_verified: true, name: "Native User", nonce: "n-1" });
    const first = await signIn(token, { nonce: "n-1", options: { metadata: { from: "ios" } } });
    expect(first.status).toBe(200);
    const body = (await first.json()) as {
      session: { user: { id: string; email: string; emailVerified: boolean; metadata: unknown } };
    };
    expect(body.session.user).toMatchObject({ email, emailVerified: true, metadata: { from: "ios" } });
    const again = (await (await signIn(await mint({ sub, email, aud: "web-client" }))).json()) as typeof body;
    expect(again.session.user.id).toBe(body.session.user.id);
    const viaSignUp = await svc.post("/signup/idtoken", { provider: "google", idToken: await mint({ sub }) });
    expect(((await viaSignUp.json()) as typeof body).session.user.id).toBe(body.session.user.id);
  });

  it("refuses another app's token, an expired one, a wrong nonce, a foreign key and alg none", async () => {
    const sub = `g-${crypto.randomUUID()}`;
    await expectError(await signIn(await mint({ sub, aud: "someone-else" })), 401, "unauthorized");
    const past = Math.floor(Date.now() / 1000) - 3600;
    await expectError(await signIn(await mint({ sub, iat: past - 300, exp: past })), 401, "unauthorized");
    await expectError(await signIn(await mint({ sub, nonce: "a" }), { nonce: "b" }), 401, "unauthorized");
    await expectError(await signIn(await mint({ sub, iss: "https://evil.example" })), 401, "unauthorized");

    const { privateKey } = await generateKeyPair("RS256");
    const now = Math.floor(Date.now() / 1000);
    const foreign = await new SignJWT({ sub })
      .setProtectedHeader({ alg: "RS256", kid: "fake-1" })
      .setIssuer("https://oidc.fake")
      .setAudience("ios-client")
      .setIssuedAt(now)
      .setExpirationTime(now + 300)
      .sign(privateKey);
    await expectError(await signIn(foreign), 401, "unauthorized");
    const b64 = (value: unknown) =>
      btoa(JSON.stringify(value)).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
    const none = `${b64({ alg: "none" })}.${b64({ sub, iss: "https://oidc.fake", aud: "ios-client", iat: now, exp: now + 300 })}.`;
    await expectError(await signIn(none), 401, "unauthorized");
    await expectError(await signIn("garbage"), 401, "unauthorized");
  });

  it("refetches the key set at most once in 30 s for key ids it does not hold (made-up kids cost no provider call)", async () => {
    // Threat: tokens naming made-up key ids, each making the service fetch Google's or Apple's keys again.
    await signIn(await mint({ sub: `g-${crypto.randomUUID()}` })); // the key set is in KV now
    // An hour back (the tokens are minted on the same clock): the refetch this test allows is long past for the tests
    // after it, which need their own.
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() - 3_600_000);
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const fetches = async () =>
      (await (await env.OUTBOUND!.fetch("https://oidc.fake/__jwks-fetches")).json()) as number;
    const before = await fetches();
    const { privateKey } = await generateKeyPair("RS256");
    const now = Math.floor(Date.now() / 1000);
    for (let i = 0; i < 5; i++) {
      const token = await new SignJWT({ sub: "x" })
        .setProtectedHeader({ alg: "RS256", kid: `made-up-${i}` })
        .setIssuer("https://oidc.fake")
        .setAudience("ios-client")
        .setIssuedAt(now)
        .setExpirationTime(now + 300)
        .sign(privateKey);
      await expectError(await signIn(token), 401, "unauthorized");
    }
    expect((await fetches()) - before).toBeLessThanOrEqual(1);
  });

  it("requires the nonce when AUTH_PROVIDER_GOOGLE_ID_TOKEN_NONCE_REQUIRED is on", async () => {
    const strict = withProviders({
      AUTH_PROVIDER_GOOGLE_AUDIENCE: "ios-client",
      AUTH_PROVIDER_GOOGLE_ID_TOKEN_NONCE_REQUIRED: "true",
    });
    const sub = `g-${crypto.randomUUID()}`;
    const token = await mint({ sub, nonce: "n-2" });
    const without = await strict.post("/signin/idtoken", { provider: "google", idToken: token });
    const { message } = await expectError(without, 400, "invalid-request");
    expect(message).toMatch(/^nonce: required/);
    const noNonceInToken = await strict.post("/signin/idtoken", {
      provider: "google",
      idToken: await mint({ sub }),
      nonce: "n-2",
    });
    await expectError(noNonceInToken, 401, "unauthorized");
    expect(
      (await strict.post("/signin/idtoken", { provider: "google", idToken: token, nonce: "n-2" })).status,
    ).toBe(200);
  });

  it("answers 409 disabled-endpoint without an audience configured, and 400 for an unknown provider", async () => {
    await expectError(
      await off.post("/signin/idtoken", { provider: "google", idToken: await mint({ sub: "x" }) }),
      409,
      "disabled-endpoint",
    );
    await expectError(
      await svc.post("/signin/idtoken", { provider: "myspace", idToken: "x" }),
      400,
      "invalid-request",
    );
  });
});

describe("the provider's keys", () => {
  it("are cached in KV, and fetched again when a token names a key the cache does not hold", async () => {
    const { publicKey } = await generateKeyPair("RS256", { extractable: true });
    const stale = { keys: [{ ...(await exportJWK(publicKey)), kid: "rotated-out", alg: "RS256" }] };
    await env.PROVIDER_KEYS.put("https://oidc.fake/jwks", JSON.stringify(stale));
    const response = await signIn(await mint({ sub: `g-${crypto.randomUUID()}` }));
    expect(response.status).toBe(200);
    const cached = await env.PROVIDER_KEYS.get<{ keys: { kid: string }[] }>("https://oidc.fake/jwks", "json");
    expect(cached?.keys.map((key) => key.kid)).toEqual(["fake-1"]);
  });
});

describe("linking an ID token's identity", () => {
  it("links it to the signed-in user, and refuses one another user holds", async () => {
    const user = await signUp(svc);
    const sub = `g-${crypto.randomUUID()}`;
    const linked = await svc.post(
      "/link/idtoken",
      { provider: "google", idToken: await mint({ sub }) },
      user.accessToken,
    );
    expect(await linked.json()).toBe("OK");
    const signedIn = (await (await signIn(await mint({ sub }))).json()) as {
      session: { user: { id: string } };
    };
    expect(signedIn.session.user.id).toBe(user.user.id);
    const other = await signUp(svc);
    await expectError(
      await svc.post(
        "/link/idtoken",
        { provider: "google", idToken: await mint({ sub }) },
        other.accessToken,
      ),
      400,
      "provider-account-already-linked",
    );
    await expectError(
      await svc.post("/link/idtoken", { provider: "google", idToken: await mint({ sub }) }),
      401,
      "unauthorized",
    );
  });
});
