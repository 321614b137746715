import { env } from "cloudflare:test";
import { decodeBase32IgnorePadding, encodeBase32UpperCaseNoPadding } from "@oslojs/encoding";
import { decode as decodePng } from "fast-png";
import jsQR from "jsqr";
import { describe, expect, it } from "vitest";
import { totpCode, totpStep } from "../../../src/auth/mfa/totp";
import {
  auditTypesOf,
  expectError,
  follow,
  mailbox,
  NO_VERIFICATION,
  PASSWORD,
  service,
  signUp,
  uniqueEmail,
  verifyPath,
  type WireSession,
} from "../../helpers";
import { eachStatementFailingOnce } from "../../support/faults";
import { routedD1, userD1 } from "../../support/shards";

const svc = service({
  ...NO_VERIFICATION,
  AUTH_MFA_ENABLED: "true",
  AUTH_MFA_TOTP_ISSUER: "Acme",
  AUTH_ANONYMOUS_USERS_ENABLED: "true",
});

/** The code of the step `offset` away from now, as the user's authenticator app would show it. */
const codeAt = (secret: Uint8Array, offset = 0n) => totpCode(secret, totpStep(Date.now()) + offset);
const wrongCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0");

/**
 * A code may be used once (no replay), so a test that needs several lets the service forget which step it accepted
 * last, as 30 seconds of waiting would. The replay rule itself is tested without this.
 */
const forgetLastStep = (userId: string) =>
  userD1(userId).prepare("UPDATE users SET totp_last_step = NULL WHERE id = ?").bind(userId).run();

async function generate(session: WireSession): Promise<{ imageUrl: string; totpSecret: string }> {
  const response = await svc.get("/mfa/totp/generate", session.accessToken);
  expect(response.status).toBe(200);
  return (await response.json()) as { imageUrl: string; totpSecret: string };
}

/** A signed-up user with TOTP active. */
async function userWithTotp(email = uniqueEmail("mfa")) {
  const session = await signUp(svc, email);
  const { totpSecret } = await generate(session);
  const secret = decodeBase32IgnorePadding(totpSecret);
  const activated = await svc.post(
    "/user/mfa",
    { code: codeAt(secret), activeMfaType: "totp" },
    session.accessToken,
  );
  expect(await activated.json()).toBe("OK");
  await forgetLastStep(session.user.id);
  return { session, secret, email };
}

async function mfaTicket(email: string): Promise<string> {
  const response = await svc.post("/signin/email-password", { email, password: PASSWORD });
  const body = (await response.json()) as { session: null; mfa: { ticket: string } };
  expect(body.session).toBeNull();
  return body.mfa.ticket;
}

const verify = (ticket: string, otp: string) => svc.post("/signin/mfa/totp", { ticket, otp });

