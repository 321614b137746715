// The whole password journey driven by the real @nhost/nhost-js client over HTTP against `wrangler dev`.
import { FetchError } from "@nhost/nhost-js/fetch";
import { describe, expect, it } from "vitest";
import { client, latestMail } from "./client";

const password = "a long enough password";

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
