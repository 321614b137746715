import { env } from "cloudflare:test";
import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from "@simplewebauthn/server";
import { describe, expect, it } from "vitest";
import { totpCode, totpStep } from "../../../src/auth/mfa/totp";
import { SoftwareAuthenticator } from "../../fakes/authenticator";
import {
  expectError,
  follow,
  mailbox,
  PASSWORD,
  service,
  sessionFromRefresh,
  uniqueEmail,
  verifyPath,
  type WireSession,
} from "../../helpers";
import { allInShards, userD1 } from "../../support/shards";

/**
 * Account pre-hijacking (Sudhodanan & Paverd, 2022): an attacker sets up an account on the victim's address before
 * the victim does (a password, a passkey, an anonymous account deanonymized to it) and waits. When the victim then
 * proves the address some other way (email code, magic link, password reset), whatever the attacker set up must be
 * gone: the password, the keys, the sessions. The victim's own sign-up verification keeps the victim's password.
 */

const svc = service({
  AUTH_EMAIL_PASSWORDLESS_ENABLED: "true",
  AUTH_OTP_EMAIL_ENABLED: "true",
  AUTH_ANONYMOUS_USERS_ENABLED: "true",
  AUTH_WEBAUTHN_ENABLED: "true",
});
const ATTACKER_PASSWORD = "attacker knows this one";

const signIn = (email: string, password: string) => svc.post("/signin/email-password", { email, password });

async function plantPassword(email: string): Promise<void> {
  const response = await svc.post("/signup/email-password", { email, password: ATTACKER_PASSWORD });
  expect(await response.json()).toEqual({ session: null });
}

async function signInByCode(email: string): Promise<WireSession> {
  expect(await (await svc.post("/signin/otp/email", { email })).json()).toBe("OK");
  const [mail] = await mailbox(svc, email);
  const otp = /\b(\d{6})\b/.exec(mail!.text)![1]!;
  const body = (await (await svc.post("/signin/otp/email/verify", { email, otp })).json()) as {
    session: WireSession;
  };
  return body.session;
}

async function signInByLink(email: string): Promise<WireSession> {
  expect(await (await svc.post("/signin/passwordless/email", { email })).json()).toBe("OK");
  const [mail] = await mailbox(svc, email);
  const params = await follow(svc, verifyPath(mail!));
  return sessionFromRefresh(svc, params.get("refreshToken")!);
}

/** Generates and activates TOTP for the signed-in user, as an authenticator app would. */
async function enableTotp(service_: ReturnType<typeof service>, accessToken: string): Promise<void> {
  const generated = (await (await service_.get("/mfa/totp/generate", accessToken)).json()) as {
    totpSecret: string;
  };
  const secret = decodeBase32IgnorePadding(generated.totpSecret);
  const activated = await service_.post(
    "/user/mfa",
    { code: totpCode(secret, totpStep(Date.now())), activeMfaType: "totp" },
    accessToken,
  );
  expect(await activated.json()).toBe("OK");
}

