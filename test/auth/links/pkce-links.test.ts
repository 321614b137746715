// The PKCE variant of the mailed links (client.md §15): `codeChallenge` in the request, `code` in the redirect,
// `POST /token/exchange {code, codeVerifier}` → {session}.
import { env } from "cloudflare:test";
import { base64url } from "jose";
import { describe, expect, it } from "vitest";
import { getConfig } from "../../../src/runtime/config";
import { runHousekeeping } from "../../../src/runtime/cron";
import {
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
import { allInShards, routedD1 } from "../../support/shards";

const svc = service({ AUTH_EMAIL_PASSWORDLESS_ENABLED: "true" });

async function pkcePair(): Promise<{ codeVerifier: string; codeChallenge: string }> {
  const codeVerifier = base64url.encode(crypto.getRandomValues(new Uint8Array(32)));
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(codeVerifier));
  return { codeVerifier, codeChallenge: base64url.encode(new Uint8Array(digest)) };
}

/** Follows the newest mailed link and returns the redirect's query. */
async function followMail(email: string): Promise<URLSearchParams> {
  const [mail] = await mailbox(svc, email);
  return follow(svc, verifyPath(mail!));
}

const exchange = (code: string, codeVerifier: string) => svc.post("/token/exchange", { code, codeVerifier });

describe("PKCE email links", () => {
  it("a magic link requested with a challenge redirects with a code, never a refresh token", async () => {
    const email = uniqueEmail("pkce");
    const { codeVerifier, codeChallenge } = await pkcePair();
    await svc.post("/signin/passwordless/email", { email, codeChallenge });
    const query = await followMail(email);
    expect(query.get("refreshToken")).toBeNull();
    expect(query.get("type")).toBe("signinPasswordless");
    const code = query.get("code")!;
    expect(code).toMatch(/^[0-9a-f-]{36}$/);

    const response = await exchange(code, codeVerifier);
    expect(response.status).toBe(200);
    const { session } = (await response.json()) as { session: WireSession };
    expect(session.user).toMatchObject({ email, emailVerified: true });
    expect((await svc.post("/token", { refreshToken: session.refreshToken })).status).toBe(200);
    // Single use.
    await expectError(await exchange(code, codeVerifier), 400, "invalid-request");
  });

  it("a wrong verifier is refused and burns the code", async () => {
    const email = uniqueEmail("pkce-wrong");
    const { codeVerifier, codeChallenge } = await pkcePair();
    await svc.post("/signin/passwordless/email", { email, codeChallenge });
    const code = (await followMail(email)).get("code")!;
    const other = await pkcePair();
    await expectError(await exchange(code, other.codeVerifier), 400, "invalid-request");
    await expectError(await exchange(code, codeVerifier), 400, "invalid-request");
  });

  it("every link-mailing operation carries the challenge: verification, reset, email change", async () => {
    const plain = service(NO_VERIFICATION);
    const { codeVerifier, codeChallenge } = await pkcePair();

    const unverified = uniqueEmail("pkce-verify");
    await svc.post("/signup/email-password", { email: unverified, password: PASSWORD, codeChallenge });
    const verified = await followMail(unverified);
    expect(verified.get("type")).toBe("emailVerify");
    expect((await exchange(verified.get("code")!, codeVerifier)).status).toBe(200);

    const resetter = uniqueEmail("pkce-reset");
    await signUp(plain, resetter);
    await svc.post("/user/password/reset", { email: resetter, codeChallenge });
    const reset = await followMail(resetter);
    expect(reset.get("type")).toBe("passwordReset");
    expect((await exchange(reset.get("code")!, codeVerifier)).status).toBe(200);

    const changer = await signUp(plain);
    const newEmail = uniqueEmail("pkce-new");
    await svc.post("/user/email/change", { newEmail, codeChallenge }, changer.accessToken);
    const changed = await followMail(newEmail);
    const { session } = (await (await exchange(changed.get("code")!, codeVerifier)).json()) as {
      session: WireSession;
    };
    expect(session.user.email).toBe(newEmail);
  });

  it("expired codes are refused and removed by housekeeping", async () => {
    const email = uniqueEmail("pkce-expired");
    const { codeVerifier, codeChallenge } = await pkcePair();
    await svc.post("/signin/passwordless/email", { email, codeChallenge });
    const code = (await followMail(email)).get("code")!;
    // The code carries its user's slot (src/auth/links/exchange-codes.ts): its row is in that shard.
    await routedD1(code).prepare("UPDATE authorization_codes SET expires_at = 1").run();
    await expectError(await exchange(code, codeVerifier), 400, "invalid-request");
    // Every shard's codes expired too (a file run before this one in the same workerd may have left live ones), so
    // that "none left" proves housekeeping visits every shard, whatever ran before.
    await allInShards("UPDATE authorization_codes SET expires_at = 1");
    await runHousekeeping(svc.env, getConfig(svc.env));
    const left = await allInShards<{ n: number }>("SELECT count(*) AS n FROM authorization_codes");
    expect(left.map((row) => row.n)).toEqual(left.map(() => 0));
  });

  it("refuses malformed challenges and verifiers, and unknown codes", async () => {
    await expectError(
      await svc.post("/signin/passwordless/email", { email: uniqueEmail(), codeChallenge: "short" }),
      400,
      "invalid-request",
    );
    await expectError(await exchange(crypto.randomUUID(), "x".repeat(42)), 400, "invalid-request");
    await expectError(await exchange(crypto.randomUUID(), "x".repeat(43)), 400, "invalid-request");
    await expectError(await svc.post("/token/exchange", {}), 400, "invalid-request");
  });
});

