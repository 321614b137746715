import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { expectError, mailbox, signUp, uniqueAddress, uniqueEmail } from "../helpers";
import { authnRequestOf } from "../sso/saml-support/connection";
import { idpMetadataXml, signedResponse, toBase64 } from "../sso/saml-support/idp";
import {
  ADMIN,
  atIdp,
  IDP,
  oidcConnection,
  orgWithDomain,
  personAtIdp,
  setTxtRecord,
  ssoService,
  uniqueDomain,
} from "../sso/support";
import { Browser, locationOf, makeLink, ORIGIN, shownValue } from "./support";

// Contract operators.md §5, the IT admin's side over HTTP: a link walks them through a domain (TXT record, check), a
// SAML connection from their IdP's metadata tested by a real signed round trip, an OIDC connection tested at a real
// OIDC provider, and a SCIM token; and every bound the link sets holds (off until tested and enabled, only the link's
// domains, never another org's or an existing connection, no admin role through SCIM, no cross-site form).

const svc = ssoService();

interface Connection {
  id: string;
  enabled: boolean;
  domains: string[] | null;
  testedAt: string | null;
  lastTest: { ok: boolean; email?: string; error?: string } | null;
}

async function connectionOf(orgId: string, id: string): Promise<Connection> {
  const response = await svc.request("GET", `/admin/orgs/${orgId}/connections/${id}`, { headers: ADMIN });
  expect(response.status).toBe(200);
  return (await response.json()) as Connection;
}

/** An org with a link; the IT admin's browser on it, with a domain verified through the link's pages. */
async function linkWithDomain(intents = ["domains", "sso", "scim"]) {
  const org = await orgWithDomain(svc, { verify: false });
  const link = await makeLink(svc, org.orgId, org.owner.accessToken, { intents });
  const browser = new Browser(svc, uniqueAddress());
  await browser.open(link.url);
  const domain = uniqueDomain("it");
  const added = await browser.post("/setup/domains", { domain });
  expect(added.status).toBe(303);
  const page = await (await browser.get("/setup/domains")).text();
  const txtName = shownValue(page, "TXT record name");
  const txtValue = shownValue(page, "TXT record value");
  expect(txtName).toBe(`_edge-auth-verify.${domain}`);
  const early = locationOf(await browser.post("/setup/domains/check", { domain }));
  expect(early.searchParams.get("result")).toBe("domain-verification-failed");
  await setTxtRecord(txtName, [txtValue]);
  const checked = locationOf(await browser.post("/setup/domains/check", { domain }));
  expect(checked.searchParams.get("result")).toBe("verified");
  return { org, link, browser, domain };
}

/** The SAML guide's form, sent with the IdP's metadata: the new connection's id. */
async function samlThroughLink(browser: Browser) {
  const guide = await browser.get("/setup/sso/new?idp=okta");
  const page = await guide.text();
  expect(guide.status).toBe(200);
  const connectionId = /name="connectionId" value="([^"]+)"/.exec(page)![1]!;
  // The exact values the IdP's fields take, under the names Okta gives them.
  expect(shownValue(page, "Single sign-on URL")).toBe(
    `http://localhost:8787/auth/v1/sso/saml/${connectionId}/acs`,
  );
  expect(shownValue(page, "Audience URI (SP Entity ID)")).toBe(
    `http://localhost:8787/auth/v1/sso/saml/${connectionId}/metadata`,
  );
  const made = await browser.post("/setup/sso", { idp: "okta", connectionId, metadataXml: idpMetadataXml() });
  expect(made.status, await made.clone().text()).toBe(303);
  expect(locationOf(made).pathname).toBe(`/auth/v1/setup/sso/${connectionId}`);
  return connectionId;
}

