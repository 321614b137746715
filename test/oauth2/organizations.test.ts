// The organization a client may act in (contract organizations.md §1), through the authorization server's HTTP
// surface: the consent page's picker, the code → grant → tokens chain, introspection, userinfo, refresh after a
// removal, the external login UI's `orgId`. Organizations and memberships are written straight into the home
// database: their own routes are tested in test/orgs/.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { decodeJwt, expectError, signUp, type WireSession } from "../helpers";
import { Browser, signIn } from "./page-browser";
import {
  authorize,
  basic,
  exchange,
  form,
  location,
  newClient,
  oauth2Error,
  postForm,
  provider,
  REDIRECT_URI,
  requestIdOf,
  type TokenAnswer,
} from "./support";

const svc = provider();
const HASURA = "https://hasura.io/jwt/claims";
type Client = Awaited<ReturnType<typeof newClient>>;

async function newOrg(name = "Acme") {
  const id = crypto.randomUUID();
  const slug = `org-${id.slice(0, 8)}`;
  await env.DB.prepare(
    "INSERT INTO organizations (id, name, slug, created_at, updated_at) VALUES (?, ?, ?, 0, 0)",
  )
    .bind(id, name, slug)
    .run();
  return { id, slug, name };
}

async function addMember(orgId: string, userId: string, role = "member", active = true) {
  await env.DB.prepare(
    "INSERT INTO org_members (org_id, user_id, role, source, active, created_at, updated_at) VALUES (?, ?, ?, 'admin', ?, 0, 0)",
  )
    .bind(orgId, userId, role, active ? 1 : 0)
    .run();
}

const removeMember = (orgId: string, userId: string) =>
  env.DB.prepare("DELETE FROM org_members WHERE org_id = ? AND user_id = ?").bind(orgId, userId).run();

/** A browser signed in to the page, at the consent screen of a new request; the page's HTML too. */
async function atConsent(client: Client, session: WireSession, params: Record<string, string> = {}) {
  const browser = new Browser(svc);
  const response = await authorize(svc, client, { scope: "openid email offline_access graphql", ...params });
  const requestId = await requestIdOf(response);
  await browser.get(location(response).toString());
  const page = await signIn(browser, requestId, session.user.email);
  return { browser, requestId, page, html: await page.text() };
}

/** The authorization request sent by the browser itself, with its session cookie (prompt=none is answered at once). */
const browserAuthorize = (browser: Browser, client: Client, params: Record<string, string>) =>
  browser.get(
    `/oauth2/authorize?${form({
      client_id: client.clientId,
      redirect_uri: REDIRECT_URI,
      response_type: "code",
      scope: "openid email",
      ...params,
    })}`,
  );

async function allow(browser: Browser, requestId: string, organization?: string) {
  return browser.post("/oauth2/interaction/consent", {
    request_id: requestId,
    decision: "allow",
    ...(organization !== undefined ? { organization } : {}),
  });
}

async function tokensOf(client: Client, allowed: Response): Promise<TokenAnswer> {
  expect(allowed.status).toBe(303);
  const code = location(allowed).searchParams.get("code")!;
  const response = await exchange(svc, client, code);
  expect(response.status).toBe(200);
  return (await response.json()) as TokenAnswer;
}

const introspect = async (client: Client, token: string) =>
  (await postForm(svc, "/oauth2/introspect", { token }, basic(client))).json() as Promise<
    Record<string, unknown>
  >;

const refresh = async (client: Client, refreshToken: string) => {
  const response = await postForm(
    svc,
    "/oauth2/token",
    { grant_type: "refresh_token", refresh_token: refreshToken },
    basic(client),
  );
  expect(response.status).toBe(200);
  return (await response.json()) as TokenAnswer;
};

