// The token vault (contract operators.md §3) through HTTP: a user connects Google (the fake of test/fakes/outbound.js)
// with the vault's extra scope and offline access; an agent allowed Google exchanges the user's token for Google's
// (RFC 8693), refreshed behind the scenes, once even when two exchanges ask at once; the provider down at refresh
// changes nothing stored. Threats, each named at its test: the refresh token leaving the service, a client not
// allowed, a user who did not consent, a revoked connection, a subject token that is not the agent's own (a session
// token, an exchanged one, a DPoP-bound one without its proof), a connection finished in another browser, an
// impersonated session connecting.
import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { getConfig } from "../../src/runtime/config";
import { signAccessToken } from "../../src/signing-keys/jwt";
import { auditTypesOf, expectError, service, signUp } from "../helpers";
import { proof, proofKey } from "../oauth2/dpop-support";
import { ADMIN, ISSUER, newClient, oauth2Error } from "../oauth2/support";
import { APP, location, openIn } from "../providers/support";
import { userD1 } from "../support/shards";
import {
  ACCESS_TOKEN,
  agent,
  CALENDAR,
  connect,
  countsAtGoogle,
  exchangeForGoogle,
  googleAccount,
  googleDown,
  startConnection,
  userTokenFor,
  VAULT_ON,
} from "./support";

const API = "https://api.example.com";
const svc = service({ ...VAULT_ON, AUTH_OAUTH2_PROVIDER_RESOURCES: API });

interface Connection {
  provider: string;
  providerUserId: string;
  email: string | null;
  scopes: string[];
  clients: { clientId: string; clientName: string; lastUsedAt: string | null; uses: number }[];
}

const connectionsOf = async (accessToken: string) =>
  ((await (await svc.get("/user/connections", accessToken)).json()) as { items: Connection[] }).items;

async function storedRow(userId: string) {
  return userD1(userId)
    .prepare(
      "SELECT sealed, version, expires_at FROM vault_connections WHERE user_id = ? AND provider = 'google'",
    )
    .bind(userId)
    .first<{ sealed: string; version: number; expires_at: number }>();
}

/**
 * A user's Google connection an agent may use, and the agent's subject token. Google's tokens live 60 s here: under
 * the vault's five-minute margin, every exchange needs a fresh one (a refresh at Google).
 */
async function aConnectionToRenew() {
  const session = await signUp(svc);
  const bot = await agent(svc);
  const person = googleAccount({ fake_expires_in: "60" });
  await connect(svc, session, person, [bot.clientId]);
  return { session, bot, person, subject: await userTokenFor(svc, bot, session) };
}

