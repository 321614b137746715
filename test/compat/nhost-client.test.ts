// The real @nhost/nhost-js client against `wrangler dev`, as one app would use it through its life: the password
// journey (sign-up, the mailed link, sign-in, refresh, sign-out), the system endpoints and the contract's errors; TOTP
// MFA set up from the generated secret and a sign-in completed with a code; SMS sign-in with the code read from the
// development SMS list; a GitHub-like provider over loopback; WebAuthn with the tests' software authenticator (the
// Chromium test covers the browser itself). One file, one import of the client, for what were five small files.

import { FetchError } from "@nhost/nhost-js/fetch";
import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import { decodeJwt } from "jose";
import { describe, expect, inject, it } from "vitest";
import { totpCode, totpStep } from "../../src/auth/mfa/totp";
import { SoftwareAuthenticator } from "../fakes/authenticator";
import { uniquePhone } from "../support/phones";
import {
  authUrl,
  browse,
  client,
  followLink,
  latestMail,
  mailedLink,
  REDIRECT,
  rejection,
  uniqueEmail,
} from "./client";

const password = "a long enough password";
// The compatibility server accepts ceremonies from the browser test's page origin (test/compat/wrangler-dev.ts).
const device = () => new SoftwareAuthenticator(`http://localhost:${inject("pagePort")}`, "localhost");
const ELEVATED = "x-hasura-auth-elevated";

describe("@nhost/nhost-js against the service", () => {
  it("signs up, verifies by the mailed link, signs in, refreshes, reads the user, verifies and signs out", async () => {
    const nhost = client();
    const email = `compat-${crypto.randomUUID().slice(0, 8)}@example.com`;

    const signUp = await nhost.auth.signUpEmailPassword({
      email,
      password,
      options: {
        displayName: "Compat Tester",
        redirectTo: "https://app.example.com/verified",
        metadata: { via: "sdk" },
      },
    });
    expect(signUp.status).toBe(200);
    expect(signUp.body.session).toBeNull();
    expect(nhost.getUserSession()).toBeNull();

    // Unverified: the client surfaces the contract's error.
    const unverified = await nhost.auth.signInEmailPassword({ email, password }).catch((e: unknown) => e);
    expect(unverified).toBeInstanceOf(FetchError);
    expect((unverified as FetchError<{ error: string }>).status).toBe(401);
    expect((unverified as FetchError<{ error: string }>).body.error).toBe("unverified-user");

    // Follow the link from the mail; the SDK's own URL builder makes the same link.
    const mail = await latestMail(email);
    const mailed = new URL(/(http\S+\/verify\?\S+)/.exec(mail.text)![1]!);
    const built = nhost.auth.verifyTicketURL({
      ticket: mailed.searchParams.get("ticket")!,
      type: "emailVerify",
      redirectTo: mailed.searchParams.get("redirectTo")!,
    });
    const redirect = await fetch(built, { redirect: "manual" });
    expect(redirect.status).toBe(302);
    const location = new URL(redirect.headers.get("location")!);
    expect(location.origin + location.pathname).toBe("https://app.example.com/verified");
    const refreshToken = location.searchParams.get("refreshToken")!;

    // Exchanging the refresh token stores the session in the client.
    const exchanged = await nhost.auth.refreshToken({ refreshToken });
    expect(exchanged.body.user?.emailVerified).toBe(true);
    expect(nhost.getUserSession()?.user?.email).toBe(email);
    await nhost.auth.signOut({ refreshToken: exchanged.body.refreshToken });
    expect(nhost.getUserSession()).toBeNull();

    // Sign in: the client captures the session and sends the bearer on later calls.
    const signIn = await nhost.auth.signInEmailPassword({ email, password });
    expect(signIn.body.mfa).toBeNull();
    const stored = nhost.getUserSession()!;
    expect(stored.decodedToken["https://hasura.io/jwt/claims"]?.["x-hasura-user-id"]).toBe(stored.user!.id);

    const user = await nhost.auth.getUser();
    expect(user.body).toMatchObject({
      email,
      displayName: "Compat Tester",
      emailVerified: true,
      metadata: { via: "sdk" },
    });

    // Force a refresh through the client's own logic (margin larger than the token lifetime).
    const renewed = await nhost.refreshSession(3600);
    expect(renewed?.refreshToken).toBeTruthy();
    expect(renewed?.refreshToken).not.toBe(stored.refreshToken);
    expect(renewed?.refreshTokenId).toBe(stored.refreshTokenId);

    expect((await nhost.auth.verifyToken({ token: renewed!.accessToken })).body).toBe("OK");
    expect((await nhost.auth.getUser()).body.id).toBe(stored.user!.id);

    await nhost.auth.signOut({ refreshToken: renewed!.refreshToken, all: true });
    expect(nhost.getUserSession()).toBeNull();
    const afterSignOut = await nhost.auth
      .refreshToken({ refreshToken: renewed!.refreshToken })
      .catch((e: unknown) => e);
    expect((afterSignOut as FetchError<{ error: string }>).body.error).toBe("invalid-refresh-token");
  });

  it("reads the system endpoints", async () => {
    const nhost = client();
    expect((await nhost.auth.healthCheckGet()).body).toBe("OK");
    expect((await nhost.auth.healthCheckHead()).status).toBe(200);
    expect((await nhost.auth.getVersion()).body.version).toMatch(/^\d+\.\d+\.\d+$/);
    const jwks = await nhost.auth.getJWKs();
    expect(jwks.body.keys[0]).toMatchObject({ alg: "RS256", kty: "RSA", use: "sig" });
  });

  it("surfaces errors with the contract's message", async () => {
    const nhost = client();
    const error = (await nhost.auth
      .signInEmailPassword({ email: "nobody@example.com", password: "wrong password" })
      .catch((e: unknown) => e)) as FetchError<{ error: string; message: string }>;
    expect(error).toBeInstanceOf(FetchError);
    expect(error.status).toBe(401);
    expect(error.body).toEqual({
      status: 401,
      error: "invalid-email-password",
      message: "incorrect email or password",
    });
    expect(error.message).toBe("incorrect email or password");
  });
});