describe("the organization a client acts in", () => {
  it("offers the user's active organizations on the consent page, none preselected", async () => {
    const client = await newClient(svc);
    const session = await signUp(svc);
    const mine = await newOrg("Mine & Co <b>");
    const suspended = await newOrg("Suspended Org");
    const foreign = await newOrg("Someone Else's Org");
    await addMember(mine.id, session.user.id, "admin");
    await addMember(suspended.id, session.user.id, "member", false);
    const { html } = await atConsent(client, session);
    expect(html).toContain('<select id="organization" name="organization">');
    expect(html).toMatch(/<option value="" selected>None: only your own account<\/option>/);
    // The org's name is escaped (a member chose it: script injection into the page).
    expect(html).toContain(`<option value="${mine.id}">Mine &amp; Co &lt;b&gt; (admin)</option>`);
    expect(html).not.toContain(suspended.id);
    expect(html).not.toContain(foreign.id);
  });

  it("shows no picker to a user in no organization, whose tokens carry no org", async () => {
    const client = await newClient(svc);
    const session = await signUp(svc);
    const { browser, requestId, html } = await atConsent(client, session);
    expect(html).not.toContain('name="organization"');
    const tokens = await tokensOf(client, await allow(browser, requestId));
    expect(decodeJwt(tokens.access_token).payload.org_id).toBeUndefined();
  });

  it("puts the picked org on the tokens, their Hasura claims, introspection and userinfo", async () => {
    const client = await newClient(svc);
    const session = await signUp(svc);
    const org = await newOrg();
    await addMember(org.id, session.user.id, "admin");
    const { browser, requestId } = await atConsent(client, session);
    const tokens = await tokensOf(client, await allow(browser, requestId, org.id));
    const claims = decodeJwt(tokens.access_token).payload;
    expect(claims.org_id).toBe(org.id);
    expect(claims[HASURA]).toMatchObject({
      "x-hasura-user-id": session.user.id,
      "x-hasura-org-id": org.id,
      "x-hasura-org-role": "admin",
    });
    expect(await introspect(client, tokens.access_token)).toMatchObject({ active: true, org_id: org.id });
    expect(await introspect(client, tokens.refresh_token!)).toMatchObject({ active: true, org_id: org.id });
    const userinfo = await svc.request("GET", "/oauth2/userinfo", {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(await userinfo.json()).toMatchObject({ sub: session.user.id, org_id: org.id });
    // A plain refresh keeps it.
    const next = await refresh(client, tokens.refresh_token!);
    expect(decodeJwt(next.access_token).payload.org_id).toBe(org.id);
  });

  it("picking none gives tokens without an org, even to a member", async () => {
    const client = await newClient(svc);
    const session = await signUp(svc);
    const org = await newOrg();
    await addMember(org.id, session.user.id);
    const { browser, requestId } = await atConsent(client, session);
    const tokens = await tokensOf(client, await allow(browser, requestId, ""));
    const claims = decodeJwt(tokens.access_token).payload;
    expect(claims.org_id).toBeUndefined();
    expect(claims[HASURA]).not.toHaveProperty("x-hasura-org-id");
    expect(await introspect(client, tokens.access_token)).not.toHaveProperty("org_id");
  });

  // Threat: a tampered consent form naming an org the user is not in (privilege escalation into another tenant),
  // or one whose membership SCIM suspended. Refused with 403 and no code, rather than quietly downgraded.
  it("refuses an org the user is not an active member of (a tampered form)", async () => {
    const client = await newClient(svc);
    const session = await signUp(svc);
    const mine = await newOrg();
    const foreign = await newOrg();
    const suspended = await newOrg();
    await addMember(mine.id, session.user.id);
    await addMember(suspended.id, session.user.id, "owner", false);
    const { browser, requestId } = await atConsent(client, session);
    for (const orgId of [foreign.id, suspended.id, "not-an-org", mine.slug]) {
      const refused = await allow(browser, requestId, orgId);
      expect(refused.status, orgId).toBe(403);
      expect(await refused.text()).toContain("You are not an active member of that organization.");
    }
    // The request still stands: the honest choice completes it.
    const tokens = await tokensOf(client, await allow(browser, requestId, mine.id));
    expect(decodeJwt(tokens.access_token).payload.org_id).toBe(mine.id);
  });

  it("preselects the org the request names, by id or slug, and completes into it once consented", async () => {
    const client = await newClient(svc);
    const session = await signUp(svc);
    const org = await newOrg();
    const other = await newOrg();
    await addMember(org.id, session.user.id);
    await addMember(other.id, session.user.id);
    const { browser, requestId, html } = await atConsent(client, session, { organization: org.slug });
    expect(html).toContain(`<option value="${org.id}" selected>`);
    expect(html).not.toContain(`<option value="${other.id}" selected>`);
    await tokensOf(client, await allow(browser, requestId, org.id));

    // Consent is remembered: a request naming an org the user is in completes into it without a page…
    const again = await authorize(svc, client, {
      scope: "openid email offline_access graphql",
      organization: other.id,
    });
    const silent = await browser.get(location(again).toString());
    const tokens = await tokensOf(client, silent);
    expect(decodeJwt(tokens.access_token).payload.org_id).toBe(other.id);
    // …and prompt=none too; naming an org the user is not in asks (or, with prompt=none, answers consent_required).
    const foreign = await newOrg();
    const none = await browserAuthorize(browser, client, { organization: org.id, prompt: "none" });
    const code = location(none).searchParams.get("code");
    const viaNone = (await (await exchange(svc, client, code!)).json()) as TokenAnswer;
    expect(decodeJwt(viaNone.access_token).payload.org_id).toBe(org.id);
    const asked = await authorize(svc, client, { scope: "openid email", organization: foreign.id });
    const page = await browser.get(location(asked).toString());
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(`<option value="" selected>`);
    const refusedSilently = await browserAuthorize(browser, client, {
      organization: foreign.slug,
      prompt: "none",
    });
    const back = location(refusedSilently);
    expect(back.searchParams.get("error")).toBe("consent_required");
  });

  // Threat: a member removed from the org (or suspended by SCIM) keeps acting in it through a client's tokens.
  // Introspection sees it at once; the next refresh's token has no org (contract: removal takes effect at the next
  // refresh), and the grant forgets the org, so a later re-admission does not revive the old consent.
  it("drops the org at the next refresh after the member is removed, and for good", async () => {
    const client = await newClient(svc);
    const session = await signUp(svc);
    const org = await newOrg();
    await addMember(org.id, session.user.id, "owner");
    const { browser, requestId } = await atConsent(client, session);
    const tokens = await tokensOf(client, await allow(browser, requestId, org.id));
    await removeMember(org.id, session.user.id);

    const seen = await introspect(client, tokens.access_token);
    expect(seen.active).toBe(true);
    expect(seen).not.toHaveProperty("org_id");
    const next = await refresh(client, tokens.refresh_token!);
    const claims = decodeJwt(next.access_token).payload;
    expect(claims.org_id).toBeUndefined();
    expect(claims[HASURA]).not.toHaveProperty("x-hasura-org-id");

    await addMember(org.id, session.user.id, "owner");
    await new Promise((resolve) => setTimeout(resolve, 50)); // the grant's update runs after the answer
    const later = await refresh(client, next.refresh_token!);
    expect(decodeJwt(later.access_token).payload.org_id).toBeUndefined();
  });

  it("lets an external login UI complete into an org the user is a member of, and no other", async () => {
    const client = await newClient(svc);
    const session = await signUp(svc);
    const org = await newOrg();
    const foreign = await newOrg();
    await addMember(org.id, session.user.id);
    const requestId = await requestIdOf(
      await authorize(svc, client, { scope: "openid offline_access", organization: org.slug }),
    );
    const described = await svc.request("GET", `/oauth2/login?request_id=${requestId}`);
    expect(await described.json()).toMatchObject({ organization: org.slug });
    // Threat: the UI (or whoever holds the user's access token) naming another tenant's org.
    await expectError(
      await svc.post("/oauth2/login", { requestId, orgId: foreign.id }, session.accessToken),
      403,
      "not-org-member",
    );
    const done = await svc.post("/oauth2/login", { requestId, orgId: org.id }, session.accessToken);
    expect(done.status).toBe(200);
    const code = new URL(((await done.json()) as { redirectUri: string }).redirectUri).searchParams.get(
      "code",
    );
    const tokens = (await (await exchange(svc, client, code!)).json()) as TokenAnswer;
    expect(decodeJwt(tokens.access_token).payload.org_id).toBe(org.id);
  });

  it("keeps a device's consent page without a picker (device grants carry no org)", async () => {
    const client = await newClient(svc, {
      tokenEndpointAuthMethod: "none",
      grantTypes: ["urn:ietf:params:oauth:grant-type:device_code", "refresh_token"],
      redirectUris: [],
    });
    const session = await signUp(svc);
    const org = await newOrg();
    await addMember(org.id, session.user.id);
    const started = await postForm(svc, "/oauth2/device_authorization", {
      client_id: client.clientId,
      scope: "openid",
    });
    const { user_code } = (await started.json()) as { user_code: string };
    const browser = new Browser(svc);
    const entered = await browser.post("/oauth2/device", { user_code });
    const requestId = location(entered).searchParams.get("request_id")!;
    await browser.get(location(entered).toString());
    const html = await (await signIn(browser, requestId, session.user.email)).text();
    expect(html).toContain(user_code);
    expect(html).not.toContain('name="organization"');
  });

  it("answers a malformed organization parameter back to the client", async () => {
    const client = await newClient(svc);
    const response = await authorize(svc, client, { organization: "x".repeat(101) });
    expect(location(response).searchParams.get("error")).toBe("invalid_request");
    await oauth2Error(
      await svc.request("GET", "/oauth2/authorize?client_id=nope&organization=a"),
      401,
      "invalid_client",
    );
  });
});
