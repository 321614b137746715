// OUTBOUND to identity providers and to Twilio failing (a lost connection, or no answer until the request's own
// timeout), and KV `PROVIDER_KEYS` (the cached JWKS of ID-token sign-in) failing. The threat named above each test is
// what it keeps out.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { service, signUp, type TestService, type WireSession } from "../helpers";
import {
  APP,
  answerQuestion,
  confirmEmail,
  cookiesOf,
  location,
  mintIdToken,
  openIn,
  startAt,
  withProviders,
} from "../providers/support";
import { IDP } from "../sso/support";
import { failingFetcher, failingKv, failingShards } from "../support/faults";
import { uniquePhone } from "../support/phones";
import { allInShards } from "../support/shards";
import { withShortTimeouts } from "../support/timeouts";
import { expectUnavailable } from "./support";

/**
 * A hang lasts until the service's own timeout: 10 s for providers, their keys and Twilio, which each hang test
 * asserts is what the service asked for, and then waits out a tenth of (test/support/timeouts.ts).
 */
const TIMEOUT_MS = 10_000;
const HANG = { when: "hang", hangMs: 60_000 } as const;
const HANG_TEST = { timeout: 30_000 };

const uniqueId = () => String(Math.floor(Math.random() * 1e12));

describe("provider sign-in: the provider unreachable at the callback", () => {
  const plain = withProviders();

  /** A GitHub sign-in started and approved in one browser, its callback opened by `callbackSvc`. */
  async function callbackThrough(callbackSvc: TestService, person: { fake_id: string; fake_email: string }) {
    const { atProvider, cookie } = await startAt(plain, "github", { state: "app-state" });
    for (const [name, value] of Object.entries(person)) atProvider.searchParams.set(name, value);
    const callback = location(await env.OUTBOUND!.fetch(atProvider.toString(), { redirect: "manual" }));
    const back = location(await openIn(callbackSvc, callback, cookie));
    return { back, callback, cookie };
  }

  /** Nothing of the sign-in exists: no user with the address, no identity, no provider tokens waiting. */
  async function expectNothingMade(person: { fake_id: string; fake_email: string }) {
    expect(await allInShards("SELECT id FROM users WHERE email = ?", person.fake_email)).toEqual([]);
    expect(
      await allInShards(
        "SELECT id FROM user_providers WHERE provider = 'github' AND provider_user_id = ?",
        person.fake_id,
      ),
    ).toEqual([]);
  }

  const cases = [
    ["the code exchange", /github\.fake\/login\/oauth\/access_token/, "oauth-token-echange-failed"],
    ["the profile", /github\.fake\/user/, "oauth-profile-fetch-failed"],
  ] as const;

  // Threat: a 500 (or a blank page) where the contract sends the browser back with an error, or a user or an
  // identity half made from a sign-in that failed.
  it.each(cases)(
    "%s: a lost connection sends the browser back with the contract's error; nothing is made",
    async (_step, match, code) => {
      const { binding, fault } = failingFetcher(env.OUTBOUND!, { match });
      const person = { fake_id: uniqueId(), fake_email: `gh-${uniqueId()}@example.com` };
      const { back, callback, cookie } = await callbackThrough(withProviders({ OUTBOUND: binding }), person);
      expect(fault.failures).toBeGreaterThan(0);
      expect(`${back.origin}${back.pathname}`).toBe("https://app.example.com/after-sign-in");
      expect(back.searchParams.get("error")).toBe(code);
      expect(back.searchParams.get("state")).toBe("app-state");
      expect(back.searchParams.has("refreshToken")).toBe(false);
      await expectNothingMade(person);
      // The request was spent with its code: the same callback again signs no one in.
      const again = location(await openIn(plain, callback, cookie));
      expect(again.searchParams.get("error")).toBe("invalid-state");
      await expectNothingMade(person);
    },
  );

  // Threat: a provider that holds the connection open holds the sign-in (and the Worker's request) with it.
  it(
    "the profile endpoint hangs: given up at the request's own timeout, the contract's error; nothing is made",
    HANG_TEST,
    async () => {
      const { binding, fault } = failingFetcher(env.OUTBOUND!, { match: /github\.fake\/user/, ...HANG });
      const person = { fake_id: uniqueId(), fake_email: `gh-${uniqueId()}@example.com` };
      const started = Date.now();
      let back: URL | undefined;
      const requested = await withShortTimeouts(TIMEOUT_MS, async () => {
        ({ back } = await callbackThrough(withProviders({ OUTBOUND: binding }), person));
      });
      expect(requested).toEqual([TIMEOUT_MS, TIMEOUT_MS]); // the code exchange's and the profile's
      expect(fault.failures).toBe(1);
      expect(Date.now() - started).toBeLessThan(25_000);
      expect(back!.searchParams.get("error")).toBe("oauth-profile-fetch-failed");
      await expectNothingMade(person);
    },
  );
});