// TOTP MFA: set-up from the generated secret, then a sign-in that stops at the mfa ticket and completes with a code.
describe("@nhost/nhost-js with TOTP MFA", () => {
  it("activates TOTP, then sign-in answers an mfa ticket that a code turns into a session", async () => {
    const nhost = client();
    const email = uniqueEmail("mfa");
    await nhost.auth.signUpEmailPassword({ email, password, options: { redirectTo: REDIRECT } });
    const verified = await followLink(await mailedLink(email));
    await nhost.auth.refreshToken({ refreshToken: verified.searchParams.get("refreshToken")! });

    const generated = await nhost.auth.changeUserMfa();
    expect(generated.body.imageUrl).toMatch(/^data:image\/png;base64,/);
    const secret = decodeBase32IgnorePadding(generated.body.totpSecret);
    const step = totpStep(Date.now());
    const activated = await nhost.auth.verifyChangeUserMfa({
      code: totpCode(secret, step),
      activeMfaType: "totp",
    });
    expect(activated.body).toBe("OK");

    const fresh = client();
    const first = await fresh.auth.signInEmailPassword({ email, password });
    expect(first.body.session).toBeFalsy();
    expect(first.body.mfa?.ticket).toMatch(/^mfaTotp:/);
    expect(fresh.getUserSession()).toBeNull();

    const wrong = await rejection(
      fresh.auth.verifySignInMfaTotp({ ticket: first.body.mfa!.ticket, otp: "000000" }),
    );
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe("invalid-totp");

    // The activation used this step's code; a code is accepted once, so the app shows the next one.
    const second = await fresh.auth.verifySignInMfaTotp({
      ticket: first.body.mfa!.ticket,
      otp: totpCode(secret, step + 1n),
    });
    expect(second.body.session?.user?.email).toBe(email);
    expect(fresh.getUserSession()?.user?.activeMfaType).toBe("totp");
    expect((await fresh.auth.getUser()).body.activeMfaType).toBe("totp");
  });
});

// SMS sign-in, the code read from the development SMS list as a person would read their phone.
describe("@nhost/nhost-js SMS sign-in", () => {
  it("texts a code that signs in and the client stores the session", async () => {
    const nhost = client();
    const phoneNumber = uniquePhone();
    expect((await nhost.auth.signInPasswordlessSms({ phoneNumber })).body).toBe("OK");
    const texts = (await (
      await fetch(`${authUrl}/dev/sms?to=${encodeURIComponent(phoneNumber)}`)
    ).json()) as {
      body: string;
    }[];
    const otp = /\b(\d{6})\b/.exec(texts[0]!.body)![1]!;

    const wrong = await rejection(
      nhost.auth.verifySignInPasswordlessSms({ phoneNumber, otp: otp === "000000" ? "111111" : "000000" }),
    );
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe("invalid-otp");

    const signedIn = await nhost.auth.verifySignInPasswordlessSms({ phoneNumber, otp });
    expect(signedIn.body.session?.user?.phoneNumber).toBe(phoneNumber);
    expect(nhost.getUserSession()?.user?.phoneNumberVerified).toBe(true);
    expect((await nhost.auth.getUser()).body.phoneNumber).toBe(phoneNumber);
  });

  it("signUpPasswordlessSms creates the account and texts a code; a number with an account is 409", async () => {
    const nhost = client();
    const phoneNumber = uniquePhone();
    const signUp = await nhost.auth.signUpPasswordlessSms({ phoneNumber, options: { displayName: "Sam" } });
    expect(signUp.body).toBe("OK");
    const texts = (await (
      await fetch(`${authUrl}/dev/sms?to=${encodeURIComponent(phoneNumber)}`)
    ).json()) as {
      body: string;
    }[];
    const otp = /\b(\d{6})\b/.exec(texts[0]!.body)![1]!;
    const signedIn = await nhost.auth.verifySignInPasswordlessSms({ phoneNumber, otp });
    expect(signedIn.body.session?.user?.displayName).toBe("Sam");

    const taken = await rejection(nhost.auth.signUpPasswordlessSms({ phoneNumber }));
    expect(taken.status).toBe(409);
    expect(taken.body.error).toBe("phone-number-already-in-use");
  });
});

