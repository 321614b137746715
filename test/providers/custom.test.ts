// Custom providers (`AUTH_CUSTOM_PROVIDERS`, issue 47 "Any OpenID Connect or OAuth2 provider by configuration"):
// an OpenID Connect provider found by discovery (the real `oidc-provider` on loopback of test/fakes/oidc-idp.ts, as
// the enterprise connections' tests use it) and a plain OAuth 2.0 one (the GitHub-like fake of test/fakes/outbound.js),
// each through the same redirect flow, linking, tokens, pages and account center as a built-in provider. Threats: an
// ID token forged by whoever answers at the token endpoint, a discovery that names another issuer or fails, an
// endpoint the outbound-URL policy refuses, an unverified address taking over an account, a bad list at start.
import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { ConfigError } from "../../src/errors";
import { getConfig } from "../../src/runtime/config";
import { accountPage, SECURITY_ON, signedInBrowser } from "../account-center/security-support";
import { FACE, supabaseService } from "../faces/supabase/support";
import type { Tamper } from "../fakes/oidc-idp";
import { PASSWORD, service, sessionFromRefresh, signUp, uniqueEmail } from "../helpers";
import { authorize, newClient } from "../oauth2/support";
import { atIdp, IDP, personAtIdp } from "../sso/support";
import { APP, CALLBACK, FAKE_PROVIDERS, location, openIn, signInWith, startAt } from "./support";

const CLIENT = { id: `custom-${crypto.randomUUID().slice(0, 8)}`, secret: "custom secret" };

/** Both custom OIDC providers use the one client, registered at the IdP with both callbacks. */
await fetch(`${IDP}/__clients`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({
    client_id: CLIENT.id,
    client_secret: CLIENT.secret,
    redirect_uris: [CALLBACK("acme"), CALLBACK("acmeplain"), CALLBACK("acmedirect")],
  }),
});

const credentials = (id: string, clientId = CLIENT.id, secret = CLIENT.secret) => ({
  [`AUTH_PROVIDER_${id.toUpperCase()}_CLIENT_ID`]: clientId,
  [`AUTH_PROVIDER_${id.toUpperCase()}_CLIENT_SECRET`]: secret,
});

const OIDC_PROVIDERS = [
  { id: "acme", name: "Acme ID", issuer: IDP, claims: { verified: "email_verified" } },
  // No `verified` mapping: every address it gives is unverified.
  { id: "acmeplain", name: "Acme Plain", issuer: IDP },
  // The same IdP without discovery: its endpoints, issuer and keys named in the configuration.
  {
    id: "acmedirect",
    name: "Acme Direct",
    issuer: IDP,
    authorizationUrl: `${IDP}/auth`,
    tokenUrl: `${IDP}/token`,
    jwksUrl: `${IDP}/jwks`,
    claims: { verified: "email_verified" },
  },
  // Discovery that fails: nothing there, and a document naming another issuer (the trailing slash).
  { id: "nowhere", name: "Nowhere", issuer: `${IDP}/nothing-here` },
  { id: "otherissuer", name: "Other", issuer: `${IDP}/` },
];

const OIDC_ENV = {
  ...FAKE_PROVIDERS,
  AUTH_CUSTOM_PROVIDERS: JSON.stringify(OIDC_PROVIDERS),
  ...credentials("acme"),
  ...credentials("acmeplain"),
  ...credentials("acmedirect"),
  ...credentials("nowhere"),
  ...credentials("otherissuer"),
};

/** Outbound calls really leave, to loopback, as `wrangler dev` runs the service (test/sso/support.ts). */
const oidc = service({ ...OIDC_ENV, OUTBOUND: undefined, AUTH_OUTBOUND_ALLOW_LOCAL: "true" });

/** The whole journey at the real IdP as `sub`; where the browser lands in the app. */
async function signInAtIdp(
  svc: typeof oidc,
  provider: string,
  sub: string,
  query: Record<string, string> = {},
) {
  const { atProvider, cookie } = await startAt(svc, provider, query);
  const callback = await atIdp(atProvider.toString(), sub);
  return { atProvider, back: location(await openIn(svc, callback, cookie)) };
}