describe("POST /token/provider/:provider: the provider down at the refresh", () => {
  const TOKEN_ENDPOINT = /github\.fake\/login\/oauth\/access_token/;
  // A refresh token of the fake's lenient kind: it refreshes every time (test/fakes/outbound.js).
  const REFRESH_TOKEN = "refresh-kept-by-the-app";

  const refresh = (svc: TestService, accessToken: string, refreshToken = REFRESH_TOKEN) =>
    svc.post("/token/provider/github", { refreshToken }, accessToken);

  /** OUTBOUND whose calls to GitHub's token endpoint get `answer`; every other call reaches the fakes. */
  const tokenEndpointAnswering = (answer: () => Response) => ({
    fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      return TOKEN_ENDPOINT.test(request.url) ? answer() : env.OUTBOUND!.fetch(request);
    },
  });

  // Threat: an outage answered as the provider's refusal (400 `oauth-provider-error`): an app that follows the
  // contract drops the provider refresh token it holds and makes the user connect the provider again, when a retry
  // would have worked.
  it("a lost connection: 503 with Retry-After; the retry refreshes with the same token", async () => {
    const user = await signUp(withProviders());
    const { binding, fault } = failingFetcher(env.OUTBOUND!, { match: TOKEN_ENDPOINT, times: 1 });
    const svc = withProviders({ OUTBOUND: binding });
    await expectUnavailable(await refresh(svc, user.accessToken), "token endpoint unreachable");
    expect(fault.failures).toBe(1);
    const again = await refresh(svc, user.accessToken);
    expect(again.status, await again.clone().text()).toBe(200);
    expect(await again.json()).toMatchObject({ accessToken: expect.stringMatching(/^access-/) });
  });

  const outages = [
    ["503 with an HTML page", () => new Response("<html>down</html>", { status: 503 })],
    [
      "503 with temporarily_unavailable",
      () => Response.json({ error: "temporarily_unavailable" }, { status: 503 }),
    ],
    ["429", () => Response.json({ error: "slow_down" }, { status: 429 })],
  ] as const;

  // Threat: as above, the provider's own outage (5xx) or its rate limit (429) answered as a refusal of the token.
  it.each(outages)("the token endpoint answering %s: 503 with Retry-After", async (_, answer) => {
    const user = await signUp(withProviders());
    const svc = withProviders({ OUTBOUND: tokenEndpointAnswering(answer) });
    await expectUnavailable(await refresh(svc, user.accessToken), "token endpoint down");
  });

  // Threat: a provider that never answers holds the request open with no bound of its own.
  it("the token endpoint hangs: 503 at the request's own timeout", HANG_TEST, async () => {
    const user = await signUp(withProviders());
    const { binding, fault } = failingFetcher(env.OUTBOUND!, { match: TOKEN_ENDPOINT, ...HANG });
    const svc = withProviders({ OUTBOUND: binding });
    const requested = await withShortTimeouts(TIMEOUT_MS, async () =>
      expectUnavailable(await refresh(svc, user.accessToken), "token endpoint hang"),
    );
    expect(requested).toEqual([TIMEOUT_MS]);
    expect(fault.failures).toBe(1);
  });

  // Threat: the other way round, a dead token retried forever: the provider's refusal stays 400.
  it("a real refusal (invalid_grant, invalid_client) is still 400 oauth-provider-error", async () => {
    const user = await signUp(withProviders());
    const answer = await refresh(withProviders(), user.accessToken, "not-a-token-the-provider-knows");
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { error: string }).error).toBe("oauth-provider-error");
    const svc = withProviders({
      OUTBOUND: tokenEndpointAnswering(() => Response.json({ error: "invalid_client" }, { status: 401 })),
    });
    const refused = await refresh(svc, user.accessToken);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: string }).error).toBe("oauth-provider-error");
  });
});