// The main provider journey: the app builds the URL with `signInProviderURL`, the browser goes to the (fake, loopback)
// GitHub and back, and the app exchanges the `refreshToken` it receives; then it reads the provider's tokens once.
describe("@nhost/nhost-js with a GitHub-like provider", () => {
  it("signs up through signInProviderURL, refreshes into a session, reads the provider tokens once", async () => {
    const nhost = client();
    const email = uniqueEmail("github");
    const id = String(Math.floor(Math.random() * 1e12));
    const url = nhost.auth.signInProviderURL("github", {
      redirectTo: REDIRECT,
      metadata: { source: "github" },
      state: "app-state",
    } as never);
    const back = await browse(url, { fake_id: id, fake_email: email });
    expect(back.searchParams.get("errorDescription")).toBeNull();
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get("state")).toBe("app-state");
    const refreshToken = back.searchParams.get("refreshToken")!;
    const { body: session } = await nhost.auth.refreshToken({ refreshToken });
    nhost.sessionStorage.set(session);
    const { body: user } = await nhost.auth.getUser();
    expect(user).toMatchObject({
      email,
      emailVerified: true,
      displayName: "Octo Cat",
      metadata: { source: "github" },
    });

    const { body: tokens } = await nhost.auth.getProviderTokens("github");
    expect(tokens.accessToken).toMatch(/^access-/);
    const { body: again } = await nhost.auth.getProviderTokens("github");
    expect(again.accessToken).toBe("");

    // The same GitHub account again is the same user.
    const second = await browse(nhost.auth.signInProviderURL("github", { redirectTo: REDIRECT }), {
      fake_id: id,
    });
    const { body: secondSession } = await client().auth.refreshToken({
      refreshToken: second.searchParams.get("refreshToken")!,
    });
    expect(secondSession.user?.id).toBe(user.id);
  });
});

// The WebAuthn operations, the tests' software authenticator standing in for the browser.
describe("@nhost/nhost-js WebAuthn", () => {
  it("signs up with a key, signs in with it, elevates, and adds a second key", async () => {
    const nhost = client();
    const key = device();
    const email = uniqueEmail("wa-compat");
    const creation = await nhost.auth.signUpWebauthn({ email, options: { redirectTo: REDIRECT } });
    const signedUp = await nhost.auth.verifySignUpWebauthn({
      credential: await key.create(creation.body, { alg: "RS256", attestation: "packed" }),
      nickname: "first",
    });
    expect(signedUp.body.session).toBeNull();
    await followLink(await mailedLink(email));

    const request = await nhost.auth.signInWebauthn({ email });
    const signedIn = await nhost.auth.verifySignInWebauthn({ credential: await key.get(request.body) });
    expect(signedIn.body.session?.user?.email).toBe(email);
    expect(nhost.getUserSession()?.user?.email).toBe(email);

    // The client POSTs these with no body and no Content-Type (client.md §9).
    const elevation = await nhost.auth.elevateWebauthn();
    const elevated = await nhost.auth.verifyElevateWebauthn({ credential: await key.get(elevation.body) });
    const claims = decodeJwt(elevated.body.session!.accessToken)["https://hasura.io/jwt/claims"] as Record<
      string,
      unknown
    >;
    expect(claims[ELEVATED]).toBe(signedIn.body.session?.user?.id);

    const addition = await nhost.auth.addSecurityKey();
    expect(addition.body.excludeCredentials).toHaveLength(1);
    const added = await nhost.auth.verifyAddSecurityKey({
      credential: await device().create(addition.body),
      nickname: "second",
    });
    expect(added.body).toMatchObject({ nickname: "second" });
  });

  it("surfaces a replayed assertion as the contract's 400", async () => {
    const nhost = client();
    const key = device();
    const email = uniqueEmail("wa-replay");
    const creation = await nhost.auth.signUpWebauthn({ email });
    await nhost.auth.verifySignUpWebauthn({ credential: await key.create(creation.body) });
    await followLink(await mailedLink(email));
    const credential = await key.get((await nhost.auth.signInWebauthn()).body);
    await nhost.auth.verifySignInWebauthn({ credential });
    const replay = await rejection(client().auth.verifySignInWebauthn({ credential }));
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe("invalid-request");
  });
});