describe("connecting an account", () => {
  it("asks Google for the vault's scopes with offline access, keeps the tokens sealed and lists no token", async () => {
    const session = await signUp(svc);
    const bot = await agent(svc);
    const person = googleAccount();
    const { atProvider, landing } = await connect(svc, session, person, [bot.clientId]);
    // The sign-in's scopes and the vault's, a refresh token asked for (Google: access_type=offline, prompt=consent),
    // and the vault's own callback (registered at Google beside the sign-in's).
    expect(atProvider.searchParams.get("scope")!.split(" ")).toEqual(
      expect.arrayContaining(["openid", "email", "profile", CALENDAR]),
    );
    expect(atProvider.searchParams.get("access_type")).toBe("offline");
    expect(atProvider.searchParams.get("prompt")).toBe("consent");
    expect(atProvider.searchParams.get("redirect_uri")).toBe(`${ISSUER}/user/connections/google/callback`);
    expect(`${landing.origin}${landing.pathname}`).toBe(APP);
    expect(landing.searchParams.get("connected")).toBe("google");

    // Threat: the provider's tokens reaching the browser or lying in D1 in the clear.
    const listed = await svc.get("/user/connections", session.accessToken);
    const text = await listed.text();
    expect(text).not.toMatch(/access-|refresh-/);
    const [connection] = (JSON.parse(text) as { items: Connection[] }).items;
    expect(connection).toMatchObject({
      provider: "google",
      providerUserId: person.fake_id,
      email: person.fake_email,
      clients: [{ clientId: bot.clientId, clientName: "Calendar agent", lastUsedAt: null, uses: 0 }],
    });
    expect(connection!.scopes).toContain(CALENDAR);
    const row = await storedRow(session.user.id);
    expect(row!.sealed).toMatch(/^v2\.[0-9a-f]+$/);
    expect(row!.sealed).not.toMatch(/access-|refresh-/);
    // Connecting is no sign-in method: no identity was linked.
    const identities = await userD1(session.user.id)
      .prepare("SELECT count(*) AS n FROM user_providers WHERE user_id = ?")
      .bind(session.user.id)
      .first<{ n: number }>();
    expect(identities!.n).toBe(0);
    expect(await auditTypesOf(session.user.id)).toContain("vault.connected");
  });

  it("completes only in the browser that opened the start URL, and the start URL once", async () => {
    const session = await signUp(svc);
    const { url, atProvider, cookie } = await startConnection(svc, session);
    // Threat: the start URL forwarded to someone else, who would connect their account to this user.
    await expectError(await openIn(svc, url), 400, "invalid-state");
    for (const [name, value] of Object.entries(googleAccount())) atProvider.searchParams.set(name, value);
    const { env } = await import("cloudflare:test");
    const callback = location(await env.OUTBOUND!.fetch(atProvider.toString(), { redirect: "manual" }));
    // Threat: login CSRF's twin, the callback opened in a browser that did not start it: nothing is kept.
    const elsewhere = location(await openIn(svc, callback));
    expect(elsewhere.searchParams.get("error")).toBe("invalid-state");
    const here = location(await openIn(svc, callback, cookie));
    expect(here.searchParams.get("connected")).toBe("google");
    // The sign-in's callback refuses a connection's state (it would sign in or link an identity).
    expect(await connectionsOf(session.accessToken)).toHaveLength(1);
  });

  it("refuses bad requests with the catalogue's errors, and an impersonated session with 403", async () => {
    const session = await signUp(svc);
    const plain = await newClient(svc, { clientName: "No vault" });
    const cases: [Response, number, string][] = [
      [await svc.post("/user/connections/google", {}), 401, "unauthorized"],
      [await svc.post("/user/connections/nope", {}, session.accessToken), 409, "disabled-endpoint"],
      // GitHub is switched on for sign-in, but the fake GitHub is not asked for here: the vault needs the provider.
      [
        await svc.post(
          "/user/connections/google",
          { redirectTo: "https://evil.example" },
          session.accessToken,
        ),
        400,
        "redirectTo-not-allowed",
      ],
      // Threat: consent given to a client an admin never allowed the provider.
      [
        await svc.post("/user/connections/google", { clientIds: [plain.clientId] }, session.accessToken),
        400,
        "invalid-request",
      ],
      [
        await svc.post("/user/connections/google", { clientIds: "x" }, session.accessToken),
        400,
        "invalid-request",
      ],
      [await svc.post("/user/connections/google", { other: 1 }, session.accessToken), 400, "invalid-request"],
      [
        await svc.request("DELETE", "/user/connections/google", { token: session.accessToken }),
        404,
        "not-found",
      ],
      [await svc.get("/user/connections/google/start?state=forged"), 400, "invalid-state"],
      [
        await service({ ...VAULT_ON, AUTH_TOKEN_VAULT_ENABLED: "false" }).get(
          "/user/connections",
          session.accessToken,
        ),
        409,
        "disabled-endpoint",
      ],
    ];
    for (const [response, status, error] of cases) await expectError(response, status, error);
    // Threat: a support engineer impersonating the user connects an account of theirs to the user's agents.
    const config = getConfig({ ...svc.env });
    const impersonated = await signAccessToken(config, session.user.id, {}, Date.now(), undefined, {
      act: { sub: "support@example.com" },
    } as never);
    await expectError(await svc.post("/user/connections/google", {}, impersonated), 403, "forbidden");
    // Threat: an agent consenting for itself with the token its user gave it: only the person's own session may.
    const bot = await agent(svc);
    const agentToken = await userTokenFor(svc, bot, session);
    const selfServed = await svc.post("/user/connections/google", { clientIds: [bot.clientId] }, agentToken);
    await expectError(selfServed, 401, "unauthorized");
    // The admin API takes only providers the service knows for `vaultProviders`.
    const bad = await svc.request("POST", "/admin/oauth2/clients", {
      headers: ADMIN,
      json: {
        clientName: "x",
        redirectUris: [],
        grantTypes: ["client_credentials"],
        vaultProviders: ["myspace"],
      },
    });
    await expectError(bad, 400, "invalid-request");
  });
});