describe("account pre-hijacking", () => {
  it("a password planted before the victim signs in by email code stops working", async () => {
    const victim = uniqueEmail("victim");
    await plantPassword(victim);
    const session = await signInByCode(victim);
    expect(session.user.emailVerified).toBe(true);
    await expectError(await signIn(victim, ATTACKER_PASSWORD), 401, "invalid-email-password");
  });

  it("a password planted before the victim signs in by magic link stops working", async () => {
    const victim = uniqueEmail("victim");
    await plantPassword(victim);
    await signInByLink(victim);
    await expectError(await signIn(victim, ATTACKER_PASSWORD), 401, "invalid-email-password");
  });

  it("the account's own sign-up verification keeps its password", async () => {
    const email = uniqueEmail("owner");
    await svc.post("/signup/email-password", { email, password: PASSWORD });
    const [mail] = await mailbox(svc, email);
    await follow(svc, verifyPath(mail!));
    expect((await signIn(email, PASSWORD)).status).toBe(200);
    // Once proven, later proofs wipe nothing: the owner's password survives a magic-link sign-in.
    await signInByLink(email);
    expect((await signIn(email, PASSWORD)).status).toBe(200);
  });

  it("a passkey planted through WebAuthn sign-up does not survive the victim's password reset", async () => {
    const victim = uniqueEmail("victim");
    const attackerDevice = new SoftwareAuthenticator("http://localhost:3000", "localhost");
    const options = (await (
      await svc.post("/signup/webauthn", { email: victim })
    ).json()) as PublicKeyCredentialCreationOptionsJSON;
    const planted = await svc.post("/signup/webauthn/verify", {
      credential: await attackerDevice.create(options),
    });
    expect(await planted.json()).toEqual({ session: null });

    expect(await (await svc.post("/user/password/reset", { email: victim })).json()).toBe("OK");
    const reset = (await mailbox(svc, victim)).find((mail) => mail.text.includes("passwordReset"))!;
    const params = await follow(svc, verifyPath(reset));
    const session = await sessionFromRefresh(svc, params.get("refreshToken")!);
    expect(session.user.emailVerified).toBe(true);
    const keys = await userD1(session.user.id)
      .prepare("SELECT count(*) AS n FROM security_keys WHERE user_id = ?")
      .bind(session.user.id)
      .first<{ n: number }>();
    expect(keys!.n).toBe(0);
    const request = (await (
      await svc.post("/signin/webauthn", {})
    ).json()) as PublicKeyCredentialRequestOptionsJSON;
    await expectError(
      await svc.post("/signin/webauthn/verify", { credential: await attackerDevice.get(request) }),
      400,
      "invalid-request",
    );
  });

  it("an anonymous account deanonymized to the victim's address loses its session when the victim signs in", async () => {
    const victim = uniqueEmail("victim");
    const anonymous = ((await (await svc.post("/signin/anonymous", {})).json()) as { session: WireSession })
      .session;
    const deanonymized = await svc.post(
      "/user/deanonymize",
      { signInMethod: "email-password", email: victim, password: ATTACKER_PASSWORD },
      anonymous.accessToken,
    );
    expect(await deanonymized.json()).toBe("OK");
    const session = await signInByCode(victim);
    expect(session.user.id).toBe(anonymous.user.id);
    await expectError(
      await svc.post("/token", { refreshToken: anonymous.refreshToken }),
      401,
      "invalid-refresh-token",
    );
    await expectError(await signIn(victim, ATTACKER_PASSWORD), 401, "invalid-email-password");
  });

  it("a reset by ticket (no link followed) on a never-proven account ends the attacker's sessions too", async () => {
    const victim = uniqueEmail("victim");
    const open = service({ AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "false" });
    // Without verification required the attacker even holds a session on the victim's address.
    const { session: attacker } = (await (
      await open.post("/signup/email-password", { email: victim, password: ATTACKER_PASSWORD })
    ).json()) as { session: WireSession };
    await open.post("/user/password/reset", { email: victim });
    const [mail] = await mailbox(open, victim);
    const ticket = /ticket=(passwordReset[^&\s]+)/.exec(decodeURIComponent(mail!.text))![1]!;
    expect(await (await open.post("/user/password", { newPassword: PASSWORD, ticket })).json()).toBe("OK");
    await expectError(
      await open.post("/token", { refreshToken: attacker.refreshToken }),
      401,
      "invalid-refresh-token",
    );
    expect((await open.post("/signin/email-password", { email: victim, password: PASSWORD })).status).toBe(
      200,
    );
  });
});