describe("TOTP set-up", () => {
  it("generate returns the base32 secret and a QR PNG of its otpauth URI; the secret is stored encrypted", async () => {
    const session = await signUp(svc);
    const { imageUrl, totpSecret } = await generate(session);
    expect(totpSecret).toMatch(/^[A-Z2-7]{32}$/);
    const png = decodePng(Uint8Array.from(atob(imageUrl.split(",")[1]!), (c) => c.charCodeAt(0)));
    const rgba = new Uint8ClampedArray(png.width * png.height * 4);
    for (let i = 0; i < png.width * png.height; i++)
      rgba.set([png.data[i]!, png.data[i]!, png.data[i]!, 255], i * 4);
    const uri = new URL(jsQR(rgba, png.width, png.height)!.data);
    expect(uri.protocol).toBe("otpauth:");
    expect(uri.host).toBe("totp");
    expect(decodeURIComponent(uri.pathname)).toBe(`/Acme:${session.user.email}`);
    expect(uri.searchParams.get("secret")).toBe(totpSecret);
    expect(uri.searchParams.get("issuer")).toBe("Acme");
    const row = await userD1(session.user.id)
      .prepare("SELECT totp_secret FROM users WHERE id = ?")
      .bind(session.user.id)
      .first<{ totp_secret: string }>();
    // AES-GCM under the HKDF subkey (src/lib/subkeys.ts), marked `v2.`.
    expect(row!.totp_secret).toMatch(/^v2\.[0-9a-f]+$/);
    expect(row!.totp_secret).not.toContain(totpSecret);
  });

  it("activates with a code of the generated secret, once", async () => {
    const session = await signUp(svc);
    await expectError(
      await svc.post("/user/mfa", { code: "123456", activeMfaType: "totp" }, session.accessToken),
      400,
      "no-totp-secret",
    );
    const secret = decodeBase32IgnorePadding((await generate(session)).totpSecret);
    const code = codeAt(secret);
    await expectError(
      await svc.post("/user/mfa", { code: wrongCode(code), activeMfaType: "totp" }, session.accessToken),
      401,
      "invalid-totp",
    );
    expect((await svc.post("/user/mfa", { code, activeMfaType: "totp" }, session.accessToken)).status).toBe(
      200,
    );
    expect(
      ((await (await svc.get("/user", session.accessToken)).json()) as WireSession["user"]).activeMfaType,
    ).toBe("totp");
    expect(await auditTypesOf(session.user.id)).toContain("mfa.enabled");
    await expectError(
      await svc.post("/user/mfa", { code, activeMfaType: "totp" }, session.accessToken),
      400,
      "totp-already-active",
    );
    // A new secret would silently replace the one in the user's app.
    await expectError(await svc.get("/mfa/totp/generate", session.accessToken), 400, "totp-already-active");
  });

  it("is 409 when MFA is off, 401 without a token, 403 for anonymous users", async () => {
    const session = await signUp(service(NO_VERIFICATION));
    await expectError(
      await service().get("/mfa/totp/generate", session.accessToken),
      409,
      "disabled-endpoint",
    );
    await expectError(await svc.get("/mfa/totp/generate"), 401, "unauthorized");
    const anonymous = (await (await svc.post("/signin/anonymous")).json()) as { session: WireSession };
    await expectError(
      await svc.get("/mfa/totp/generate", anonymous.session.accessToken),
      403,
      "forbidden-anonymous",
    );
  });
});

