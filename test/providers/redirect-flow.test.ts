// Sign-in with external providers through the redirect flow (contract §7), against the fake GitHub-like and
// Google-like providers of test/fakes/outbound.js. Threats covered: account takeover through an unverified provider
// email, account pre-hijacking through a verified one, forged, replayed and expired state, a stolen code without its
// PKCE verifier, an ID token for another login attempt (nonce), and providers that fail or answer garbage.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { signUpOptionsSchema } from "../../src/auth/sign-up-options";
import {
  auditTypesOf,
  decodeJwt,
  expectError,
  follow,
  mailbox,
  PASSWORD,
  sessionFromRefresh,
  signUp,
  uniqueEmail,
  verifyPath,
} from "../helpers";
import { failingShards, platformErrors, wrapD1 } from "../support/faults";
import { allInShards, userD1 } from "../support/shards";
import { withShortTimeouts } from "../support/timeouts";
import {
  APP,
  CALLBACK,
  location,
  openIn,
  receivedByProvider,
  signInWith,
  startAt,
  withProviders,
} from "./support";

const svc = withProviders();
const uniqueId = () => String(Math.floor(Math.random() * 1e12));

describe("the redirect to the provider", () => {
  it("sends the browser to GitHub with the client id, callback, scopes, state and a PKCE challenge", async () => {
    const start = await svc.get(`/signin/provider/github?redirectTo=${encodeURIComponent(APP)}`);
    const url = location(start);
    expect(`${url.origin}${url.pathname}`).toBe("https://github.fake/login/oauth/authorize");
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_id: "gh-client",
      redirect_uri: CALLBACK("github"),
      response_type: "code",
      scope: "read:user user:email",
      state: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      code_challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      code_challenge_method: "S256",
    });
  });

  it("adds an OIDC nonce for Google", async () => {
    const url = location(await svc.get(`/signin/provider/google?redirectTo=${encodeURIComponent(APP)}`));
    expect(url.searchParams.get("scope")).toBe("openid email profile");
    expect(url.searchParams.get("nonce")).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it("refuses a redirectTo off the allow-list with JSON, and sends a disabled or unknown provider back with an error", async () => {
    await expectError(
      await svc.get("/signin/provider/github?redirectTo=https://evil.example.com"),
      400,
      "redirectTo-not-allowed",
    );
    for (const provider of ["discord", "myspace"]) {
      const back = location(
        await svc.get(`/signin/provider/${provider}?redirectTo=${encodeURIComponent(APP)}`),
      );
      expect(`${back.origin}${back.pathname}`).toBe(APP);
      expect(back.searchParams.get("error")).toBe("disabled-endpoint");
    }
    const badOptions = location(
      await svc.get(`/signin/provider/github?redirectTo=${encodeURIComponent(APP)}&defaultRole=admin`),
    );
    expect(badOptions.searchParams.get("error")).toBe("default-role-must-be-in-allowed-roles");
  });
});