describe("a custom OpenID Connect provider (discovery)", () => {
  it("signs a new person up through signInProviderURL, verified by its mapping; tokens for the app; same user next time", async () => {
    const email = uniqueEmail("custom-oidc");
    const sub = await personAtIdp({ email, email_verified: true, name: "Ana Custom" });
    const { atProvider, back } = await signInAtIdp(oidc, "acme", sub, { state: "app-state" });
    // The authorization endpoint came from the issuer's discovery document; PKCE, nonce and the OIDC scopes.
    expect(`${atProvider.origin}`).toBe(new URL(IDP).origin);
    expect(Object.fromEntries(atProvider.searchParams)).toMatchObject({
      client_id: CLIENT.id,
      redirect_uri: CALLBACK("acme"),
      scope: "openid email profile",
      code_challenge_method: "S256",
      nonce: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    expect(back.searchParams.get("error"), back.searchParams.get("errorDescription") ?? "").toBeNull();
    expect(back.searchParams.get("state")).toBe("app-state");
    const session = await sessionFromRefresh(oidc, back.searchParams.get("refreshToken")!);
    expect(session.user).toMatchObject({ email, emailVerified: true, displayName: "Ana Custom" });
    // getProviderTokens: the provider's access token, once.
    const tokens = await oidc.get("/signin/provider/acme/callback/tokens", session.accessToken);
    expect(((await tokens.json()) as { accessToken: string }).accessToken).not.toBe("");
    const again = await signInAtIdp(oidc, "acme", sub);
    const second = await sessionFromRefresh(oidc, again.back.searchParams.get("refreshToken")!);
    expect(second.user.id).toBe(session.user.id);
  });

  // Threat: a provider without a `verified` mapping vouching for someone else's address (account takeover).
  it("without a verified mapping never finds an existing account by email, and marks new addresses unverified", async () => {
    const email = uniqueEmail("custom-takeover");
    await signUp(oidc, email);
    const sub = await personAtIdp({ email, email_verified: true });
    const { back } = await signInAtIdp(oidc, "acmeplain", sub);
    expect(back.searchParams.get("error")).toBe("email-already-in-use");
    expect(back.searchParams.has("refreshToken")).toBe(false);
    expect((await oidc.post("/signin/email-password", { email, password: PASSWORD })).status).toBe(200);
    const fresh = uniqueEmail("custom-unverified");
    const newSub = await personAtIdp({ email: fresh, email_verified: true });
    const signedUp = await signInAtIdp(oidc, "acmeplain", newSub);
    const session = await sessionFromRefresh(oidc, signedUp.back.searchParams.get("refreshToken")!);
    expect(session.user).toMatchObject({ email: fresh, emailVerified: false });
  });

  it("links to the signed-in user with connect; the provider then signs that user in", async () => {
    const user = await signUp(oidc, uniqueEmail("custom-link"));
    const sub = await personAtIdp({ email: uniqueEmail("custom-link-idp"), email_verified: true });
    const linked = await signInAtIdp(oidc, "acme", sub, { connect: user.accessToken });
    expect(linked.back.searchParams.get("error")).toBeNull();
    const { back } = await signInAtIdp(oidc, "acme", sub);
    const session = await sessionFromRefresh(oidc, back.searchParams.get("refreshToken")!);
    expect(session.user.id).toBe(user.user.id);
  });

  // Threat: whoever answers at the token endpoint (the discovery document names it) forging the ID token: another
  // issuer, another audience, another sign-in's nonce, no signature (alg none), a key the issuer never published.
  it("refuses an ID token with the wrong iss, aud or nonce, alg none, or another key, as the built-ins do", async () => {
    const tampers: Tamper[] = ["issuer", "audience", "nonce", "no-signature", "other-key"];
    const outcomes = await Promise.all(
      tampers.map(async (tamper) => {
        const sub = await personAtIdp({
          email: uniqueEmail(`forged-${tamper}`),
          email_verified: true,
          tamper,
        });
        const { back } = await signInAtIdp(oidc, "acme", sub);
        return [tamper, back.searchParams.get("error"), back.searchParams.has("refreshToken")];
      }),
    );
    expect(outcomes).toEqual(tampers.map((tamper) => [tamper, "oauth-token-echange-failed", false]));
  });

  it("with explicit endpoints (no discovery) checks its ID token against the configured issuer and keys", async () => {
    const email = uniqueEmail("custom-direct");
    const sub = await personAtIdp({ email, email_verified: true });
    const { back } = await signInAtIdp(oidc, "acmedirect", sub);
    const session = await sessionFromRefresh(oidc, back.searchParams.get("refreshToken")!);
    expect(session.user).toMatchObject({ email, emailVerified: true });
    const forged = await personAtIdp({ email: uniqueEmail("direct-forged"), tamper: "other-key" });
    expect((await signInAtIdp(oidc, "acmedirect", forged)).back.searchParams.get("error")).toBe(
      "oauth-token-echange-failed",
    );
  });

  // Threat: a discovery document at the issuer's URL that speaks for another issuer (or none at all).
  it("refuses the sign-in when discovery fails or names another issuer, and when the policy refuses the issuer", async () => {
    for (const provider of ["nowhere", "otherissuer"]) {
      const back = location(
        await oidc.get(`/signin/provider/${provider}?redirectTo=${encodeURIComponent(APP)}`),
      );
      expect(`${back.origin}${back.pathname}`).toBe(APP);
      expect(back.searchParams.get("error")).toBe("oauth-provider-error");
    }
    // Without AUTH_OUTBOUND_ALLOW_LOCAL the loopback issuer is not fetched at all (the outbound-URL policy).
    const strict = service({ ...OIDC_ENV, OUTBOUND: undefined });
    const refused = location(await strict.get(`/signin/provider/acme?redirectTo=${encodeURIComponent(APP)}`));
    expect(refused.searchParams.get("error")).toBe("oauth-provider-error");
  });

  // Threat: an issuer down at the callback's discovery (its document no longer remembered) answered after the request
  // was spent: the person was sent back to the app as refused (or, told 503, their retry met `invalid-state`), and had
  // to start the sign-in again. Now the 503 keeps the request, and the same callback goes on once the issuer is back.
  it("an issuer down at the callback's discovery: 503 with the request kept; the same callback goes on once it is back", async () => {
    // An issuer of this test's own (the IdP's document under another name), so no other test's discovery is met.
    const issuer = `${IDP}/alias-${crypto.randomUUID().slice(0, 8)}`;
    let down = false;
    let exchanges = 0;
    const binding = {
      fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
        const request = new Request(input, init);
        if (request.url === `${issuer}/.well-known/openid-configuration`) {
          if (down) throw new TypeError("Network connection lost.");
          const document = (await (await fetch(`${IDP}/.well-known/openid-configuration`)).json()) as object;
          return Response.json({ ...document, issuer });
        }
        // The code exchange, refused: reaching it is what this test asks (the request was found), not a sign-in.
        if (request.url.startsWith(IDP) && new URL(request.url).pathname.endsWith("/token")) {
          exchanges += 1;
          return Response.json({ error: "invalid_grant" }, { status: 400 });
        }
        return fetch(request);
      },
    } as Fetcher;
    const svc = service({
      ...FAKE_PROVIDERS,
      AUTH_CUSTOM_PROVIDERS: JSON.stringify([{ id: "alias", name: "Alias", issuer }]),
      ...credentials("alias"),
      OUTBOUND: binding,
      AUTH_OUTBOUND_ALLOW_LOCAL: "true",
    });
    // Started six minutes ago (a request lives ten): the callback no longer finds the document in memory (five).
    vi.useFakeTimers({ toFake: ["Date"] });
    let started: Awaited<ReturnType<typeof startAt>>;
    try {
      vi.setSystemTime(Date.now() - 6 * 60 * 1000);
      started = await startAt(svc, "alias");
    } finally {
      vi.useRealTimers();
    }
    const state = started.atProvider.searchParams.get("state")!;
    const callbackUrl = `${CALLBACK("alias")}?${new URLSearchParams({ code: "the-code", state })}`;
    down = true;
    const refused = await openIn(svc, callbackUrl, started.cookie);
    expect(refused.status, await refused.clone().text()).toBe(503);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(exchanges).toBe(0);
    down = false;
    const back = location(await openIn(svc, callbackUrl, started.cookie));
    expect(`${back.origin}${back.pathname}`).toBe(APP);
    expect(back.searchParams.get("error")).toBe("oauth-token-echange-failed");
    expect(exchanges).toBe(1);
    // That answer spent the request, as any callback's does.
    const spent = location(await openIn(svc, callbackUrl, started.cookie));
    expect(spent.searchParams.get("error")).toBe("invalid-state");
  });
});

/** A plain OAuth 2.0 provider (no OIDC): the GitHub-like fake, its profile mapped from its own field names. */
const PLAIN = {
  ...SECURITY_ON,
  ...FAKE_PROVIDERS,
  AUTH_CUSTOM_PROVIDERS: JSON.stringify([
    {
      id: "octo",
      name: "Octo Hub",
      authorizationUrl: "https://github.fake/login/oauth/authorize",
      tokenUrl: "https://github.fake/login/oauth/access_token",
      userinfoUrl: "https://github.fake/user",
      scopes: ["read:user"],
      clientAuth: "post",
      claims: { id: "id", name: "name", picture: "avatar_url" },
    },
  ]),
  ...credentials("octo", "gh-client", "gh-secret"),
};
const plain = service(PLAIN);

describe("a custom plain OAuth 2.0 provider", () => {
  it("signs in with the mapped profile: no nonce, PKCE, the configured scopes", async () => {
    const id = String(Math.floor(Math.random() * 1e12));
    const { atProvider, back } = await signInWith(plain, "octo", {}, { fake_id: id });
    expect(atProvider.searchParams.get("nonce")).toBeNull();
    expect(atProvider.searchParams.get("scope")).toBe("read:user");
    expect(atProvider.searchParams.get("code_challenge_method")).toBe("S256");
    const session = await sessionFromRefresh(plain, back.searchParams.get("refreshToken")!);
    expect(session.user).toMatchObject({
      displayName: "Octo Cat",
      avatarUrl: "https://github.fake/octocat.png",
    });
  });

  it("starts from the Supabase face's /authorize as a built-in provider does", async () => {
    const face = supabaseService(PLAIN);
    const start = location(
      await openIn(face, `${FACE}/auth/v1/authorize?provider=octo&redirect_to=${encodeURIComponent(APP)}`),
    );
    expect(`${start.origin}${start.pathname}`).toBe("https://github.fake/login/oauth/authorize");
    expect(start.searchParams.get("redirect_uri")).toBe(CALLBACK("octo"));
  });

  // Threat: an id that is a property of every object (`constructor`, `__proto__`) passing for a configured provider.
  it("knows no provider by an object's own property names", async () => {
    for (const name of ["constructor", "__proto__", "hasOwnProperty"]) {
      const back = location(
        await plain.get(`/signin/provider/${name}?redirectTo=${encodeURIComponent(APP)}`),
      );
      expect(back.searchParams.get("error"), name).toBe("disabled-endpoint");
    }
  });

  it("is a button on the hosted page and a linked provider in the account center, by its configured name", async () => {
    const response = await authorize(plain, await newClient(plain));
    const page = await plain.request(
      "GET",
      location(response)
        .toString()
        .replace(/^.*\/auth\/v1/, ""),
    );
    expect(await page.text()).toContain("Continue with Octo Hub");
    const { browser: signedIn, api } = await signedInBrowser(plain, "custom-center");
    const fakeId = String(Math.floor(Math.random() * 1e12));
    const linked = await signInWith(plain, "octo", { connect: api.accessToken }, { fake_id: fakeId });
    expect(linked.back.searchParams.get("error")).toBeNull();
    // A sign-in of the same user through the provider: its session says how it began, by the provider's name.
    const again = await signInWith(plain, "octo", {}, { fake_id: fakeId });
    expect(again.back.searchParams.has("refreshToken")).toBe(true);
    const center = await accountPage(signedIn);
    expect(center).toContain("Octo Hub</td>");
    expect(center).toContain("Octo Hub account");
    expect(center).toContain('value="octo"');
  });
});

describe("AUTH_CUSTOM_PROVIDERS at start", () => {
  const entry = { id: "acme", name: "Acme", issuer: "https://id.acme.test" };
  it.each([
    ["not JSON", "{", "AUTH_CUSTOM_PROVIDERS must be a JSON list"],
    ["a built-in name", [{ ...entry, id: "github" }], "a built-in provider's name"],
    ["a bad id", [{ ...entry, id: "Acme-1" }], "AUTH_CUSTOM_PROVIDERS"],
    ["two with one id", [entry, entry], "two providers with one id"],
    ["an unknown field", [{ ...entry, secret: "x" }], "AUTH_CUSTOM_PROVIDERS"],
    ["no endpoints", [{ id: "acme", name: "Acme" }], "an issuer (with discovery)"],
    ["http off loopback", [{ ...entry, issuer: "http://id.acme.test" }], "issuer must be https"],
    [
      "an endpoint without its pair",
      [{ ...entry, authorizationUrl: "https://id.acme.test/a" }],
      "authorizationUrl and tokenUrl go together",
    ],
    [
      "plain OAuth 2.0 without userinfo",
      [{ id: "acme", name: "A", authorizationUrl: "https://a.test/a", tokenUrl: "https://a.test/t" }],
      "needs userinfoUrl",
    ],
    ["OIDC scopes without openid", [{ ...entry, scopes: ["email"] }], "scopes need openid"],
  ])("refuses %s, naming the variable", (_what, value, message) => {
    const bad = {
      ...env,
      ...credentials("acme", "id", "secret"),
      AUTH_CUSTOM_PROVIDERS: typeof value === "string" ? value : JSON.stringify(value),
    };
    expect(() => getConfig(bad)).toThrow(ConfigError);
    expect(() => getConfig(bad)).toThrow(/AUTH_CUSTOM_PROVIDERS/);
    expect(() => getConfig(bad)).toThrow(message);
  });

  it("requires the client's credentials, naming their variables; a good list is enabled by id", () => {
    const list = JSON.stringify([entry]);
    expect(() => getConfig({ ...env, AUTH_CUSTOM_PROVIDERS: list })).toThrow(
      /AUTH_PROVIDER_ACME_CLIENT_ID and AUTH_PROVIDER_ACME_CLIENT_SECRET/,
    );
    const config = getConfig({ ...env, AUTH_CUSTOM_PROVIDERS: list, ...credentials("acme", "id", "secret") });
    expect(config.providers.enabled.acme).toMatchObject({
      name: "acme",
      clientId: "id",
      custom: { name: "Acme" },
    });
  });
});