describe("sign-in with TOTP", () => {
  it("the password gives an mfaTotp ticket, the code gives the session, the ticket is then spent", async () => {
    const { secret, email, session } = await userWithTotp();
    const ticket = await mfaTicket(email);
    expect(ticket).toMatch(/^mfaTotp:[0-9a-f-]{36}$/);
    const code = codeAt(secret);
    await expectError(await verify(ticket, wrongCode(code)), 401, "invalid-totp");
    const response = await verify(ticket, code);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { session: WireSession };
    expect(body.session.user.id).toBe(session.user.id);
    await forgetLastStep(session.user.id);
    await expectError(await verify(ticket, codeAt(secret)), 401, "invalid-ticket");
  });

  it("a code already accepted cannot be used again (no replay within its window)", async () => {
    const { secret, email } = await userWithTotp();
    const code = codeAt(secret);
    expect((await verify(await mfaTicket(email), code)).status).toBe(200);
    await expectError(await verify(await mfaTicket(email), code), 401, "invalid-totp");
  });

  it("the same good code sent twice in parallel signs in once", async () => {
    const { secret, email } = await userWithTotp();
    const ticket = await mfaTicket(email);
    const code = codeAt(secret);
    const answers = await Promise.all([verify(ticket, code), verify(ticket, code)]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 401]);
  });

  // Four argon2id hashes and 20 guesses at once: ~0.5 s on a quiet machine, 1.5 s on a busy one.
  it("after 5 tries the ticket is dead, even for the right code; parallel guesses do not exceed the cap", async () => {
    const { secret, email } = await userWithTotp();
    const ticket = await mfaTicket(email);
    const code = codeAt(secret);
    for (let i = 0; i < 5; i++) await expectError(await verify(ticket, wrongCode(code)), 401, "invalid-totp");
    await expectError(await verify(ticket, code), 401, "invalid-ticket");

    // Another user: the first one's wrong codes count against them too (see "second-factor guesses per user").
    const other = await userWithTotp();
    const parallel = await mfaTicket(other.email);
    const guesses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        verify(parallel, String((Number(codeAt(other.secret)) + 1 + i) % 1_000_000).padStart(6, "0")),
      ),
    );
    expect(guesses.filter((r) => r.status === 401).length).toBe(20);
    // The ticket is in its user's shard, which its id names (src/auth/complete-sign-in.ts).
    const row = await routedD1(parallel.slice("mfaTotp:".length))
      .prepare("SELECT max(attempts) AS n FROM mfa_tickets")
      .first<{ n: number }>();
    expect(row!.n).toBe(5);
    await expectError(await verify(parallel, codeAt(other.secret)), 401, "invalid-ticket");
  }, 15_000);

  it("refuses unknown, malformed and expired tickets", async () => {
    const { secret, email } = await userWithTotp();
    await expectError(await verify(`mfaTotp:${crypto.randomUUID()}`, "123456"), 401, "invalid-ticket");
    await expectError(await verify(`passwordReset:${crypto.randomUUID()}`, "123456"), 401, "invalid-ticket");
    const ticket = await mfaTicket(email);
    await routedD1(ticket.slice("mfaTotp:".length)).prepare("UPDATE mfa_tickets SET expires_at = 1").run();
    await expectError(await verify(ticket, codeAt(secret)), 401, "invalid-ticket");
    await expectError(await svc.post("/signin/mfa/totp", { ticket }), 400, "invalid-request");
  });
});

describe("recovery codes", () => {
  async function recoveryCodes(session: WireSession, secret: Uint8Array): Promise<string[]> {
    const response = await svc.post("/mfa/recovery-codes", { code: codeAt(secret) }, session.accessToken);
    expect(response.status).toBe(200);
    await forgetLastStep(session.user.id);
    return ((await response.json()) as { recoveryCodes: string[] }).recoveryCodes;
  }

  it("ten one-time codes, stored hashed, each usable once in place of the TOTP code", async () => {
    const { session, secret, email } = await userWithTotp();
    const codes = await recoveryCodes(session, secret);
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}$/);
    const stored = await userD1(session.user.id)
      .prepare("SELECT code_hash FROM mfa_recovery_codes WHERE user_id = ?")
      .bind(session.user.id)
      .all<{ code_hash: string }>();
    expect(stored.results).toHaveLength(10);
    expect(stored.results.some((r) => codes.some((c) => r.code_hash.includes(c.replace("-", ""))))).toBe(
      false,
    );

    // Typed by a person: case and dashes do not matter.
    expect((await verify(await mfaTicket(email), codes[0]!.toUpperCase().replace("-", " "))).status).toBe(
      200,
    );
    await expectError(await verify(await mfaTicket(email), codes[0]!), 401, "invalid-totp");
    expect((await verify(await mfaTicket(email), codes[1]!)).status).toBe(200);
  });

  it("a new set replaces the old one; a current TOTP code is required", async () => {
    const { session, secret, email } = await userWithTotp();
    const first = await recoveryCodes(session, secret);
    const second = await recoveryCodes(session, secret);
    await expectError(await verify(await mfaTicket(email), first[0]!), 401, "invalid-totp");
    expect((await verify(await mfaTicket(email), second[0]!)).status).toBe(200);
    await expectError(
      await svc.post("/mfa/recovery-codes", { code: wrongCode(codeAt(secret)) }, session.accessToken),
      401,
      "invalid-totp",
    );
    // A recovery code does not mint new recovery codes: that needs the authenticator.
    await expectError(
      await svc.post("/mfa/recovery-codes", { code: second[1]! }, session.accessToken),
      401,
      "invalid-totp",
    );
    const plain = await signUp(svc);
    await expectError(
      await svc.post("/mfa/recovery-codes", { code: "123456" }, plain.accessToken),
      401,
      "disabled-mfa-totp",
    );
  });
});

