// The account journeys of the accounts issue, driven by the real @nhost/nhost-js client against `wrangler dev`:
// each mail is read back from the development mailbox and followed to the end.
import { base64url } from "jose";
import { describe, expect, it } from "vitest";
import {
  client,
  followLink,
  latestMail,
  mailedLink,
  REDIRECT,
  rejection,
  turnstileToken,
  uniqueEmail,
} from "./client";

const PASSWORD = "a long enough password";

/** A verified email+password user, signed in on a fresh client. */
async function signedInUser(email = uniqueEmail("compat")) {
  const nhost = client();
  await nhost.auth.signUpEmailPassword({ email, password: PASSWORD, options: { redirectTo: REDIRECT } });
  const verified = await followLink(await mailedLink(email));
  await nhost.auth.refreshToken({ refreshToken: verified.searchParams.get("refreshToken")! });
  return { nhost, email };
}

describe("@nhost/nhost-js account journeys", () => {
  it("magic link: the mailed link signs in a new user, whose email is then verified", async () => {
    const nhost = client();
    const email = uniqueEmail("magic");
    const sent = await nhost.auth.signInPasswordlessEmail({
      email,
      options: { redirectTo: REDIRECT, displayName: "Magic User" },
    });
    expect(sent.body).toBe("OK");

    const landing = await followLink(await mailedLink(email));
    expect(`${landing.origin}${landing.pathname}`).toBe(REDIRECT);
    expect(landing.searchParams.get("type")).toBe("signinPasswordless");
    await nhost.auth.refreshToken({ refreshToken: landing.searchParams.get("refreshToken")! });

    const user = await nhost.auth.getUser();
    expect(user.body).toMatchObject({ email, displayName: "Magic User", emailVerified: true });
    // The link was single use.
    const again = await followLink(await mailedLink(email));
    expect(again.searchParams.get("error")).toBe("invalid-ticket");
  });

  it("magic link with PKCE: signUpPasswordlessEmail, the link carries a code, tokenExchange returns the session", async () => {
    const nhost = client();
    const email = uniqueEmail("pkce");
    const codeVerifier = base64url.encode(crypto.getRandomValues(new Uint8Array(32)));
    const codeChallenge = base64url.encode(
      new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(codeVerifier))),
    );
    await nhost.auth.signUpPasswordlessEmail({ email, options: { redirectTo: REDIRECT }, codeChallenge });
    const landing = await followLink(await mailedLink(email));
    expect(landing.searchParams.get("refreshToken")).toBeNull();
    const exchanged = await nhost.auth.tokenExchange({
      code: landing.searchParams.get("code")!,
      codeVerifier,
    });
    expect(exchanged.body.session?.user?.email).toBe(email);
    const again = await rejection(client().auth.signUpPasswordlessEmail({ email }));
    expect(again.status).toBe(409);
    expect(again.body.error).toBe("email-already-in-use");
  });

  it("email OTP: the mailed code signs in and the client stores the session", async () => {
    const nhost = client();
    const email = uniqueEmail("otp");
    expect((await nhost.auth.signInOTPEmail({ email })).body).toBe("OK");
    const otp = /\b(\d{6})\b/.exec((await latestMail(email)).text)![1]!;

    const wrong = await rejection(
      nhost.auth.verifySignInOTPEmail({ email, otp: otp === "000000" ? "111111" : "000000" }),
    );
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe("invalid-otp");

    const verified = await nhost.auth.verifySignInOTPEmail({ email, otp });
    expect(verified.body.session?.user?.email).toBe(email);
    expect(nhost.getUserSession()?.user?.emailVerified).toBe(true);
    expect((await nhost.auth.getUser()).body.email).toBe(email);
  });

  // The compat server guards password reset with Turnstile (test/compat/wrangler-dev.ts): the client sends the
  // widget's token the way Nhost's documentation says, in the x-cf-turnstile-response header.
  it("password reset: the link signs in, the new password is set, the old one no longer works", async () => {
    const { email } = await signedInUser();
    const nhost = client();
    const unsolved = await rejection(nhost.auth.sendPasswordResetEmail({ email }));
    expect(unsolved.status).toBe(400);
    expect(unsolved.body.error).toBe("turnstile-required");
    const sent = await nhost.auth.sendPasswordResetEmail(
      { email, options: { redirectTo: REDIRECT } },
      { headers: { "x-cf-turnstile-response": turnstileToken("password-reset") } },
    );
    expect(sent.body).toBe("OK");
    const landing = await followLink(await mailedLink(email));
    expect(landing.searchParams.get("type")).toBe("passwordReset");
    await nhost.auth.refreshToken({ refreshToken: landing.searchParams.get("refreshToken")! });

    const newPassword = "a brand new passphrase";
    expect((await nhost.auth.changeUserPassword({ newPassword })).body).toBe("OK");
    const old = await rejection(client().auth.signInEmailPassword({ email, password: PASSWORD }));
    expect(old.body.error).toBe("invalid-email-password");
    const fresh = client();
    await fresh.auth.signInEmailPassword({ email, password: newPassword });
    expect(fresh.getUserSession()?.user?.email).toBe(email);
  });

  it("password reset with the ticket itself, no session: single use", async () => {
    const { email } = await signedInUser();
    const nhost = client();
    await nhost.auth.sendPasswordResetEmail(
      { email },
      { headers: { "x-cf-turnstile-response": turnstileToken("password-reset") } },
    );
    const ticket = (await mailedLink(email)).searchParams.get("ticket")!;
    expect(ticket).toMatch(/^passwordReset:/);
    expect((await nhost.auth.changeUserPassword({ newPassword: "reset by ticket!", ticket })).body).toBe(
      "OK",
    );
    const reused = await rejection(
      nhost.auth.changeUserPassword({ newPassword: "once more please", ticket }),
    );
    expect(reused.body.error).toBe("invalid-ticket");
    await nhost.auth.signInEmailPassword({ email, password: "reset by ticket!" });
    expect(nhost.getUserSession()).not.toBeNull();
  });

  it("anonymous → regular: deanonymize with email and password, verify, sign in as the same user", async () => {
    const nhost = client();
    const anonymous = await nhost.auth.signInAnonymous();
    const anonymousId = anonymous.body.session!.user!.id;
    expect(nhost.getUserSession()?.user?.isAnonymous).toBe(true);

    const email = uniqueEmail("deanon");
    const answer = await nhost.auth.deanonymizeUser({
      signInMethod: "email-password",
      email,
      password: PASSWORD,
      options: { redirectTo: REDIRECT },
    });
    expect(answer.body).toBe("OK");
    const landing = await followLink(await mailedLink(email));
    expect(landing.searchParams.get("type")).toBe("emailVerify");

    const signedIn = client();
    await signedIn.auth.signInEmailPassword({ email, password: PASSWORD });
    const user = (await signedIn.auth.getUser()).body;
    expect(user).toMatchObject({ id: anonymousId, email, isAnonymous: false, emailVerified: true });
    expect(user.roles).not.toContain("anonymous");
  });

  it("anonymous → regular by magic link", async () => {
    const nhost = client();
    const anonymousId = (await nhost.auth.signInAnonymous()).body.session!.user!.id;
    const email = uniqueEmail("deanon-magic");
    await nhost.auth.deanonymizeUser({
      signInMethod: "passwordless",
      email,
      options: { redirectTo: REDIRECT },
    });
    const landing = await followLink(await mailedLink(email));
    await nhost.auth.refreshToken({ refreshToken: landing.searchParams.get("refreshToken")! });
    expect((await nhost.auth.getUser()).body).toMatchObject({ id: anonymousId, email, isAnonymous: false });
  });

  it("personal access token: created with a session, then signs in a script with no password", async () => {
    const { nhost, email } = await signedInUser();
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const created = await nhost.auth.createPAT({ expiresAt, metadata: { purpose: "ci" } });
    expect(created.body.personalAccessToken).toMatch(/^[0-9a-f-]{36}$/);

    const script = client();
    const signedIn = await script.auth.signInPAT({ personalAccessToken: created.body.personalAccessToken });
    expect(signedIn.body.session?.user?.email).toBe(email);
    expect((await script.auth.getUser()).body.email).toBe(email);

    const unknown = await rejection(client().auth.signInPAT({ personalAccessToken: crypto.randomUUID() }));
    expect(unknown.status).toBe(401);
    expect(unknown.body.error).toBe("invalid-pat");
  });
});