describe("account pre-hijacking: the residue of the owner's own verification mail", () => {
  it("the sign-up verification mail says an account was created with the address, and what to do if it was not you", async () => {
    const victim = uniqueEmail("victim");
    await plantPassword(victim);
    const [mail] = await mailbox(svc, victim);
    expect(mail!.text).toContain("An account was created with this email address");
    expect(mail!.text).toContain("If you did not create it, do not follow the link");
  });

  it("a passkey planted at sign-up and kept by the victim's verification click goes with the victim's password reset", async () => {
    // Threat: the attacker signs up the victim's address with a passkey; the victim follows the verification mail
    // (which must keep what a genuine sign-up set up), and the passkey now opens the account. A reset is how the
    // victim takes it back, so the reset drops every key from before the address was proven.
    const victim = uniqueEmail("victim");
    const attackerDevice = new SoftwareAuthenticator("http://localhost:3000", "localhost");
    const options = (await (
      await svc.post("/signup/webauthn", { email: victim })
    ).json()) as PublicKeyCredentialCreationOptionsJSON;
    await svc.post("/signup/webauthn/verify", { credential: await attackerDevice.create(options) });
    const [verification] = await mailbox(svc, victim);
    await follow(svc, verifyPath(verification!));
    const passkeySignIn = async () => {
      const request = (await (
        await svc.post("/signin/webauthn", {})
      ).json()) as PublicKeyCredentialRequestOptionsJSON;
      return svc.post("/signin/webauthn/verify", { credential: await attackerDevice.get(request) });
    };
    expect((await passkeySignIn()).status).toBe(200);

    expect(await (await svc.post("/user/password/reset", { email: victim })).json()).toBe("OK");
    const reset = (await mailbox(svc, victim)).find((mail) => mail.text.includes("passwordReset"))!;
    await follow(svc, verifyPath(reset));
    await expectError(await passkeySignIn(), 400, "invalid-request");
  });

  it("TOTP and keys set up before the first proof go with a reset; the owner's TOTP from after it stays", async () => {
    // With verification off the attacker even signs in and adds TOTP; anyone may ask for the verification mail.
    const open = service({
      AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "false",
      AUTH_MFA_ENABLED: "true",
      AUTH_WEBAUTHN_ENABLED: "true",
    });
    const victim = uniqueEmail("victim");
    const { session: attacker } = (await (
      await open.post("/signup/email-password", { email: victim, password: ATTACKER_PASSWORD })
    ).json()) as { session: WireSession };
    await enableTotp(open, attacker.accessToken);
    expect(await (await open.post("/user/email/send-verification-email", { email: victim })).json()).toBe(
      "OK",
    );
    const [verification] = await mailbox(open, victim);
    await follow(open, verifyPath(verification!));

    await open.post("/user/password/reset", { email: victim });
    const reset = (await mailbox(open, victim)).find((mail) => mail.text.includes("passwordReset"))!;
    const ticket = /ticket=(passwordReset[^&\s]+)/.exec(decodeURIComponent(reset.text))![1]!;
    expect(await (await open.post("/user/password", { newPassword: PASSWORD, ticket })).json()).toBe("OK");
    // No second factor is asked any more: the attacker's TOTP is gone with the recovery codes.
    const signedIn = (await (
      await open.post("/signin/email-password", { email: victim, password: PASSWORD })
    ).json()) as {
      session: WireSession | null;
    };
    expect(signedIn.session?.user.activeMfaType).toBeNull();
    const codes = await userD1(attacker.user.id)
      .prepare("SELECT count(*) AS n FROM mfa_recovery_codes WHERE user_id = ?")
      .bind(attacker.user.id)
      .first<{ n: number }>();
    expect(codes!.n).toBe(0);

    // The owner's own TOTP, set up after the proof, survives the next reset.
    await enableTotp(open, signedIn.session!.accessToken);
    await open.post("/user/password/reset", { email: victim });
    const again = (await mailbox(open, victim)).find((mail) => mail.text.includes("passwordReset"))!;
    await follow(open, verifyPath(again));
    const later = (await (
      await open.post("/signin/email-password", { email: victim, password: PASSWORD })
    ).json()) as {
      mfa: { ticket: string } | null;
    };
    expect(later.mfa?.ticket).toMatch(/^mfaTotp:/);
  });
});