describe("deactivation", () => {
  it("needs active TOTP and a valid code; then sign-in gives a session at once and the codes are gone", async () => {
    const plain = await signUp(svc);
    await expectError(
      await svc.post("/user/mfa", { code: "123456" }, plain.accessToken),
      401,
      "disabled-mfa-totp",
    );

    const { session, secret, email } = await userWithTotp();
    const codes = (await (
      await svc.post("/mfa/recovery-codes", { code: codeAt(secret) }, session.accessToken)
    ).json()) as {
      recoveryCodes: string[];
    };
    await forgetLastStep(session.user.id);
    const code = codeAt(secret);
    await expectError(
      await svc.post("/user/mfa", { code: wrongCode(code), activeMfaType: "" }, session.accessToken),
      401,
      "invalid-totp",
    );
    expect((await svc.post("/user/mfa", { code, activeMfaType: "" }, session.accessToken)).status).toBe(200);
    const signIn = (await (
      await svc.post("/signin/email-password", { email, password: PASSWORD })
    ).json()) as {
      session: WireSession | null;
      mfa: null;
    };
    expect(signIn.session).not.toBeNull();
    expect(signIn.mfa).toBeNull();
    const left = await userD1(session.user.id)
      .prepare("SELECT count(*) AS n FROM mfa_recovery_codes WHERE user_id = ?")
      .bind(session.user.id)
      .first<{ n: number }>();
    expect(left!.n).toBe(0);
    expect(codes.recoveryCodes).toHaveLength(10);
  });

  it("deactivation still works after AUTH_MFA_ENABLED is switched off, and sign-in keeps asking until then", async () => {
    const { session, secret, email } = await userWithTotp();
    const off = service({ ...NO_VERIFICATION });
    const signIn = (await (
      await off.post("/signin/email-password", { email, password: PASSWORD })
    ).json()) as {
      mfa: { ticket: string } | null;
    };
    expect(signIn.mfa?.ticket).toMatch(/^mfaTotp:/);
    await expectError(await off.get("/mfa/totp/generate", session.accessToken), 409, "disabled-endpoint");
    expect((await off.post("/user/mfa", { code: codeAt(secret) }, session.accessToken)).status).toBe(200);
  });

  it("a recovery code also deactivates, for a user who lost the authenticator", async () => {
    const { session, secret } = await userWithTotp();
    const { recoveryCodes } = (await (
      await svc.post("/mfa/recovery-codes", { code: codeAt(secret) }, session.accessToken)
    ).json()) as { recoveryCodes: string[] };
    expect((await svc.post("/user/mfa", { code: recoveryCodes[0]! }, session.accessToken)).status).toBe(200);
  });
});