describe("the agent's exchange (RFC 8693, audience=provider:google)", () => {
  it("gives the agent Google's current token, audited, and the account center's list says who used it", async () => {
    const session = await signUp(svc);
    const bot = await agent(svc);
    const person = googleAccount();
    await connect(svc, session, person, [bot.clientId]);
    const subject = await userTokenFor(svc, bot, session);
    const answer = await exchangeForGoogle(svc, bot, subject);
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      issued_token_type: ACCESS_TOKEN,
      token_type: "Bearer",
      access_token: expect.stringMatching(new RegExp(`^access-${person.fake_id}-ok-`)),
      scope: expect.stringContaining(CALENDAR),
    });
    expect(body.expires_in).toBeGreaterThan(3500);
    // Threat: the refresh token leaving the service. The answer has none.
    expect(body.refresh_token).toBeUndefined();
    // It is Google's real token: Google's userinfo answers with it.
    const { env } = await import("cloudflare:test");
    const info = await env.OUTBOUND!.fetch("https://oidc.fake/userinfo", {
      headers: { authorization: `Bearer ${body.access_token}` },
    });
    expect(((await info.json()) as { sub: string }).sub).toBe(person.fake_id);
    const [listed] = await connectionsOf(session.accessToken);
    expect(listed!.clients[0]).toMatchObject({
      clientId: bot.clientId,
      uses: 1,
      lastUsedAt: expect.any(String),
    });
    expect(await auditTypesOf(session.user.id)).toContain("vault.released");
    // A narrower scope is fine; a wider one is not.
    expect((await exchangeForGoogle(svc, bot, subject, { scope: CALENDAR })).status).toBe(200);
    await oauth2Error(
      await exchangeForGoogle(svc, bot, subject, { scope: "https://mail.google.com/" }),
      400,
      "invalid_scope",
    );
  });

  it("refreshes a token about to end once for two exchanges at once, keeping the rotated refresh token", async () => {
    const { bot, person, subject } = await aConnectionToRenew();
    // Threat: two refreshes racing with one rotating refresh token: the second is refused by Google (or revokes the
    // grant), and whichever wrote last may keep the dead token. One lease, one refresh.
    const both = await Promise.all([
      exchangeForGoogle(svc, bot, subject),
      exchangeForGoogle(svc, bot, subject),
    ]);
    expect(both.map((response) => response.status)).toEqual([200, 200]);
    expect((await countsAtGoogle(person.fake_id)).refreshes).toBe(1);
    // The refresh token kept is the rotated one: the next refresh succeeds (a spent one is invalid_grant at Google).
    expect((await exchangeForGoogle(svc, bot, subject)).status).toBe(200);
    expect((await countsAtGoogle(person.fake_id)).refreshes).toBe(2);
  });

  it("answers temporarily_unavailable when Google is down at refresh, with the stored token untouched", async () => {
    const { session, bot, person, subject } = await aConnectionToRenew();
    const before = await storedRow(session.user.id);
    await googleDown(person.fake_id, true);
    try {
      const down = await exchangeForGoogle(svc, bot, subject);
      expect(down.headers.get("retry-after")).toMatch(/^\d+$/);
      await oauth2Error(down, 503, "temporarily_unavailable");
      expect(await storedRow(session.user.id)).toEqual(before);
    } finally {
      await googleDown(person.fake_id, false);
    }
    // The same refresh token still works: nothing was spent or overwritten.
    expect((await exchangeForGoogle(svc, bot, subject)).status).toBe(200);
    expect((await countsAtGoogle(person.fake_id)).refreshes).toBe(1);
  });

  // Threat: the provider's refusal answered as its outage. Before, only `invalid_grant` was a refusal: a provider
  // answering `invalid_client`, `unauthorized_client` or a bare 400 was "down", and the agent was told 503
  // temporarily_unavailable with Retry-After, to retry forever a refresh that will never work. And the other way
  // round: a rate limit (429) or `temporarily_unavailable` must stay the retry, not end the connection.
  it("answers invalid_grant when Google refuses the refresh with another 4xx, and 503 only when it says not now", async () => {
    const { session, bot, person, subject } = await aConnectionToRenew();
    const before = await storedRow(session.user.id);
    /** The service with Google's token endpoint answering `answer`; the other fake endpoints as they are. */
    const googleAnswering = (answer: () => Response) =>
      service({
        ...VAULT_ON,
        AUTH_OAUTH2_PROVIDER_RESOURCES: API,
        OUTBOUND: {
          fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
            const request = new Request(input, init);
            return request.url === "https://oidc.fake/token" ? answer() : env.OUTBOUND!.fetch(request);
          },
        },
      });
    const refusals = [
      ["400 naming no error", () => new Response("bad request", { status: 400 })],
      ["403 with an HTML page", () => new Response("<html>no</html>", { status: 403 })],
    ] as const;
    for (const [what, answer] of refusals) {
      const refused = await exchangeForGoogle(googleAnswering(answer), bot, subject);
      expect(refused.headers.get("retry-after"), what).toBeNull();
      const body = await oauth2Error(refused, 400, "invalid_grant");
      expect(body.error_description, what).toMatch(/connection has ended/);
    }
    // Threat: the service's own client credentials refused (a secret rotated at Google, the app removed there) told the
    // agent the user's connection had ended, and the user was sent to connect again, which meets the same refusal:
    // the operator's fault, answered as such, with no Retry-After (no retry helps until it is fixed).
    const serviceRefused = [
      ["401 invalid_client", () => Response.json({ error: "invalid_client" }, { status: 401 })],
      ["400 unauthorized_client", () => Response.json({ error: "unauthorized_client" }, { status: 400 })],
    ] as const;
    for (const [what, answer] of serviceRefused) {
      const refused = await exchangeForGoogle(googleAnswering(answer), bot, subject);
      expect(refused.headers.get("retry-after"), what).toBeNull();
      const body = await oauth2Error(refused, 500, "server_error");
      expect(body.error_description, what).toMatch(/refused this service's own client credentials/);
      expect(body.error_description, what).not.toMatch(/connection has ended/);
    }
    const notNow = [
      ["429", () => Response.json({ error: "slow_down" }, { status: 429 })],
      [
        "400 temporarily_unavailable",
        () => Response.json({ error: "temporarily_unavailable" }, { status: 400 }),
      ],
    ] as const;
    for (const [what, answer] of notNow) {
      const later = await exchangeForGoogle(googleAnswering(answer), bot, subject);
      expect(later.headers.get("retry-after"), what).toMatch(/^\d+$/);
      await oauth2Error(later, 503, "temporarily_unavailable");
    }
    // Neither kind changed what is stored: Google answering again, the same refresh token renews the token.
    expect(await storedRow(session.user.id)).toEqual(before);
    expect((await exchangeForGoogle(svc, bot, subject)).status).toBe(200);
    expect((await countsAtGoogle(person.fake_id)).refreshes).toBe(1);
  });

  it("refuses a client not allowed, a user who did not consent, and a revoked connection", async () => {
    const session = await signUp(svc);
    const bot = await agent(svc);
    const other = await agent(svc, { clientName: "Other agent" });
    const notAllowed = await agent(svc, { clientName: "Not allowed", vaultProviders: [] });
    const person = googleAccount();
    await connect(svc, session, person, [bot.clientId]);
    // Threat: a client the admin never allowed Google asks for it.
    await oauth2Error(
      await exchangeForGoogle(svc, notAllowed, await userTokenFor(svc, notAllowed, session)),
      400,
      "invalid_target",
    );
    // Threat: an allowed client the user never let use the connection.
    await oauth2Error(
      await exchangeForGoogle(svc, other, await userTokenFor(svc, other, session)),
      400,
      "invalid_grant",
    );
    await oauth2Error(
      await exchangeForGoogle(svc, bot, await userTokenFor(svc, bot, session), {
        audience: "provider:github",
      }),
      400,
      "invalid_target",
    );
    // With the vault switched off, nobody gets anything, whatever was stored.
    const off = service({
      ...VAULT_ON,
      AUTH_TOKEN_VAULT_ENABLED: "false",
      AUTH_OAUTH2_PROVIDER_RESOURCES: API,
    });
    await oauth2Error(
      await exchangeForGoogle(off, bot, await userTokenFor(svc, bot, session)),
      400,
      "invalid_target",
    );
    const subject = await userTokenFor(svc, bot, session);
    expect((await exchangeForGoogle(svc, bot, subject)).status).toBe(200);
    // Threat: a connection the user removed still feeding the agent. Removed here and revoked at Google (RFC 7009).
    const removed = await svc.request("DELETE", "/user/connections/google", { token: session.accessToken });
    expect(await removed.json()).toEqual({ revokedAtProvider: true });
    expect((await countsAtGoogle(person.fake_id)).revocations).toBe(1);
    expect(await connectionsOf(session.accessToken)).toEqual([]);
    await oauth2Error(await exchangeForGoogle(svc, bot, subject), 400, "invalid_grant");
    expect(await auditTypesOf(session.user.id)).toEqual(
      expect.arrayContaining(["vault.disconnected", "vault.refused"]),
    );
  });

  it("takes only the agent's own token, straight from the user's grant, with its DPoP proof when bound", async () => {
    const session = await signUp(svc);
    const bot = await agent(svc, { resources: [API] });
    await connect(svc, session, googleAccount(), [bot.clientId]);
    // Threat: a first-party session token (or an old system's) handed to the agent: not an OAuth2 token of ours.
    await oauth2Error(await exchangeForGoogle(svc, bot, session.accessToken), 400, "invalid_grant");
    // Threat: a token someone already acts with (an exchanged one; an impersonation's carries `act` as well).
    const own = await userTokenFor(svc, bot, session);
    const exchanged = await exchangeForGoogle(svc, bot, own, {
      audience: undefined,
      requested_token_type: undefined,
      resource: API,
    });
    expect(exchanged.status).toBe(200);
    const withAct = ((await exchanged.json()) as { access_token: string }).access_token;
    await oauth2Error(await exchangeForGoogle(svc, bot, withAct), 400, "invalid_grant");
    // Threat: a DPoP-bound token stolen and sent without a proof by its key.
    const key = await proofKey();
    const tokenEndpoint = `${ISSUER}/oauth2/token`;
    const bound = await userTokenFor(svc, bot, session, { dpop: await proof(key, "POST", tokenEndpoint) });
    await oauth2Error(await exchangeForGoogle(svc, bot, bound), 400, "invalid_grant");
    const thief = await proofKey();
    await oauth2Error(
      await exchangeForGoogle(svc, bot, bound, {}, { dpop: await proof(thief, "POST", tokenEndpoint) }),
      400,
      "invalid_grant",
    );
    const withProof = await exchangeForGoogle(
      svc,
      bot,
      bound,
      {},
      { dpop: await proof(key, "POST", tokenEndpoint) },
    );
    expect(withProof.status).toBe(200);
    // The provider's token is Google's: not ours to bind, so Bearer whatever the request carried.
    expect(((await withProof.json()) as { token_type: string }).token_type).toBe("Bearer");
    // Threat: an expired subject token (the agent's copy outliving the person's session) still opening Google.
    const expiring = await userTokenFor(svc, bot, session);
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(Date.now() + 3 * 3600_000);
      await oauth2Error(await exchangeForGoogle(svc, bot, expiring), 400, "invalid_grant");
    } finally {
      vi.useRealTimers();
    }
  });
});