/** "Test the connection": the AuthnRequest, the IdP's signed answer posted to the ACS, the bounce, the landing. */
async function samlTest(browser: Browser, connectionId: string, email: string) {
  const toIdp = await browser.get(`/setup/sso/${connectionId}/test`);
  expect(toIdp.status).toBe(302);
  const requestId = /\sID="([^"]+)"/.exec(await authnRequestOf(locationOf(toIdp)))![1]!;
  const base = `http://localhost:8787/auth/v1/sso/saml/${connectionId}`;
  const xml = await signedResponse({
    spEntityId: `${base}/metadata`,
    acsUrl: `${base}/acs`,
    nameId: email,
    inResponseTo: requestId,
  });
  // The IdP's auto-posted form: cross-site, no cookie.
  const acs = await svc.request("POST", `${base}/acs`, {
    body: new URLSearchParams({ SAMLResponse: toBase64(xml) }).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
  expect(acs.status, await acs.clone().text()).toBe(303);
  const landed = await browser.get(locationOf(acs).href);
  expect(landed.status).toBe(302);
  expect(locationOf(landed).pathname).toBe(`/auth/v1/setup/sso/${connectionId}/tested`);
  const back = await browser.get(locationOf(landed).href);
  expect(back.status).toBe(303);
  return (await browser.get(locationOf(back).pathname.replace("/auth/v1", ""))).text();
}

describe("SAML through a link", () => {
  it("a connection made from the IdP's metadata stays off until its round trip succeeded and an owner enabled it", async () => {
    const { org, browser, domain } = await linkWithDomain();
    const connectionId = await samlThroughLink(browser);
    let connection = await connectionOf(org.orgId, connectionId);
    expect(connection).toMatchObject({ enabled: false, domains: [domain], testedAt: null, lastTest: null });
    // Threat: an owner (or a stolen owner token) turning on a connection nobody proved works: refused until tested.
    await expectError(
      await svc.request("PATCH", `/orgs/${org.orgId}/connections/${connectionId}`, {
        token: org.owner.accessToken,
        json: { enabled: true },
      }),
      409,
      "sso-connection-untested",
    );
    // Not enabled: no sign-in goes through it, only tests.
    await expectError(
      await svc.post("/sso/start", { email: `x@${domain}` }),
      404,
      "sso-connection-not-found",
    );

    // An IdP asserting an address outside the link's domains: a failed test, recorded and shown.
    const failed = await samlTest(browser, connectionId, "ceo@elsewhere.test");
    expect(failed).toContain("The last test failed");
    expect((await connectionOf(org.orgId, connectionId)).lastTest).toMatchObject({
      ok: false,
      error: "sso-email-outside-domains",
    });

    const page = await samlTest(browser, connectionId, `it.admin@${domain}`);
    expect(page).toContain(`The test succeeded: your identity provider vouched for it.admin@${domain}`);
    connection = await connectionOf(org.orgId, connectionId);
    expect(connection).toMatchObject({ enabled: false, lastTest: { ok: true, email: `it.admin@${domain}` } });
    expect(connection.testedAt).not.toBeNull();
    // The test signed nobody in and made nobody a member.
    const members = (await (await svc.get(`/orgs/${org.orgId}/members`, org.owner.accessToken)).json()) as {
      items: unknown[];
    };
    expect(members.items).toHaveLength(1);
    // The owner is mailed, once.
    const mails = (await mailbox(svc, org.owner.user.email)).filter((mail) =>
      mail.subject.includes("ready to turn on"),
    );
    expect(mails).toHaveLength(1);
    expect(mails[0]!.text).toContain(connectionId);

    const enabled = await svc.request("PATCH", `/orgs/${org.orgId}/connections/${connectionId}`, {
      token: org.owner.accessToken,
      json: { enabled: true },
    });
    expect(enabled.status).toBe(200);
    // The owner sees the progress: the domain, the tested connection.
    const links = (await (await svc.get(`/orgs/${org.orgId}/setup-links`, org.owner.accessToken)).json()) as {
      items: { progress: { domainsVerified: string[]; connections: Connection[] } }[];
    };
    expect(links.items[0]!.progress).toMatchObject({
      domainsVerified: [domain],
      connections: [{ id: connectionId, enabled: true }],
    });
  });

  it("serves only the link's domains until an owner widens it", async () => {
    const { org, browser, domain } = await linkWithDomain();
    const connectionId = await samlThroughLink(browser);
    // The org's own domain, verified outside the link (by the operator here), is not the link connection's.
    await svc.request("POST", `/admin/orgs/${org.orgId}/domains/${org.domain}/verify`, { headers: ADMIN });
    await samlTest(browser, connectionId, `a@${org.domain}`);
    expect((await connectionOf(org.orgId, connectionId)).lastTest).toMatchObject({
      ok: false,
      error: "sso-email-outside-domains",
    });
    const widened = await svc.request("PATCH", `/orgs/${org.orgId}/connections/${connectionId}`, {
      token: org.owner.accessToken,
      json: { domains: null },
    });
    expect(((await widened.json()) as Connection).domains).toBeNull();
    await samlTest(browser, connectionId, `a@${org.domain}`);
    expect((await connectionOf(org.orgId, connectionId)).lastTest).toMatchObject({ ok: true });
    expect(domain).not.toBe(org.domain);
  });
});

describe("OIDC through a link", () => {
  it("the guide's redirect URI registered at a real OIDC provider; the test round trip goes through it", async () => {
    const { org, browser, domain } = await linkWithDomain(["domains", "sso"]);
    const guide = await (await browser.get("/setup/sso/new?idp=oidc")).text();
    const connectionId = /name="connectionId" value="([^"]+)"/.exec(guide)![1]!;
    const redirectUri = shownValue(guide, "Redirect URI (sign-in redirect, callback URL)");
    expect(redirectUri).toBe(`http://localhost:8787/auth/v1/sso/oidc/${connectionId}/callback`);
    const clientId = `client-${crypto.randomUUID().slice(0, 8)}`;
    const registered = await fetch(`${IDP}/__clients`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_id: clientId, client_secret: "it secret", redirect_uris: [redirectUri] }),
    });
    expect(registered.ok).toBe(true);
    const made = await browser.post("/setup/sso", {
      idp: "oidc",
      connectionId,
      issuer: IDP,
      clientId,
      clientSecret: "it secret",
    });
    expect(made.status, await made.clone().text()).toBe(303);
    const email = `oidc.admin@${domain}`;
    const sub = await personAtIdp({ email, email_verified: true });
    const toIdp = await browser.get(`/setup/sso/${connectionId}/test`);
    expect(toIdp.status).toBe(302);
    const callback = await atIdp(locationOf(toIdp).href, sub);
    const landed = await browser.get(callback);
    expect(locationOf(landed).pathname).toBe(`/auth/v1/setup/sso/${connectionId}/tested`);
    await browser.get(locationOf(landed).href);
    expect((await connectionOf(org.orgId, connectionId)).lastTest).toMatchObject({ ok: true, email });
  });
});