describe("second-factor guesses per user", () => {
  // Threat: someone with the password opens fresh tickets all day; per-ticket caps alone allowed ~14,400 guesses.
  // Two sign-ups and seven sign-ins, each an argon2id hash: ~0.8 s on a quiet machine, 1.6 s on a busy one.
  it("past 5 wrong codes the user's next guess waits, whichever ticket or endpoint it comes through", async () => {
    const { session, secret, email } = await userWithTotp();
    for (let i = 0; i < 5; i++) {
      const ticket = await mfaTicket(email);
      await expectError(await verify(ticket, wrongCode(codeAt(secret))), 401, "invalid-totp");
    }
    const fresh = await mfaTicket(email);
    const locked = await verify(fresh, codeAt(secret));
    await expectError(locked.clone(), 429, "too-many-requests");
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    // The account page's code checks share the count.
    const deactivate = await svc.post("/user/mfa", { code: codeAt(secret) }, session.accessToken);
    await expectError(deactivate, 429, "too-many-requests");
    // Another user is not affected.
    const other = await userWithTotp();
    expect((await verify(await mfaTicket(other.email), codeAt(other.secret))).status).toBe(200);
  }, 15_000);

  // A sign-up and ten sign-ins for tickets, each an argon2id hash: ~0.9 s on a quiet machine, 1.8 s on a busy one.
  it("a right code forgives the wrong ones before it", async () => {
    const { secret, email, session } = await userWithTotp();
    for (let i = 0; i < 4; i++) {
      await expectError(await verify(await mfaTicket(email), wrongCode(codeAt(secret))), 401, "invalid-totp");
    }
    expect((await verify(await mfaTicket(email), codeAt(secret))).status).toBe(200);
    await forgetLastStep(session.user.id);
    for (let i = 0; i < 4; i++) {
      await expectError(await verify(await mfaTicket(email), wrongCode(codeAt(secret))), 401, "invalid-totp");
    }
    expect((await verify(await mfaTicket(email), codeAt(secret))).status).toBe(200);
  }, 15_000);
});

describe("one factor by mail does not skip TOTP", () => {
  /**
   * A user with TOTP whose address was proven (as with verification on): the first proof of a never-proven address
   * wipes what was set up before it, TOTP included (account-takeover.test.ts).
   */
  async function provenUserWithTotp() {
    const user = await userWithTotp();
    await userD1(user.session.user.id)
      .prepare("UPDATE users SET email_verified = 1 WHERE id = ?")
      .bind(user.session.user.id)
      .run();
    return user;
  }

  const mailing = service({
    ...NO_VERIFICATION,
    AUTH_MFA_ENABLED: "true",
    AUTH_EMAIL_PASSWORDLESS_ENABLED: "true",
    AUTH_OTP_EMAIL_ENABLED: "true",
  });

  it("a magic link for a TOTP user redirects with an mfaTicket, not a refresh token", async () => {
    const { secret, email } = await provenUserWithTotp();
    await mailing.post("/signin/passwordless/email", { email });
    const [mail] = await mailbox(mailing, email);
    const params = await follow(mailing, verifyPath(mail!));
    expect(params.get("refreshToken")).toBeNull();
    const ticket = params.get("mfaTicket")!;
    expect(ticket).toMatch(/^mfaTotp:/);
    const signedIn = (await (await verify(ticket, codeAt(secret))).json()) as { session: WireSession };
    expect(signedIn.session.user.email).toBe(email);
  });

  it("an email code for a TOTP user answers {session: null, mfa}", async () => {
    const { email } = await provenUserWithTotp();
    await mailing.post("/signin/otp/email", { email });
    const [mail] = await mailbox(mailing, email);
    const otp = /\b(\d{6})\b/.exec(mail!.text)![1]!;
    const body = (await (await mailing.post("/signin/otp/email/verify", { email, otp })).json()) as {
      session: null;
      mfa: { ticket: string };
    };
    expect(body.session).toBeNull();
    expect(body.mfa.ticket).toMatch(/^mfaTotp:/);
  });

  it("a password-reset link and a PKCE link's code exchange ask for TOTP too", async () => {
    const { email } = await provenUserWithTotp();
    await mailing.post("/user/password/reset", { email });
    const reset = (await mailbox(mailing, email)).find((m) => m.subject === "Reset your password")!;
    expect((await follow(mailing, verifyPath(reset))).get("mfaTicket")).toMatch(/^mfaTotp:/);

    const verifier = "v".repeat(43);
    const challenge = btoa(
      String.fromCharCode(
        ...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))),
      ),
    )
      .replace(/\+/g, "-")
      .replace(/\//g, "_")
      .replace(/=+$/, "");
    await mailing.post("/signin/passwordless/email", { email, codeChallenge: challenge });
    const [link] = await mailbox(mailing, email);
    const code = (await follow(mailing, verifyPath(link!))).get("code")!;
    const exchanged = (await (
      await mailing.post("/token/exchange", { code, codeVerifier: verifier })
    ).json()) as {
      session: null;
      mfa: { ticket: string };
    };
    expect(exchanged).toEqual({ session: null, mfa: { ticket: expect.stringMatching(/^mfaTotp:/) } });
  });
});