describe("GET /signin/provider/:provider: a custom provider's issuer down at its discovery", () => {
  /** Where the discovery document of `issuer` is asked (OpenID Connect Discovery 1.0 §4). */
  const discoveryOf = (issuer: string) => `${issuer}/.well-known/openid-configuration`;
  // The real IdP on loopback (test/fakes/oidc-idp.ts); behind `BUSY`, whatever a test has it answer; at `GONE`,
  // nothing listens (port 1 on loopback: the connection is refused). `LOST` is the IdP under an issuer of this file's
  // own, whose document the test's binding serves: a discovery this isolate remembers (five minutes, for every file of
  // its lane) would let the start go by without asking, and the lost connection would never be met.
  const BUSY = `${IDP}/busy`;
  const GONE = "http://127.0.0.1:1";
  const LOST = `${IDP}/lost-${crypto.randomUUID().slice(0, 8)}`;
  const custom = (id: string, issuer: string) => ({
    provider: { id, name: id, issuer },
    credentials: {
      [`AUTH_PROVIDER_${id.toUpperCase()}_CLIENT_ID`]: "custom-client",
      [`AUTH_PROVIDER_${id.toUpperCase()}_CLIENT_SECRET`]: "custom secret",
    },
  });
  const PROVIDERS = [custom("lost", LOST), custom("busy", BUSY), custom("gone", GONE)];
  /** Outbound calls leave for real, to loopback, through `binding` (test/providers/custom.test.ts does the same). */
  const withIssuers = (binding: Fetcher) =>
    withProviders({
      AUTH_CUSTOM_PROVIDERS: JSON.stringify(PROVIDERS.map(({ provider }) => provider)),
      ...Object.assign({}, ...PROVIDERS.map(({ credentials }) => credentials)),
      AUTH_OUTBOUND_ALLOW_LOCAL: "true",
      OUTBOUND: binding,
    });
  const LOOPBACK = {
    fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      if (request.url !== discoveryOf(LOST)) return fetch(request);
      // The IdP's own document, under `LOST`'s name.
      const document = (await (await fetch(discoveryOf(IDP))).json()) as Record<string, unknown>;
      return Response.json({ ...document, issuer: LOST });
    },
  } as Fetcher;
  /** The loopback fetcher, except that `BUSY`'s discovery gets `answer`. */
  const busyAnswering = (answer: () => Response) =>
    ({
      fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
        const request = new Request(input, init);
        return request.url === discoveryOf(BUSY) ? answer() : fetch(request);
      },
    }) as Fetcher;
  const start = (svc: TestService, provider: string) =>
    svc.get(`/signin/provider/${provider}?redirectTo=${encodeURIComponent(APP)}`);
  /** The refusal: the browser back at the app with `oauth-provider-error`. */
  const expectRefused = (answer: Response, context: string) => {
    expect(answer.status, context).toBe(302);
    const back = location(answer);
    expect(`${back.origin}${back.pathname}`, context).toBe(APP);
    expect(back.searchParams.get("error"), context).toBe("oauth-provider-error");
  };

  // Threat: the provider's outage answered as its refusal (`oauth-provider-error`, "the provider returned an error"):
  // the app tells its user the provider refused them, and nothing says to try again; the same link works a moment on.
  it("a lost connection: 503 with Retry-After; the same start then goes to the IdP", async () => {
    const { binding, fault } = failingFetcher(LOOPBACK, { match: /openid-configuration/, times: 1 });
    const svc = withIssuers(binding);
    await expectUnavailable(await start(svc, "lost"), "discovery unreachable");
    expect(fault.failures).toBe(1);
    const again = await start(svc, "lost");
    expect(again.status, await again.clone().text()).toBe(302);
    expect(location(again).origin).toBe(new URL(IDP).origin);
    expect(location(again).searchParams.get("error")).toBeNull();
  });

  // Threat: as above, a real refused connection (nothing listening at the issuer) rather than a thrown fault.
  it("nothing listening at the issuer: 503 with Retry-After", async () => {
    await expectUnavailable(await start(withIssuers(LOOPBACK), "gone"), "nothing listens");
  });

  // Threat: the issuer's own outage (5xx) or rate limit (429) answered as a refusal; and the other way round, a
  // document that is wrong (a 404, an HTML page, broken JSON: the configuration must change) retried forever as 503.
  it("the issuer answering 5xx or 429 is down (503); a 404, a 403, HTML or broken JSON is still the refusal", async () => {
    const down = [
      ["503 with an HTML page", () => new Response("<html>down</html>", { status: 503 })],
      ["502", () => new Response("bad gateway", { status: 502 })],
      ["429", () => Response.json({ error: "slow_down" }, { status: 429 })],
      // The connection lost after the document began: no whole answer came (it counted as a refusal).
      [
        "200 whose body breaks off",
        () =>
          new Response(
            new ReadableStream({
              start(controller) {
                controller.enqueue(new TextEncoder().encode('{"issuer":'));
                controller.error(new TypeError("Network connection lost."));
              },
            }),
            { headers: { "content-type": "application/json" } },
          ),
      ],
    ] as const;
    for (const [what, answer] of down) {
      await expectUnavailable(await start(withIssuers(busyAnswering(answer)), "busy"), what);
    }
    const wrong = [
      ["404", () => Response.json({ error: "not_found" }, { status: 404 })],
      ["403", () => new Response("forbidden", { status: 403 })],
      [
        "200 with an HTML page",
        () => new Response("<html>hello</html>", { headers: { "content-type": "text/html" } }),
      ],
      ["200 with broken JSON", () => new Response("{", { headers: { "content-type": "application/json" } })],
    ] as const;
    for (const [what, answer] of wrong)
      expectRefused(await start(withIssuers(busyAnswering(answer)), "busy"), what);
  });

  // Threat: an issuer that never answers holds the start with no bound of its own.
  it("the discovery hangs: 503 at the discovery's own timeout", HANG_TEST, async () => {
    const { binding, fault } = failingFetcher(LOOPBACK, { match: /openid-configuration/, ...HANG });
    const svc = withIssuers(binding);
    const requested = await withShortTimeouts(5_000, async () =>
      expectUnavailable(await start(svc, "busy"), "discovery hang"),
    );
    expect(requested).toEqual([5_000]);
    expect(fault.failures).toBe(1);
  });
});