describe("POST /token/exchange with D1 failing once at each of its statements", () => {
  const newCode = async () => {
    const email = uniqueEmail("pkce-fault");
    const { codeVerifier, codeChallenge } = await pkcePair();
    await svc.post("/signin/passwordless/email", { email, codeChallenge });
    return { email, code: (await followMail(email)).get("code")!, codeVerifier };
  };
  const settings = { AUTH_EMAIL_PASSWORDLESS_ENABLED: "true" };

  // Threat: a fault after the code was taken (the user's read, the session's batch) answered 503 with the code gone:
  // the client's retry, which the 503 asks for, was refused, and the magic link the user clicked was lost.
  it("each step: a 503 whose retry with the same code and verifier signs in, or a 200; never a code spent for nothing", async () => {
    let retried = 0;
    await eachStatementFailingOnce(
      env,
      async (bindings) =>
        expect(
          (await service({ ...settings, ...bindings }).post("/token/exchange", await newCode())).status,
        ).toBe(200),
      async (bindings, context) => {
        const failing = service({ ...settings, ...bindings });
        const { email, code, codeVerifier } = await newCode();
        const answer = await failing.post("/token/exchange", { code, codeVerifier });
        if (answer.status !== 200) {
          expect(answer.status, `${context}: ${await answer.text()}`).toBe(503);
          retried++;
          const retry = await failing.post("/token/exchange", { code, codeVerifier });
          expect(retry.status, `${context}: ${await retry.clone().text()}`).toBe(200);
          const { session } = (await retry.json()) as { session: WireSession };
          expect(session.user.email, context).toBe(email);
        }
        // Spent now, by the one exchange that answered 200.
        await expectError(await svc.post("/token/exchange", { code, codeVerifier }), 400, "invalid-request");
      },
    );
    expect(retried).toBeGreaterThan(1);
  }, 60_000);

  // Threat: D1 ran the code's take (one DELETE … RETURNING) but its answer was lost: the 503 could not put back a row
  // it never saw, so the retry the 503 asks for was refused (`invalid-request`) and the person had to sign in again.
  // Each statement of the exchange runs, then its answer is lost; the code's own take among them.
  it("each step run and its answer lost: a 503 whose retry with the same code and verifier signs in, once", async () => {
    let retried = 0;
    const steps = await eachStatementFailingOnce(
      env,
      async (bindings) => {
        const first = await service({ ...settings, ...bindings }).post("/token/exchange", await newCode());
        expect(first.status).toBe(200);
      },
      async (bindings, context) => {
        const failing = service({ ...settings, ...bindings });
        const { email, code, codeVerifier } = await newCode();
        let answer = await failing.post("/token/exchange", { code, codeVerifier });
        if (answer.status !== 200) {
          expect(answer.status, `${context}: ${await answer.text()}`).toBe(503);
          retried++;
          answer = await failing.post("/token/exchange", { code, codeVerifier });
          expect(answer.status, `${context}: ${await answer.clone().text()}`).toBe(200);
        }
        const { session } = (await answer.json()) as { session: WireSession };
        expect(session.user.email, context).toBe(email);
        // Spent now, by the one exchange that answered 200, and no row of it left (claimed or not).
        await expectError(await svc.post("/token/exchange", { code, codeVerifier }), 400, "invalid-request");
        expect(await codesOf(code, session.user.id), context).toBe(0);
      },
      { when: "after" },
    );
    expect(
      steps.filter((sql) => /^(update|delete from) "authorization_codes"/.test(sql)).length,
    ).toBeGreaterThan(0);
    expect(retried).toBeGreaterThan(1);
  }, 60_000);

  // Threat: the take is what keeps a code single use; two redemptions at once must not both sign in.
  it("two redemptions of one code at once: one signs in, the other is refused", async () => {
    const { code, codeVerifier } = await newCode();
    const answers = await Promise.all([0, 1].map(() => exchange(code, codeVerifier)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 400]);
  });
});