describe("signing in", () => {
  it("signs a new GitHub user up with the options, hands back the app's state, and the same user next time", async () => {
    const email = uniqueEmail("gh");
    const id = uniqueId();
    const { back, callback } = await signInWith(
      svc,
      "github",
      { state: "app-state-1", locale: "en", metadata: JSON.stringify({ plan: "pro" }) },
      { fake_id: id, fake_email: email },
    );
    expect(`${back.origin}${back.pathname}`).toBe(APP);
    expect(back.searchParams.get("state")).toBe("app-state-1");
    const session = await sessionFromRefresh(svc, back.searchParams.get("refreshToken")!);
    expect(session.user).toMatchObject({
      email,
      emailVerified: true,
      displayName: "Octo Cat",
      avatarUrl: "https://github.fake/octocat.png",
      metadata: { plan: "pro" },
    });
    // The provider got this service's secret and the PKCE verifier of this sign-in.
    const received = await receivedByProvider("github.fake", callback.searchParams.get("code")!);
    expect(received).toMatchObject({
      client_id: "gh-client",
      client_secret: "gh-secret",
      code_verifier: expect.any(String),
    });

    const again = await signInWith(svc, "github", {}, { fake_id: id, fake_email: email });
    const second = await sessionFromRefresh(svc, again.back.searchParams.get("refreshToken")!);
    expect(second.user.id).toBe(session.user.id);
  });

  it("signs in with Google (OIDC): ID token checked, profile and email verification from it", async () => {
    const email = uniqueEmail("google");
    const { back } = await signInWith(
      svc,
      "google",
      {},
      { fake_id: `g-${uniqueId()}`, fake_email: email, fake_name: "Ada L" },
    );
    const session = await sessionFromRefresh(svc, back.searchParams.get("refreshToken")!);
    expect(session.user).toMatchObject({
      email,
      emailVerified: true,
      displayName: "Ada L",
      avatarUrl: "https://oidc.fake/avatar.png",
    });
  });

  it("refuses an ID token minted for another sign-in (nonce mismatch)", async () => {
    const { back } = await signInWith(
      svc,
      "google",
      {},
      { fake_id: uniqueId(), fake_email: uniqueEmail(), fake_nonce: "someone-elses" },
    );
    expect(back.searchParams.get("error")).toBe("oauth-token-echange-failed");
  });
});