describe("a link's question (connect=<access token>) with D1 failing at each of its statements", () => {
  // Threat: a failing database answering a page whose "Continue" leads nowhere (or, worse, a question that names no
  // account and still links), or a 500. Each step: the contract's 503; the same URL asked again, the question, whose
  // yes goes on to the provider.
  it("each step: a 503 and no question, or the whole question; the retry asks and goes on", async () => {
    const user = await signUp(withProviders());
    await confirmEmail(user.user.id);
    const url = `/signin/provider/github?${new URLSearchParams({ redirectTo: APP, connect: user.accessToken })}`;
    const watched = failingShards(env, { after: Number.POSITIVE_INFINITY });
    expect((await withProviders(watched.bindings).get(url)).status).toBe(200);
    const steps = watched.fault.seen;
    expect(steps.length).toBeGreaterThan(0);
    for (let step = 0; step < steps.length; step++) {
      const context = `step ${step}: ${steps[step]!.slice(0, 80)}`;
      const { bindings } = failingShards(env, { after: step, times: 1 });
      const svc = withProviders(bindings);
      let asked = await svc.get(url);
      // A read the service can do without (the slot map's refresh): the question, whole, naming the account.
      if (asked.status !== 200) {
        await expectUnavailable(asked, context);
        asked = await svc.get(url);
      }
      expect(await asked.clone().text(), context).toContain(user.user.email!);
      const atProvider = location(await answerQuestion(svc, asked, cookiesOf(asked)));
      expect(atProvider.host, context).toBe("github.fake");
    }
  });
});