describe("domains", () => {
  it("the resolver down: the page says so and nothing changes (never a 5xx page)", async () => {
    const org = await orgWithDomain(svc, { verify: false });
    const link = await makeLink(svc, org.orgId, org.owner.accessToken, { intents: ["domains"] });
    // The same service with its DNS-over-HTTPS resolver unreachable.
    const browser = new Browser(
      ssoService({ AUTH_DNS_RESOLVER_URL: `${IDP}/no-resolver-here` }),
      uniqueAddress(),
    );
    await browser.open(link.url);
    const domain = uniqueDomain("down");
    await browser.post("/setup/domains", { domain });
    const checked = await browser.post("/setup/domains/check", { domain });
    expect(locationOf(checked).searchParams.get("result")).toBe("dns-unavailable");
    const page = await (
      await browser.get(
        `${locationOf(checked).pathname.replace("/auth/v1", "")}${locationOf(checked).search}`,
      )
    ).text();
    expect(page).toContain("The DNS lookup did not answer just now");
    expect(page).toContain("Not verified yet");
  });
});

describe("bounds", () => {
  it("a link reaches neither another org's connection nor one it did not make; steps outside its intents are refused", async () => {
    const { org, browser } = await linkWithDomain(["domains", "sso"]);
    const other = await orgWithDomain(svc);
    const theirs = await oidcConnection(svc, other);
    const existing = await oidcConnection(svc, org);
    for (const id of [theirs.id, existing.id]) {
      expect((await browser.get(`/setup/sso/${id}`)).status).toBe(404);
      expect((await browser.get(`/setup/sso/${id}/test`)).status).toBe(404);
    }
    // An id that exists is not taken over by a new connection under it (nothing edited or replaced).
    const reuse = await browser.post("/setup/sso", {
      idp: "saml",
      connectionId: existing.id,
      metadataXml: idpMetadataXml(),
    });
    expect(reuse.status).toBe(400);
    expect((await connectionOf(org.orgId, existing.id)).domains).toBeNull();
    const bad = await browser.post("/setup/sso", {
      idp: "saml",
      connectionId: "not-an-id",
      metadataXml: idpMetadataXml(),
    });
    expect(bad.status).toBe(400);
    // Bad input on the guide's form: the guide again with why (400), never a 5xx.
    const fresh = crypto.randomUUID();
    const forms: Record<string, string>[] = [
      { idp: "saml", connectionId: fresh },
      { idp: "saml", connectionId: fresh, metadataXml: "<not-metadata/>" },
      {
        idp: "saml",
        connectionId: fresh,
        metadataXml: idpMetadataXml(),
        metadataUrl: "https://idp.example.test/m",
      },
      { idp: "oidc", connectionId: fresh, issuer: "not a url", clientId: "c", clientSecret: "s" },
      { idp: "oidc", connectionId: fresh, issuer: "http://10.0.0.1/", clientId: "c", clientSecret: "s" },
      { idp: "nonsense", connectionId: fresh },
    ];
    for (const form of forms) {
      const answer = await browser.post("/setup/sso", form);
      expect(answer.status, JSON.stringify(form).slice(0, 80)).toBe(form.idp === "nonsense" ? 303 : 400);
    }
    expect((await browser.get("/setup/scim")).status).toBe(403);
    expect((await browser.post("/setup/scim", {})).status).toBe(403);
    // Threat: another site posting the IT admin's browser into a change (the cookie is the credential).
    expect(
      (await browser.post("/setup/domains", { domain: "evil.test" }, "https://evil.example")).status,
    ).toBe(403);
  });

  it("a SCIM token made through a link is shown once and gives no admin role", async () => {
    const { org, browser } = await linkWithDomain(["domains", "scim"]);
    const made = await browser.post("/setup/scim", {});
    const page = await made.text();
    expect(made.status).toBe(200);
    expect(made.headers.get("cache-control")).toBe("no-store");
    const token = shownValue(page, "Bearer token");
    expect(shownValue(page, "SCIM base URL")).toBe("http://localhost:8787/auth/v1/scim/v2");
    expect(await (await browser.get("/setup/scim")).text()).not.toContain(token);
    const scim = (method: string, path: string, json: unknown, bearer = token) =>
      svc.request(method, `/scim/v2${path}`, { token: bearer, json });
    const group = (displayName: string) => ({
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
      displayName,
    });
    expect((await scim("POST", "/Groups", group("Engineering"))).status).toBe(201);
    // Threat: the IT admin (or their IdP) making themselves the org's admins through the link's token.
    expect((await scim("POST", "/Groups", group("admin"))).status).toBe(403);
    const ownerToken = (await (
      await svc.post(`/orgs/${org.orgId}/scim-tokens`, { name: "owner" }, org.owner.accessToken)
    ).json()) as { token: string };
    const admins = (await (await scim("POST", "/Groups", group("Admin"), ownerToken.token)).json()) as {
      id: string;
    };
    const patch = {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
      Operations: [{ op: "replace", path: "displayName", value: "Admin" }],
    };
    expect((await scim("PATCH", `/Groups/${admins.id}`, patch)).status).toBe(403);
    expect((await scim("PATCH", `/Groups/${admins.id}`, patch, ownerToken.token)).status).toBe(200);
    const { results } = await env.DB.prepare(
      "SELECT type FROM audit_events WHERE type LIKE 'setup-link.%' AND detail LIKE ?",
    )
      .bind(`%${org.orgId}%`)
      .all<{ type: string }>();
    expect(results.map((row) => row.type)).toEqual(
      expect.arrayContaining([
        "setup-link.opened",
        "setup-link.domain-claimed",
        "setup-link.domain-verified",
        "setup-link.scim-token-created",
      ]),
    );
    expect(ORIGIN).toBe("http://localhost:8787");
  });

  // Threat: the link's holder taking the org from its owners and admins with the link's token: a group of the
  // `member` role holding an admin demoted them, `active: false` suspended an owner (and ended their sessions in the
  // org), DELETE removed a co-owner. The token neither gives nor takes the admin role, and leaves owners and admins'
  // memberships as they are; plain members it provisions, suspends and removes as any SCIM token.
  it("a SCIM token made through a link takes no role from an admin and suspends or removes no owner or admin", async () => {
    const org = await orgWithDomain(svc, { verify: false });
    const [coOwner, admin, member] = await Promise.all(
      ["co-owner", "admin", "member"].map((tag) => signUp(svc, uniqueEmail(tag))),
    );
    for (const [who, role] of [
      [coOwner!, "owner"],
      [admin!, "admin"],
      [member!, "member"],
    ] as const) {
      const added = await svc.request("POST", `/admin/orgs/${org.orgId}/members`, {
        headers: ADMIN,
        json: { userId: who.user.id, role },
      });
      expect(added.status).toBe(201);
    }
    const link = await makeLink(svc, org.orgId, org.owner.accessToken, { intents: ["scim"] });
    const browser = new Browser(svc, uniqueAddress());
    await browser.open(link.url);
    const token = shownValue(await (await browser.post("/setup/scim", {})).text(), "Bearer token");
    const scim = (method: string, path: string, json?: unknown) =>
      svc.request(method, `/scim/v2${path}`, { token, json });
    const suspend = {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
      Operations: [{ op: "replace", path: "active", value: false }],
    };
    const roles = async () => {
      const listed = await svc.request("GET", `/admin/orgs/${org.orgId}/members`, { headers: ADMIN });
      const { items } = (await listed.json()) as {
        items: { userId: string; role: string; active: boolean }[];
      };
      return Object.fromEntries(
        items.map((row) => [row.userId, `${row.role}${row.active ? "" : " (suspended)"}`]),
      );
    };

    const everyone = await scim("POST", "/Groups", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
      displayName: "member",
      members: [{ value: admin!.user.id }, { value: member!.user.id }],
    });
    expect(everyone.status).toBe(201);
    expect((await scim("PATCH", `/Users/${org.owner.user.id}`, suspend)).status).toBe(403);
    expect((await scim("PATCH", `/Users/${admin!.user.id}`, suspend)).status).toBe(403);
    expect((await scim("DELETE", `/Users/${coOwner!.user.id}`)).status).toBe(403);
    expect((await scim("DELETE", `/Users/${admin!.user.id}`)).status).toBe(403);
    // An `admin` group the owner's own IdP made is not the link's to delete.
    const ownerToken = (await (
      await svc.post(`/orgs/${org.orgId}/scim-tokens`, { name: "owner" }, org.owner.accessToken)
    ).json()) as { token: string };
    const admins = (await (
      await svc.request("POST", "/scim/v2/Groups", {
        token: ownerToken.token,
        json: { schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"], displayName: "admin" },
      })
    ).json()) as { id: string };
    expect((await scim("DELETE", `/Groups/${admins.id}`)).status).toBe(403);
    expect((await scim("PATCH", `/Users/${member!.user.id}`, suspend)).status).toBe(200);
    expect(await roles()).toEqual({
      [org.owner.user.id]: "owner",
      [coOwner!.user.id]: "owner",
      [admin!.user.id]: "admin",
      [member!.user.id]: "member (suspended)",
    });
    expect((await scim("DELETE", `/Users/${member!.user.id}`)).status).toBe(204);
  });
});