describe("finding the account by email", () => {
  it("links a verified provider email to the existing account, wiping what a stranger set up on an unproven one", async () => {
    const email = uniqueEmail("prehijack");
    // An attacker signed the victim's address up with a password of their own; the address was never proven.
    const attacker = await signUp(svc, email);
    const { back } = await signInWith(svc, "github", {}, { fake_id: uniqueId(), fake_email: email });
    const victim = await sessionFromRefresh(svc, back.searchParams.get("refreshToken")!);
    expect(victim.user.id).toBe(attacker.user.id);
    expect(victim.user.emailVerified).toBe(true);
    await expectError(
      await svc.post("/signin/email-password", { email, password: PASSWORD }),
      401,
      "invalid-email-password",
    );
    await expectError(
      await svc.post("/token", { refreshToken: attacker.refreshToken }),
      401,
      "invalid-refresh-token",
    );
  });

  it("never links an unverified provider email to an existing account", async () => {
    const email = uniqueEmail("takeover");
    const owner = await signUp(svc, email);
    const { back } = await signInWith(
      svc,
      "github",
      {},
      { fake_id: uniqueId(), fake_email: email, fake_verified: "false" },
    );
    expect(back.searchParams.get("error")).toBe("email-already-in-use");
    expect(back.searchParams.has("refreshToken")).toBe(false);
    // The owner's account is untouched.
    expect((await svc.post("/signin/email-password", { email, password: PASSWORD })).status).toBe(200);
    expect(owner.user.email).toBe(email);
  });

  it("never finds an account by an address that only lower-cases to its own (the Kelvin sign)", async () => {
    // Threat: `toLowerCase` maps U+212A KELVIN SIGN to `k`. A provider account registered (and verified there) as
    // `\u212Aate-…@example.com` would have found the account of `kate-…@example.com` and been proven into it.
    const email = uniqueEmail("kate");
    const owner = await signUp(svc, email);
    const lookalike = `\u212A${email.slice(1)}`;
    const { back } = await signInWith(svc, "github", {}, { fake_id: uniqueId(), fake_email: lookalike });
    const session = await sessionFromRefresh(svc, back.searchParams.get("refreshToken")!);
    expect(session.user.id).not.toBe(owner.user.id);
    expect(session.user.email ?? null).toBeNull();
    // The owner's password still signs in: nothing was proven or wiped.
    expect((await svc.post("/signin/email-password", { email, password: PASSWORD })).status).toBe(200);
  });

  it("signs a new user up with an unverified provider email, marked unverified", async () => {
    const email = uniqueEmail("unverified");
    const { back } = await signInWith(
      svc,
      "github",
      {},
      { fake_id: uniqueId(), fake_email: email, fake_verified: "false" },
    );
    const session = await sessionFromRefresh(svc, back.searchParams.get("refreshToken")!);
    expect(session.user).toMatchObject({ email, emailVerified: false });
  });

  // Threat: pre-hijacking through a provider that does not verify the address it reports. The attacker's identity
  // made the account on the victim's address; the victim's first proof (a verified provider here) wiped the password,
  // keys and sessions but kept the identity, so the attacker's next GitHub sign-in landed in the proven account.
  it("an identity linked before the address was proven goes with the owner's first proof", async () => {
    const email = uniqueEmail("identity-prehijack");
    const planted = uniqueId();
    const first = await signInWith(
      svc,
      "github",
      {},
      { fake_id: planted, fake_email: email, fake_verified: "false" },
    );
    const attacker = await sessionFromRefresh(svc, first.back.searchParams.get("refreshToken")!);
    expect(attacker.user).toMatchObject({ email, emailVerified: false });

    const owner = await signInWith(svc, "google", {}, { fake_id: `g-${uniqueId()}`, fake_email: email });
    const victim = await sessionFromRefresh(svc, owner.back.searchParams.get("refreshToken")!);
    expect(victim.user).toMatchObject({ id: attacker.user.id, emailVerified: true });
    const identities = await userD1(victim.user.id)
      .prepare("SELECT provider FROM user_providers WHERE user_id = ?")
      .bind(victim.user.id)
      .all<{ provider: string }>();
    expect(identities.results.map((row) => row.provider)).toEqual(["google"]);

    // The planted identity is nobody's now: its sign-in meets an address another account holds, unproven by GitHub.
    const again = await signInWith(
      svc,
      "github",
      {},
      { fake_id: planted, fake_email: email, fake_verified: "false" },
    );
    expect(again.back.searchParams.get("error")).toBe("email-already-in-use");
    expect(again.back.searchParams.has("refreshToken")).toBe(false);
  });

  // Threat: the residue of the owner's own verification click. The attacker signs the victim's address up and links
  // their GitHub identity; the victim follows the sign-up verification mail (which keeps what a genuine sign-up set
  // up) and later resets the password to take the account back: the identity must go with the password.
  it("an identity linked before the first proof goes with the owner's password reset", async () => {
    const email = uniqueEmail("identity-residue");
    const attacker = await signUp(svc, email);
    const planted = uniqueId();
    const linked = await signInWith(
      svc,
      "github",
      { connect: attacker.accessToken },
      { fake_id: planted, fake_email: uniqueEmail("attacker-github") },
    );
    expect(linked.back.searchParams.has("error")).toBe(false);
    // Anyone may ask for the verification mail; the owner follows it.
    expect(await (await svc.post("/user/email/send-verification-email", { email })).json()).toBe("OK");
    const verification = (await mailbox(svc, email)).find((mail) => mail.text.includes("emailVerify"))!;
    await follow(svc, verifyPath(verification));
    const before = await signInWith(svc, "github", {}, { fake_id: planted });
    expect(before.back.searchParams.has("refreshToken")).toBe(true);

    expect(await (await svc.post("/user/password/reset", { email })).json()).toBe("OK");
    const reset = (await mailbox(svc, email)).find((mail) => mail.text.includes("passwordReset"))!;
    await follow(svc, verifyPath(reset));
    const after = await signInWith(
      svc,
      "github",
      {},
      { fake_id: planted, fake_email: email, fake_verified: "false" },
    );
    expect(after.back.searchParams.get("error")).toBe("email-already-in-use");
  });

  it("follows AUTH_DISABLE_SIGNUP and disabled users", async () => {
    const closed = withProviders({ AUTH_DISABLE_SIGNUP: "true" });
    const { back } = await signInWith(
      closed,
      "github",
      {},
      { fake_id: uniqueId(), fake_email: uniqueEmail() },
    );
    expect(back.searchParams.get("error")).toBe("signup-disabled");

    const id = uniqueId();
    const first = await signInWith(svc, "github", {}, { fake_id: id, fake_email: uniqueEmail() });
    const session = await sessionFromRefresh(svc, first.back.searchParams.get("refreshToken")!);
    await userD1(session.user.id)
      .prepare("UPDATE users SET disabled = 1 WHERE id = ?")
      .bind(session.user.id)
      .run();
    const again = await signInWith(svc, "github", {}, { fake_id: id });
    expect(again.back.searchParams.get("error")).toBe("disabled-user");
  });
});