describe("what a credential change ends", () => {
  const open = service({
    AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "false",
    AUTH_EMAIL_PASSWORDLESS_ENABLED: "true",
  });

  async function userWithPatAndLink() {
    const email = uniqueEmail("owner");
    const { session } = (await (
      await open.post("/signup/email-password", { email, password: PASSWORD })
    ).json()) as { session: WireSession };
    const pat = (await (
      await open.post(
        "/pat",
        { expiresAt: new Date(Date.now() + 86_400_000).toISOString() },
        session.accessToken,
      )
    ).json()) as { personalAccessToken: string };
    await open.post("/signin/passwordless/email", { email });
    const [link] = await mailbox(open, email);
    return { email, session, pat: pat.personalAccessToken, linkPath: verifyPath(link!) };
  }

  it("a password change ends PATs and outstanding links; the caller's own session stays", async () => {
    const { session, pat, linkPath } = await userWithPatAndLink();
    const changed = await open.post(
      "/user/password",
      { newPassword: "a brand new password" },
      session.accessToken,
    );
    expect(await changed.json()).toBe("OK");
    await expectError(await open.post("/signin/pat", { personalAccessToken: pat }), 401, "invalid-pat");
    expect((await follow(open, linkPath)).get("error")).toBe("invalid-ticket");
    expect((await open.post("/token", { refreshToken: session.refreshToken })).status).toBe(200);
  });

  it("an email change ends PATs, links mailed to the old address and other sessions", async () => {
    const { session, pat, linkPath } = await userWithPatAndLink();
    const newEmail = uniqueEmail("moved");
    await open.post("/user/email/change", { newEmail }, session.accessToken);
    const [confirm] = await mailbox(open, newEmail);
    const params = await follow(open, verifyPath(confirm!));
    expect(params.get("refreshToken")).toBeTruthy();
    await expectError(await open.post("/signin/pat", { personalAccessToken: pat }), 401, "invalid-pat");
    expect((await follow(open, linkPath)).get("error")).toBe("invalid-ticket");
    await expectError(
      await open.post("/token", { refreshToken: session.refreshToken }),
      401,
      "invalid-refresh-token",
    );
  });

  // A sign-up and 60 sign-ins, each an argon2id hash: ~4 s on a quiet machine, 12 s seen on a busy one.
  it("revoking every session of a user with many of them stays within a bounded number of object calls", async () => {
    const email = uniqueEmail("busy");
    const { session } = (await (
      await open.post("/signup/email-password", { email, password: PASSWORD })
    ).json()) as { session: WireSession };
    const others: WireSession[] = [];
    for (let i = 0; i < 60; i++) {
      others.push(
        (
          (await (await open.post("/signin/email-password", { email, password: PASSWORD })).json()) as {
            session: WireSession;
          }
        ).session,
      );
    }
    // Count the calls to session objects: one per session would pass the platform's subrequest limit.
    let calls = 0;
    const counting = new Proxy(env.REFRESH_SESSIONS, {
      get(target, property) {
        if (property === "get") {
          return (...args: Parameters<typeof target.get>) => {
            calls += 1;
            return target.get(...args);
          };
        }
        const value = Reflect.get(target, property);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const counted = service({
      AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "false",
      REFRESH_SESSIONS: counting,
    });
    const signOut = await counted.request("POST", "/signout", {
      json: { all: true },
      token: session.accessToken,
    });
    expect(await signOut.json()).toBe("OK");
    expect(calls).toBeLessThanOrEqual(50);
    for (const other of others.slice(0, 5)) {
      await expectError(
        await open.post("/token", { refreshToken: other.refreshToken }),
        401,
        "invalid-refresh-token",
      );
    }
    const left = await allInShards<{ n: number }>(
      "SELECT count(*) AS n FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.email = ?",
      email,
    );
    expect(left.reduce((sum, row) => sum + row.n, 0)).toBe(0);
  }, 60_000);
});