describe("values sealed before subkeys", () => {
  it("a TOTP secret and recovery codes written under the master key still work", async () => {
    const { session, secret, email } = await userWithTotp();
    // As the previous release stored them: AES-GCM and HMAC under AUTH_ENCRYPTION_KEY itself.
    const master = await crypto.subtle.importKey(
      "raw",
      Uint8Array.from(String(env.AUTH_ENCRYPTION_KEY).match(/../g)!, (h) => Number.parseInt(h, 16)),
      "AES-GCM",
      false,
      ["encrypt"],
    );
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const text = new TextEncoder().encode(encodeBase32UpperCaseNoPadding(secret));
    const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv }, master, text));
    const hex = (bytes: Uint8Array) => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
    await userD1(session.user.id)
      .prepare("UPDATE users SET totp_secret = ? WHERE id = ?")
      .bind(hex(iv) + hex(sealed), session.user.id)
      .run();
    const hmac = await crypto.subtle.importKey(
      "raw",
      Uint8Array.from(String(env.AUTH_ENCRYPTION_KEY).match(/../g)!, (h) => Number.parseInt(h, 16)),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    const legacyCode = "abcde-fghjk";
    const legacyHash = hex(
      new Uint8Array(
        await crypto.subtle.sign(
          "HMAC",
          hmac,
          new TextEncoder().encode(`mfa-recovery:${session.user.id}\nabcdefghjk`),
        ),
      ),
    );
    await userD1(session.user.id)
      .prepare("INSERT INTO mfa_recovery_codes (code_hash, user_id) VALUES (?, ?)")
      .bind(legacyHash, session.user.id)
      .run();
    expect((await verify(await mfaTicket(email), codeAt(secret))).status).toBe(200);
    expect((await verify(await mfaTicket(email), legacyCode)).status).toBe(200);
  });
});

describe("POST /signin/mfa/totp with D1 failing once at each statement", () => {
  // Threat: a fault after the ticket was spent (the session's batch, its family) answered 503 with the ticket gone:
  // the retry the 503 asks for answered invalid-ticket, and the person had to start again from their password.
  it("a session, or a 503 after which the same ticket (with the next code) signs in", async () => {
    const { session, secret, email } = await userWithTotp();
    const settings = { ...NO_VERIFICATION, AUTH_MFA_ENABLED: "true", AUTH_MFA_TOTP_ISSUER: "Acme" };
    const step = (through: ReturnType<typeof service>, ticket: string) =>
      through.post("/signin/mfa/totp", { ticket, otp: codeAt(secret) });
    let faults = 0;
    await eachStatementFailingOnce(
      env,
      async (bindings) => {
        expect((await step(service({ ...settings, ...bindings }), await mfaTicket(email))).status).toBe(200);
        await forgetLastStep(session.user.id);
      },
      async (bindings, context) => {
        const failing = service({ ...settings, ...bindings });
        const ticket = await mfaTicket(email);
        const answer = await step(failing, ticket);
        // The factor's next code (a code once accepted stays spent), stood in for by forgetting the step accepted.
        await forgetLastStep(session.user.id);
        if (answer.status === 200) return;
        expect(answer.status, `${context}: ${await answer.text()}`).toBe(503);
        faults++;
        const retry = await step(failing, ticket);
        expect(retry.status, `${context}: ${await retry.clone().text()}`).toBe(200);
        await forgetLastStep(session.user.id);
        await expectError(await verify(ticket, codeAt(secret)), 401, "invalid-ticket");
      },
    );
    expect(faults).toBeGreaterThan(1);
  }, 90_000);
});