describe("connect: linking an identity to the signed-in user", () => {
  it("links without a new session; an identity of another user is provider-account-already-linked", async () => {
    const user = await signUp(svc);
    const id = uniqueId();
    const { back } = await signInWith(
      svc,
      "github",
      { connect: user.accessToken, state: "s" },
      { fake_id: id, fake_email: uniqueEmail() },
    );
    expect(back.searchParams.has("refreshToken")).toBe(false);
    expect(back.searchParams.has("error")).toBe(false);
    expect(back.searchParams.get("state")).toBe("s");
    expect(await auditTypesOf(user.user.id)).toContain("provider.linked");
    const signedIn = await signInWith(svc, "github", {}, { fake_id: id });
    expect((await sessionFromRefresh(svc, signedIn.back.searchParams.get("refreshToken")!)).user.id).toBe(
      user.user.id,
    );

    const other = await signUp(svc);
    const taken = await signInWith(svc, "github", { connect: other.accessToken }, { fake_id: id });
    expect(taken.back.searchParams.get("error")).toBe("provider-account-already-linked");
    // A user deleted between the redirect and the callback: an error redirect, not a 500.
    const gone = await signUp(svc);
    const { atProvider: start, cookie } = await startAt(svc, "github", { connect: gone.accessToken });
    await userD1(gone.user.id).prepare("DELETE FROM users WHERE id = ?").bind(gone.user.id).run();
    start.searchParams.set("fake_id", uniqueId());
    const callback = location(await svc.env.OUTBOUND!.fetch(start.toString(), { redirect: "manual" }));
    expect(location(await openIn(svc, callback, cookie)).searchParams.get("error")).toBe("unauthorized");
    const badToken = location(
      await svc.get(`/signin/provider/github?redirectTo=${encodeURIComponent(APP)}&connect=garbage`),
    );
    expect(badToken.searchParams.get("error")).toBe("unauthorized");
  });
});