describe("ID-token sign-in: the provider's keys", () => {
  const GOOGLE = { AUTH_PROVIDER_GOOGLE_AUDIENCE: "ios-client" };
  const JWKS_URL = "https://oidc.fake/jwks";

  const signIn = async (svc: TestService, sub: string) =>
    svc.post("/signin/idtoken", {
      provider: "google",
      idToken: await mintIdToken({ sub, email: `${sub}@example.com` }),
    });

  async function expectSignedIn(response: Response, sub: string) {
    expect(response.status, await response.clone().text()).toBe(200);
    const { session } = (await response.json()) as { session: WireSession };
    expect(session.user.email).toBe(`${sub}@example.com`);
  }

  // Threat: a cache that cannot be read for a moment stops every native sign-in, though the keys are one fetch away.
  it("KV cannot be read: a miss, the keys come from the provider, the user signs in", async () => {
    const { binding, fault } = failingKv(env.PROVIDER_KEYS, { match: /^get$/ });
    const sub = `g-${uniqueId()}`;
    await expectSignedIn(await signIn(withProviders({ ...GOOGLE, PROVIDER_KEYS: binding }), sub), sub);
    expect(fault.failures).toBe(1);
  });

  // Threat: as above, a cache that cannot keep the keys failing the sign-in that fetched them.
  it("KV cannot be written: the user signs in with the keys fetched; nothing is cached", async () => {
    await env.PROVIDER_KEYS.delete(JWKS_URL);
    const { binding, fault } = failingKv(env.PROVIDER_KEYS, { match: /^put$/ });
    const sub = `g-${uniqueId()}`;
    await expectSignedIn(await signIn(withProviders({ ...GOOGLE, PROVIDER_KEYS: binding }), sub), sub);
    expect(fault.failures).toBe(1);
    expect(await env.PROVIDER_KEYS.get(JWKS_URL)).toBeNull();
  });

  // Threat: a provider that cannot be reached answered as the app's mistake (400), so the app never retries; or a
  // user made without a verified token.
  it("the keys cannot be fetched (a lost connection): 503 with Retry-After, no user; the retry signs in", async () => {
    await env.PROVIDER_KEYS.delete(JWKS_URL);
    const { binding, fault } = failingFetcher(env.OUTBOUND!, { match: /oidc\.fake\/jwks/, times: 1 });
    const svc = withProviders({ ...GOOGLE, OUTBOUND: binding });
    const sub = `g-${uniqueId()}`;
    await expectUnavailable(await signIn(svc, sub), "jwks unreachable");
    expect(fault.failures).toBe(1);
    expect(await allInShards("SELECT id FROM users WHERE email = ?", `${sub}@example.com`)).toEqual([]);
    await expectSignedIn(await signIn(svc, sub), sub);
  });

  // Threat: a provider that hangs holds the sign-in open for as long as it likes.
  it("the keys' fetch hangs: 503 at the request's own timeout, no user", HANG_TEST, async () => {
    await env.PROVIDER_KEYS.delete(JWKS_URL);
    const { binding, fault } = failingFetcher(env.OUTBOUND!, { match: /oidc\.fake\/jwks/, ...HANG });
    const sub = `g-${uniqueId()}`;
    const requested = await withShortTimeouts(TIMEOUT_MS, async () =>
      expectUnavailable(await signIn(withProviders({ ...GOOGLE, OUTBOUND: binding }), sub), "jwks hang"),
    );
    expect(requested).toEqual([TIMEOUT_MS]);
    expect(fault.failures).toBe(1);
    expect(await allInShards("SELECT id FROM users WHERE email = ?", `${sub}@example.com`)).toEqual([]);
  });
});