/** The rows of a user's exchange codes in the code's shard, under any key (a redemption's claim included). */
async function codesOf(code: string, userId: string): Promise<number> {
  const row = await routedD1(code)
    .prepare("SELECT count(*) AS n FROM authorization_codes WHERE user_id = ?")
    .bind(userId)
    .first<{ n: number }>();
  return row!.n;
}

describe("sign-up variants of the passwordless flows", () => {
  const both = service({ AUTH_EMAIL_PASSWORDLESS_ENABLED: "true", AUTH_OTP_EMAIL_ENABLED: "true" });

  it("POST /signup/passwordless/email creates the user and mails a magic link; an existing address is 409", async () => {
    const email = uniqueEmail("signup-magic");
    expect(
      await (
        await both.post("/signup/passwordless/email", { email, options: { displayName: "New One" } })
      ).json(),
    ).toBe("OK");
    const [mail] = await mailbox(both, email);
    expect(mail!.subject).toBe("Your sign-in link");
    const query = await follow(both, verifyPath(mail!));
    expect(query.get("refreshToken")).toBeTruthy();
    await expectError(await both.post("/signup/passwordless/email", { email }), 409, "email-already-in-use");
  });

  it("POST /signup/otp/email creates the user and mails a code; an existing address is 409", async () => {
    const email = uniqueEmail("signup-otp");
    expect(await (await both.post("/signup/otp/email", { email })).json()).toBe("OK");
    const code = /\b(\d{6})\b/.exec((await mailbox(both, email))[0]!.text)![1]!;
    expect((await both.post("/signin/otp/email/verify", { email, otp: code })).status).toBe(200);
    await expectError(await both.post("/signup/otp/email", { email }), 409, "email-already-in-use");
  });

  it("are switched off with their sign-in flows", async () => {
    const off = service();
    await expectError(
      await off.post("/signup/passwordless/email", { email: uniqueEmail() }),
      409,
      "disabled-endpoint",
    );
    await expectError(
      await off.post("/signup/otp/email", { email: uniqueEmail() }),
      409,
      "disabled-endpoint",
    );
  });
});