describe("the callback's failures", () => {
  it("answers a forged, replayed or expired state with invalid-state at AUTH_CLIENT_URL, and a second use yields no session", async () => {
    const forged = location(await svc.request("GET", `${CALLBACK("github")}?state=forged&code=x`));
    expect(`${forged.origin}${forged.pathname}`).toBe("http://localhost:3000/");
    expect(forged.searchParams.get("error")).toBe("invalid-state");

    const { callback, back, cookie } = await signInWith(
      svc,
      "github",
      {},
      { fake_id: uniqueId(), fake_email: uniqueEmail() },
    );
    expect(back.searchParams.get("refreshToken")).toBeTruthy();
    const replayed = location(await openIn(svc, callback, cookie));
    expect(replayed.searchParams.get("error")).toBe("invalid-state");

    const started = await startAt(svc, "github");
    await svc.env.DB.prepare("UPDATE provider_requests SET expires_at = 0").run();
    const expired = location(
      await openIn(
        svc,
        `${CALLBACK("github")}?state=${started.atProvider.searchParams.get("state")}&code=c`,
        started.cookie,
      ),
    );
    expect(expired.searchParams.get("error")).toBe("invalid-state");
    // A state of one provider is not one of another.
    const other = await startAt(svc, "github");
    const crossed = location(
      await openIn(
        svc,
        `${CALLBACK("google")}?state=${other.atProvider.searchParams.get("state")}&code=c`,
        other.cookie,
      ),
    );
    expect(crossed.searchParams.get("error")).toBe("invalid-state");
  });

  it("turns a denial, a failed exchange, garbage and a failed profile into the contract's redirects with the app's state", async () => {
    const cases: [Record<string, string>, string][] = [
      [{ fake_deny: "1" }, "oauth-provider-error"],
      [{ fake_fail: "token" }, "oauth-token-echange-failed"],
      [{ fake_fail: "garbage" }, "oauth-token-echange-failed"],
      [{ fake_fail: "profile" }, "oauth-profile-fetch-failed"],
    ];
    for (const [person, error] of cases) {
      const { back } = await signInWith(
        svc,
        "github",
        { state: "keep-me" },
        { fake_id: uniqueId(), ...person },
      );
      expect(back.searchParams.get("error"), JSON.stringify(person)).toBe(error);
      expect(back.searchParams.get("state")).toBe("keep-me");
      expect(`${back.origin}${back.pathname}`).toBe(APP);
    }
  });

  it("gives up on a provider that does not answer, with the contract's redirect", {
    timeout: 30_000,
  }, async () => {
    let back: URL | undefined;
    // The service's own 10 s, asked for and then waited out in a tenth of it (test/support/timeouts.ts).
    const requested = await withShortTimeouts(10_000, async () => {
      ({ back } = await signInWith(svc, "github", {}, { fake_id: uniqueId(), fake_fail: "hang" }));
    });
    expect(requested).toContain(10_000);
    expect(back!.searchParams.get("error")).toBe("oauth-token-echange-failed");
  });

  it("applies the email block list to provider sign-ins", async () => {
    const blocked = withProviders({ AUTH_ACCESS_CONTROL_BLOCKED_EMAIL_DOMAINS: "blocked.example" });
    const { back } = await signInWith(
      blocked,
      "github",
      {},
      { fake_id: uniqueId(), fake_email: `x-${uniqueId()}@blocked.example` },
    );
    expect(back.searchParams.get("error")).toBe("invalid-email-password");
    expect(back.searchParams.has("refreshToken")).toBe(false);
  });

  it("cannot redeem a stolen code without the PKCE verifier kept by the service", async () => {
    const { callback } = await signInWith(
      svc,
      "github",
      {},
      { fake_id: uniqueId(), fake_email: uniqueEmail() },
    );
    const received = await receivedByProvider("github.fake", callback.searchParams.get("code")!);
    expect(received?.code_verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});

describe("the provider's tokens", () => {
  it("hands them to the app once, and refreshes them at the provider", async () => {
    const { back } = await signInWith(svc, "github", {}, { fake_id: uniqueId(), fake_email: uniqueEmail() });
    const session = await sessionFromRefresh(svc, back.searchParams.get("refreshToken")!);
    const first = await svc.get("/signin/provider/github/callback/tokens", session.accessToken);
    const tokens = (await first.json()) as {
      accessToken: string;
      refreshToken: string;
      expiresIn: number;
      expiresAt: string;
    };
    expect(tokens).toMatchObject({
      accessToken: expect.stringMatching(/^access-/),
      refreshToken: expect.stringMatching(/^refresh-/),
      expiresIn: 3600,
    });
    const second = (await (
      await svc.get("/signin/provider/github/callback/tokens", session.accessToken)
    ).json()) as { accessToken: string };
    expect(second.accessToken).toBe("");
    await expectError(await svc.get("/signin/provider/github/callback/tokens"), 401, "unauthorized");

    const refreshed = await svc.post(
      "/token/provider/github",
      { refreshToken: tokens.refreshToken },
      session.accessToken,
    );
    expect(refreshed.status).toBe(200);
    expect(await refreshed.json()).toMatchObject({
      accessToken: expect.stringMatching(/^access-/),
      expiresIn: 3600,
    });
    await expectError(
      await svc.post("/token/provider/github", { refreshToken: "nope" }, session.accessToken),
      400,
      "oauth-provider-error",
    );
    await expectError(
      await svc.post("/token/provider/discord", { refreshToken: "x" }, session.accessToken),
      409,
      "disabled-endpoint",
    );
    expect(decodeJwt(session.accessToken).payload.sub).toBe(session.user.id);
  });

  /** A signed-in user whose provider's tokens wait for their one hand-off. */
  const signedInWithTokens = async () => {
    const { back } = await signInWith(svc, "github", {}, { fake_id: uniqueId(), fake_email: uniqueEmail() });
    return sessionFromRefresh(svc, back.searchParams.get("refreshToken")!);
  };
  const tokensFor = (via: typeof svc, accessToken: string) =>
    via.get("/signin/provider/github/callback/tokens", accessToken);
  const handoffsOf = async (userId: string) =>
    (
      await env.DB.prepare("SELECT provider FROM provider_token_handoffs WHERE user_id = ?")
        .bind(userId)
        .all()
    ).results;

  // Threat: the hand-off is single use, and D1 ran its take (the row deleted) but the answer was lost, or a statement
  // failed after it: the 503 asked for a retry, which answered empty values, so the provider's tokens were lost for
  // good. Each statement of the route fails once, before it ran and after it ran (its answer lost): a 503's retry gets
  // the tokens, and once they are handed over nothing of them stays.
  for (const when of ["before", "after"] as const) {
    it(`hands them over after a 503 at any statement (${when} it ran), and then no more`, async () => {
      const watched = failingShards(env, { after: Number.POSITIVE_INFINITY });
      const seen = await signedInWithTokens();
      expect((await tokensFor(withProviders(watched.bindings), seen.accessToken)).status).toBe(200);
      const steps = [...watched.fault.seen];
      expect(steps.some((sql) => /provider_token_handoffs/.test(sql))).toBe(true);
      let faults = 0;
      for (let step = 0; step < steps.length; step++) {
        const context = `step ${step} (${when}): ${steps[step]!.slice(0, 80)}`;
        const session = await signedInWithTokens();
        const failing = withProviders(failingShards(env, { after: step, times: 1, when }).bindings);
        let answer = await tokensFor(failing, session.accessToken);
        if (answer.status !== 200) {
          expect(answer.status, `${context}: ${await answer.text()}`).toBe(503);
          faults++;
          answer = await tokensFor(failing, session.accessToken);
          expect(answer.status, context).toBe(200);
        }
        const tokens = (await answer.json()) as { accessToken: string; refreshToken: string | null };
        expect(tokens.accessToken, context).toMatch(/^access-/);
        expect(tokens.refreshToken ?? "(none)", context).toMatch(/^refresh-/);
        expect(await handoffsOf(session.user.id), context).toEqual([]);
        expect(
          ((await (await tokensFor(svc, session.accessToken)).json()) as { accessToken: string }).accessToken,
          context,
        ).toBe("");
      }
      expect(faults).toBeGreaterThan(0);
    }, 60_000);
  }

  // Threat: two of several calls at once both get the tokens (the take must stay one atomic claim, whatever it can put back).
  it("hands them to one of three calls at once", async () => {
    const session = await signedInWithTokens();
    const answers = await Promise.all([1, 2, 3].map(() => tokensFor(svc, session.accessToken)));
    const accessTokens = await Promise.all(
      answers.map(async (answer) => ((await answer.json()) as { accessToken: string }).accessToken),
    );
    expect(accessTokens.filter((token) => token.startsWith("access-"))).toHaveLength(1);
    expect(accessTokens.filter((token) => token === "")).toHaveLength(2);
    expect(await handoffsOf(session.user.id)).toEqual([]);
  });

  /** Every shard's D1 with `hook` run once just before the first statement matching `match`, which then runs and loses its answer. */
  const interleaved = (match: RegExp, hook: () => Promise<unknown>) => {
    let pending = true;
    const gate = async <T>(sql: string, work: () => Promise<T>): Promise<T> => {
      if (!pending || !match.test(sql)) return work();
      pending = false;
      await hook();
      await work();
      throw platformErrors.d1();
    };
    const names = String(env.AUTH_D1_SHARDS ?? "DB").split(",");
    const shards = env as unknown as Record<string, D1Database>;
    return Object.fromEntries(names.map((name) => [name, wrapD1(shards[name]!, gate)]));
  };

  // Threat: the put-back of a take whose answer was lost restores tokens another call was handed meanwhile, so they
  // are handed over twice. Another call runs just before this take's first statement (its claim: the other call takes
  // the tokens, the claim meets nothing), then just before this take's delete (the claim holds them; the other call
  // gets empty values): either way the tokens are handed over exactly once, and none stay.
  for (const [step, match] of [
    ["first statement", /"provider_token_handoffs"/],
    ["delete", /^delete from "provider_token_handoffs"/],
  ] as const) {
    it(`hands them over once when another call comes before the ${step} of a take whose answer is lost`, async () => {
      const session = await signedInWithTokens();
      let other: Response | undefined;
      const failing = withProviders(
        interleaved(match, async () => {
          other = await tokensFor(svc, session.accessToken);
        }),
      );
      const lost = await tokensFor(failing, session.accessToken);
      expect(lost.status, await lost.clone().text()).toBe(503);
      const retried = await tokensFor(svc, session.accessToken);
      expect(retried.status).toBe(200);
      const handedOver = [
        ((await other!.json()) as { accessToken: string }).accessToken,
        ((await retried.json()) as { accessToken: string }).accessToken,
      ];
      expect(handedOver.filter((token) => token.startsWith("access-"))).toHaveLength(1);
      expect(handedOver.filter((token) => token === "")).toHaveLength(1);
      expect(await handoffsOf(session.user.id)).toEqual([]);
    });
  }
});

/** The part of a journey at the provider, done by whoever holds the URL: the callback URL it sends the browser to. */
async function approveAtProvider(atProvider: URL, person: Record<string, string>): Promise<URL> {
  const url = new URL(atProvider);
  for (const [name, value] of Object.entries(person)) url.searchParams.set(name, value);
  return location(await svc.env.OUTBOUND!.fetch(url.toString(), { redirect: "manual" }));
}

describe("what the provider says about the person", () => {
  it("keeps a display name from the provider to the sign-up rules: no markup characters, 32 at most", async () => {
    // Threat: a name chosen at the provider ends up in mails and pages; the rule that keeps markup out of names given
    // at sign-up must hold for it too.
    const { back } = await signInWith(
      svc,
      "github",
      {},
      {
        fake_id: uniqueId(),
        fake_email: uniqueEmail(),
        fake_name: `<img src=x onerror=alert(1)> "Bobby" & Co 🎉 with a name far longer than thirty-two`,
      },
    );
    const session = await sessionFromRefresh(svc, back.searchParams.get("refreshToken")!);
    const name = session.user.displayName as string;
    expect(name).not.toMatch(/[<>&"`]/);
    expect(name.length).toBeLessThanOrEqual(32);
    expect(signUpOptionsSchema.shape.displayName.safeParse(name).success).toBe(true);
    expect(name).toBe("img src=x onerror=alert1 Bobby C");
  });
});

describe("bound to the browser that started it", () => {
  it("connect CSRF: a victim who approves an attacker's connect URL links nothing and hands over no provider token", async () => {
    // Threat: the attacker starts a connect flow with their own access token and gets a victim to open the provider
    // URL; the victim's identity would be linked to the attacker's user, with the victim's provider tokens.
    const attacker = await signUp(svc);
    const victimId = uniqueId();
    const started = await startAt(svc, "github", { connect: attacker.accessToken });
    const callback = await approveAtProvider(started.atProvider, {
      fake_id: victimId,
      fake_email: uniqueEmail(),
    });
    // The victim's browser: no binding cookie, or one of its own from a sign-in it started itself.
    const victimsOwn = (await startAt(svc, "github")).cookie;
    for (const cookie of ["", victimsOwn]) {
      const landed = location(await openIn(svc, callback, cookie));
      expect(landed.searchParams.get("error")).toBe("invalid-state");
      expect(`${landed.origin}${landed.pathname}`).toBe("http://localhost:3000/");
    }
    const linked = await allInShards(
      "SELECT user_id FROM user_providers WHERE provider_user_id = ?",
      victimId,
    );
    expect(linked).toEqual([]);
    const tokens = await svc.get("/signin/provider/github/callback/tokens", attacker.accessToken);
    expect(((await tokens.json()) as { accessToken: string }).accessToken).toBe("");
    expect(await auditTypesOf(attacker.user.id)).not.toContain("provider.linked");
    // Later, the victim's own "Sign in with GitHub" lands in the victim's account, not the attacker's.
    const own = await signInWith(svc, "github", {}, { fake_id: victimId, fake_email: uniqueEmail() });
    const session = await sessionFromRefresh(svc, own.back.searchParams.get("refreshToken")!);
    expect(session.user.id).not.toBe(attacker.user.id);
  });

  it("login CSRF: the callback of an attacker's sign-in opened in another browser signs nobody in; the starting browser still can", async () => {
    // Threat: the attacker stops before the callback and gets a victim's browser to open it: that browser would be
    // signed in as the attacker (and whatever the victim then saves lands in the attacker's account).
    const started = await startAt(svc, "github");
    const callback = await approveAtProvider(started.atProvider, {
      fake_id: uniqueId(),
      fake_email: uniqueEmail("attacker"),
    });
    const fresh = location(await openIn(svc, callback));
    expect(fresh.searchParams.get("error")).toBe("invalid-state");
    expect(fresh.searchParams.has("refreshToken")).toBe(false);
    // A binding cookie of the right shape but another value, and a cookie of another purpose, are no better.
    const forged = `provider-flow=${"A".repeat(43)}`;
    expect(location(await openIn(svc, callback, forged)).searchParams.get("error")).toBe("invalid-state");
    // Nothing was consumed by those attempts: the browser that started the flow completes it.
    const own = location(await openIn(svc, callback, started.cookie));
    expect(own.searchParams.get("refreshToken")).toBeTruthy();
  });

  it("the cookie: HttpOnly, SameSite=Lax, ten minutes, the same value for a second flow of the same browser", async () => {
    const first = await svc.get(`/signin/provider/github?redirectTo=${encodeURIComponent(APP)}`);
    const [setCookie] = first.headers.getSetCookie();
    expect(setCookie).toMatch(
      /^provider-flow=[A-Za-z0-9_-]{43}; Max-Age=600; Path=\/; HttpOnly; SameSite=Lax$/,
    );
    const cookie = setCookie!.split(";")[0]!;
    const second = await svc.request("GET", `/signin/provider/google?redirectTo=${encodeURIComponent(APP)}`, {
      headers: { cookie },
    });
    expect(second.headers.getSetCookie()[0]!.split(";")[0]).toBe(cookie);
    // Over https the name has the __Host- prefix and the Secure attribute.
    const secure = withProviders({
      AUTH_SERVER_URL: "https://auth.example.com/auth/v1",
      AUTH_DEV_MAILBOX: "false",
    });
    const overHttps = await secure.get(`/signin/provider/github?redirectTo=${encodeURIComponent(APP)}`);
    expect(overHttps.headers.getSetCookie()[0]).toMatch(/^__Host-provider-flow=[A-Za-z0-9_-]{43}; .*Secure/);
  });
});