describe("SMS sign-in: Twilio unreachable", () => {
  const TWILIO_ENV = {
    AUTH_SMS_PASSWORDLESS_ENABLED: "true",
    AUTH_SMS_PROVIDER: "twilio",
    AUTH_SMS_TWILIO_ACCOUNT_SID: "ACtest",
    AUTH_SMS_TWILIO_AUTH_TOKEN: "twilio-token",
    AUTH_SMS_TWILIO_MESSAGING_SERVICE_ID: "MGservice",
  };
  const twilio = service(TWILIO_ENV);
  const TWILIO_API = /api\.twilio\.com\/2010-04-01\//;

  async function sentByTwilio(to: string): Promise<{ Body: string }[]> {
    const response = await env.OUTBOUND!.fetch(`https://api.twilio.com/__sent?to=${encodeURIComponent(to)}`);
    return (await response.json()) as { Body: string }[];
  }
  const usersWith = (phone: string) => allInShards("SELECT id FROM users WHERE phone_number = ?", phone);

  /** The newest code Twilio took for `phone` signs in. */
  async function expectCodeSignsIn(phone: string) {
    const [sms] = await sentByTwilio(phone);
    const otp = /\b(\d{6})\b/.exec(sms!.Body)![1]!;
    const answer = await twilio.post("/signin/passwordless/sms/otp", { phoneNumber: phone, otp });
    expect(answer.status, await answer.clone().text()).toBe(200);
  }

  // Threat: an outage answered as a refusal of the number (400 `cannot-send-sms`), so the app tells the person their
  // number is wrong; a sign-up left behind whose retry meets `phone-number-already-in-use`.
  it("a lost connection: 503 with Retry-After; the sign-up's user is undone, and the retry signs up", async () => {
    const { binding, fault } = failingFetcher(env.OUTBOUND!, { match: TWILIO_API, times: 1 });
    const svc = service({ ...TWILIO_ENV, OUTBOUND: binding });
    const phone = uniquePhone();
    await expectUnavailable(
      await svc.post("/signup/passwordless/sms", { phoneNumber: phone }),
      "twilio down",
    );
    expect(fault.failures).toBe(1);
    expect(await usersWith(phone)).toEqual([]);
    expect(await (await svc.post("/signup/passwordless/sms", { phoneNumber: phone })).json()).toBe("OK");
    await expectCodeSignsIn(phone);
  });

  // Threat: the undo reaching a user who had the number before this request.
  it("a lost connection for a number that has a user: 503; that user stays, and the retry signs them in", async () => {
    const phone = uniquePhone();
    expect((await twilio.post("/signin/passwordless/sms", { phoneNumber: phone })).status).toBe(200);
    const before = await usersWith(phone);
    expect(before).toHaveLength(1);
    const { binding } = failingFetcher(env.OUTBOUND!, { match: TWILIO_API, times: 1 });
    const svc = service({ ...TWILIO_ENV, OUTBOUND: binding });
    await expectUnavailable(
      await svc.post("/signin/passwordless/sms", { phoneNumber: phone }),
      "twilio down",
    );
    expect(await usersWith(phone)).toEqual(before);
    expect((await svc.post("/signin/passwordless/sms", { phoneNumber: phone })).status).toBe(200);
    await expectCodeSignsIn(phone);
  });

  // Threat: Twilio's own outage (5xx) answered as a refusal of the number.
  it("Twilio answering 503: 503 with Retry-After, no user", async () => {
    const down = {
      fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
        const request = new Request(input, init);
        if (TWILIO_API.test(request.url)) return new Response("upstream unavailable", { status: 503 });
        return env.OUTBOUND!.fetch(request);
      },
    };
    const phone = uniquePhone();
    const svc = service({ ...TWILIO_ENV, OUTBOUND: down });
    await expectUnavailable(await svc.post("/signin/passwordless/sms", { phoneNumber: phone }), "twilio 503");
    expect(await usersWith(phone)).toEqual([]);
  });

  // Threat: a Twilio that never answers holds the request open with no bound of its own.
  it("Twilio hangs: 503 at the request's own timeout; no user", HANG_TEST, async () => {
    const { binding, fault } = failingFetcher(env.OUTBOUND!, { match: TWILIO_API, ...HANG });
    const phone = uniquePhone();
    const started = Date.now();
    const svc = service({ ...TWILIO_ENV, OUTBOUND: binding });
    const requested = await withShortTimeouts(TIMEOUT_MS, async () =>
      expectUnavailable(await svc.post("/signin/passwordless/sms", { phoneNumber: phone }), "twilio hang"),
    );
    expect(requested).toEqual([TIMEOUT_MS]);
    expect(fault.failures).toBe(1);
    expect(Date.now() - started).toBeLessThan(25_000);
    expect(await usersWith(phone)).toEqual([]);
  });
});
