import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { PREFIX, SERVER, signUp, uniqueAddress, uniqueEmail, type WireSession } from "../helpers";
import {
  APP,
  authnRequestOf,
  location,
  openIn,
  postToAcs,
  type SamlOrg,
  samlOrg,
  samlService,
  startSignIn,
} from "./saml-support/connection";
import { idpMetadataXml, type ResponseOptions, signedResponse, toBase64 } from "./saml-support/idp";
import { recordedMethod } from "./support";

// The SAML service provider over HTTP (src/sso/saml/routes.ts): POST /sso/start → the test IdP (samlify) → the ACS's
// POST → the ACS's GET in the same browser → the app with a refresh token; and the attacks that need the routes
// (replay, another browser, unknown InResponseTo, IdP-initiated, hostile bodies).

const svc = samlService();

const respondTo = (org: SamlOrg, email: string, options: Partial<ResponseOptions> = {}) =>
  signedResponse({ spEntityId: org.spEntityId, acsUrl: org.acsUrl, nameId: email, ...options });

async function errorOf(response: Response) {
  return { status: response.status, ...((await response.json()) as { error: string; message: string }) };
}

/** A whole SP-initiated sign-in of `email` in one browser: the session it lands with. */
async function signedInThroughSaml(org: SamlOrg, email: string, service = svc): Promise<WireSession> {
  const { requestId, cookie } = await startSignIn(service, email);
  const acs = await postToAcs(
    service,
    org,
    toBase64(await respondTo(org, email, { inResponseTo: requestId })),
  );
  const landed = location(await openIn(service, location(acs), cookie));
  const refreshToken = landed.searchParams.get("refreshToken");
  expect(refreshToken, landed.href).toBeTruthy();
  return (await (await service.post("/token", { refreshToken })).json()) as WireSession;
}

describe("metadata and the AuthnRequest", () => {
  it("publishes the SP metadata of a connection", async () => {
    const org = await samlOrg();
    const response = await svc.get(`/sso/saml/${org.connectionId}/metadata`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/samlmetadata\+xml/);
    const xml = await response.text();
    expect(xml).toContain(`entityID="${org.spEntityId}"`);
    expect(xml).toContain(
      `Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${org.acsUrl}"`,
    );
    expect(xml).toContain("urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress");
    expect(await errorOf(await svc.get("/sso/saml/no-such-connection/metadata"))).toMatchObject({
      status: 404,
      error: "sso-connection-not-found",
    });
  });

  it("starts with an HTTP-Redirect AuthnRequest for this SP and ACS", async () => {
    const org = await samlOrg();
    const { idpUrl, requestXml, requestId, cookie } = await startSignIn(svc, `alice@${org.domain}`);
    expect(`${idpUrl.origin}${idpUrl.pathname}`).toBe("https://idp.example.test/sso");
    expect(requestId).toMatch(/^_[0-9a-f]{40}$/);
    expect(requestXml).toContain(`AssertionConsumerServiceURL="${org.acsUrl}"`);
    expect(requestXml).toContain(`<saml:Issuer>${org.spEntityId}</saml:Issuer>`);
    expect(cookie).toMatch(/sso-flow=/);
    // Two starts, two request IDs.
    expect((await startSignIn(svc, `alice@${org.domain}`)).requestId).not.toBe(requestId);
    expect(await authnRequestOf(idpUrl)).toBe(requestXml);
  });
});

describe("a sign-in, end to end", () => {
  it("signs in a new member just in time and lands on redirectTo with a refresh token", async () => {
    const org = await samlOrg();
    const email = `alice@${org.domain}`;
    const { requestId, cookie } = await startSignIn(svc, email);
    const xml = await respondTo(org, email, {
      inResponseTo: requestId,
      attributes: { displayName: ["Alice"] },
    });
    const acs = await postToAcs(svc, org, toBase64(xml));
    expect(acs.status).toBe(303);
    const bounce = location(acs);
    expect(`${bounce.origin}${bounce.pathname}`).toBe(org.acsUrl);
    // The SAMLResponse is never put in a URL: only a one-time id.
    expect([...bounce.searchParams.keys()]).toEqual(["result"]);
    const landed = location(await openIn(svc, bounce, cookie));
    expect(`${landed.origin}${landed.pathname}`).toBe(APP);
    const refreshToken = landed.searchParams.get("refreshToken");
    expect(refreshToken, landed.href).toBeTruthy();
    const session = (await (await svc.post("/token", { refreshToken })).json()) as {
      user: { id: string; email: string; displayName: string };
    };
    expect(session.user).toMatchObject({ email, displayName: "Alice" });
    const member = await env.DB.prepare(
      "SELECT role, source FROM org_members WHERE org_id = ? AND user_id = ?",
    )
      .bind(org.orgId, session.user.id)
      .first();
    expect(member).toEqual({ role: "member", source: "jit" });
    // The one-time id is spent.
    const again = location(await openIn(svc, bounce, cookie));
    expect(again.searchParams.get("error")).toBe("invalid-state");
  });

  // Threat: a person reading their sessions (or an operator the audit) cannot tell an enterprise sign-in from an
  // unknown one — the session list said "unknown" and the audit "other".
  it("records its method, sso:saml, in the session list and the audit", async () => {
    const org = await samlOrg();
    const session = await signedInThroughSaml(org, `method@${org.domain}`);
    expect(await recordedMethod(svc, session)).toEqual({ listed: "sso:saml", audited: "sso:saml" });
  });

  // Threat (to the apps that follow the event stream): a person signed in, made just in time, whose user.created
  // and session.created reach the queue only at the next minute's cron, because the ACS's GET did not drain.
  it("hands the events its GET wrote to the queue after the answer, not at the next cron", async () => {
    const sent: { type: string; subject: string }[] = [];
    const queue = {
      async send(body: { type: string; subject: string }) {
        sent.push(body);
      },
      async sendBatch(messages: Iterable<{ body: { type: string; subject: string } }>) {
        for (const message of messages) sent.push(message.body);
      },
    };
    const streaming = samlService({ EVENTS: queue });
    const org = await samlOrg();
    const session = await signedInThroughSaml(org, `events@${org.domain}`, streaming);
    expect(sent.filter((event) => event.subject === session.user.id).map((event) => event.type)).toEqual(
      expect.arrayContaining(["user.created", "session.created"]),
    );
  });

  it("works with a connection made through the organization's own routes, mapping a group to a role", async () => {
    const owner = await signUp(svc, uniqueEmail("owner"));
    const created = await svc.post("/orgs", { name: "Initech" }, owner.accessToken);
    expect(created.status).toBe(201);
    const orgId = ((await created.json()) as { id: string }).id;
    const domain = `initech-${crypto.randomUUID().slice(0, 8)}.test`;
    expect((await svc.post(`/orgs/${orgId}/domains`, { domain }, owner.accessToken)).status).toBe(201);
    const verified = await svc.request("POST", `/admin/orgs/${orgId}/domains/${domain}/verify`, {
      headers: { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) },
    });
    expect(verified.status, await verified.clone().text()).toBeLessThan(300);
    const connection = await svc.post(
      `/orgs/${orgId}/connections`,
      { type: "saml", metadataXml: idpMetadataXml(), roleMapping: { "it-admins": "admin" } },
      owner.accessToken,
    );
    expect(connection.status, await connection.clone().text()).toBe(201);
    const wire = (await connection.json()) as { id: string; saml: { spMetadataUrl: string; acsUrl: string } };
    const org = {
      orgId,
      domain,
      connectionId: wire.id,
      spEntityId: wire.saml.spMetadataUrl,
      acsUrl: wire.saml.acsUrl,
    };
    const email = `peter@${domain}`;
    const { requestId, cookie } = await startSignIn(svc, email);
    const xml = await respondTo(org, email, {
      inResponseTo: requestId,
      attributes: { groups: ["it-admins"] },
    });
    const landed = location(await openIn(svc, location(await postToAcs(svc, org, toBase64(xml))), cookie));
    const refreshToken = landed.searchParams.get("refreshToken");
    expect(refreshToken, landed.href).toBeTruthy();
    const members = (await (await svc.get(`/orgs/${orgId}/members`, owner.accessToken)).json()) as unknown;
    expect(JSON.stringify(members)).toContain(email);
    const row = await env.DB.prepare("SELECT role FROM org_members WHERE org_id = ? AND source = 'jit'")
      .bind(orgId)
      .first();
    expect(row).toEqual({ role: "admin" });
    // A sign-up (a password hash) and a dozen requests: more than the default 5 s on a busy machine.
  }, 30_000);

  it("refuses an email outside the org's verified domains", async () => {
    const org = await samlOrg();
    const { requestId, cookie } = await startSignIn(svc, `bob@${org.domain}`);
    // A rogue or misconfigured IdP asserting an address the org doesn't own (takeover of victim@gmail.com).
    const xml = await respondTo(org, "victim@gmail.com", { inResponseTo: requestId });
    const landed = location(await openIn(svc, location(await postToAcs(svc, org, toBase64(xml))), cookie));
    expect(landed.searchParams.get("error")).toBe("sso-email-outside-domains");
  });
});

describe("attacks over HTTP", () => {
  // Replay: the same signed response posted twice (from a proxy log, a shared computer's history).
  it("accepts an assertion ID once", async () => {
    const org = await samlOrg();
    const email = `carol@${org.domain}`;
    const first = await startSignIn(svc, email);
    const xml = await respondTo(org, email, { inResponseTo: first.requestId });
    expect((await postToAcs(svc, org, toBase64(xml))).status).toBe(303);
    expect(await errorOf(await postToAcs(svc, org, toBase64(xml)))).toMatchObject({
      status: 400,
      error: "sso-assertion-invalid",
      message: expect.stringMatching(/already used \(replay\)/),
    });
  });

  // Login CSRF: the attacker starts a sign-in in their browser, gets a valid response for their own account and
  // makes the victim's browser post it. The ACS accepts it, but the GET in the victim's browser has no (or another)
  // binding cookie: nothing completes, and the attacker's result is spent.
  it("refuses to finish in a browser other than the one that started (InResponseTo from another browser)", async () => {
    const org = await samlOrg();
    const attacker = await startSignIn(svc, `mallory@${org.domain}`);
    const victim = await startSignIn(svc, `victim@${org.domain}`);
    const xml = await respondTo(org, `mallory@${org.domain}`, { inResponseTo: attacker.requestId });
    const bounce = location(await postToAcs(svc, org, toBase64(xml)));
    for (const cookie of [victim.cookie, ""]) {
      const landed = location(await openIn(svc, bounce, cookie));
      expect(landed.searchParams.get("refreshToken")).toBeNull();
      expect(landed.searchParams.get("error")).toBe("invalid-state");
    }
  });

  // A response answering a request this service never sent (or one that expired or was answered already).
  it("refuses an unknown InResponseTo", async () => {
    const org = await samlOrg();
    const xml = await respondTo(org, `dave@${org.domain}`, { inResponseTo: "_never-sent" });
    expect(await errorOf(await postToAcs(svc, org, toBase64(xml)))).toMatchObject({
      status: 400,
      error: "invalid-state",
    });
  });

  // A response for one connection posted to another's ACS (both of this service): its Recipient and Audience
  // name the first.
  it("refuses a response posted to another connection's ACS", async () => {
    const [org, other] = [await samlOrg(), await samlOrg()];
    const { requestId } = await startSignIn(svc, `erin@${org.domain}`);
    const xml = await respondTo(org, `erin@${org.domain}`, { inResponseTo: requestId });
    expect(await errorOf(await postToAcs(svc, other, toBase64(xml)))).toMatchObject({
      status: 400,
      error: "sso-assertion-invalid",
    });
  });

  // Unsolicited responses enable login CSRF by design (nothing binds them to a browser): off unless allowed.
  it("refuses an IdP-initiated response when the connection does not allow it", async () => {
    const org = await samlOrg();
    const xml = await respondTo(org, `frank@${org.domain}`);
    expect(await errorOf(await postToAcs(svc, org, toBase64(xml)))).toMatchObject({
      status: 400,
      error: "sso-assertion-invalid",
      message: expect.stringMatching(/IdP-initiated sign-in is not allowed/),
    });
  });

  it("accepts an IdP-initiated response when allowed, landing on an allowed RelayState", async () => {
    const org = await samlOrg({ allowIdpInitiated: true });
    const xml = await respondTo(org, `grace@${org.domain}`);
    const bounce = location(await postToAcs(svc, org, toBase64(xml), `${APP}?from=idp`));
    const landed = location(await openIn(svc, bounce));
    expect(`${landed.origin}${landed.pathname}`).toBe(APP);
    expect(landed.searchParams.get("refreshToken")).toBeTruthy();
    // A RelayState off the allow-list is ignored (an open redirect otherwise).
    const other = await respondTo(org, `grace@${org.domain}`);
    const elsewhere = location(
      await openIn(svc, location(await postToAcs(svc, org, toBase64(other), "https://evil.example/"))),
    );
    expect(elsewhere.origin).not.toBe("https://evil.example");
    expect(elsewhere.searchParams.get("refreshToken")).toBeTruthy();
  });

  it("answers hostile bodies with a 4xx, never a 500", async () => {
    const org = await samlOrg();
    const bomb = toBase64('<!DOCTYPE r [<!ENTITY a "aaaa">]><r>&a;</r>');
    const cases: [string | undefined, number][] = [
      [bomb, 400],
      [toBase64(`${"<a>".repeat(1000)}${"</a>".repeat(1000)}`), 400],
      ["not base64 at all %%%", 400],
      [undefined, 400],
    ];
    for (const [body, status] of cases) {
      const response =
        body === undefined
          ? await svc.request("POST", org.acsUrl, {
              body: "",
              headers: { "content-type": "application/x-www-form-urlencoded" },
            })
          : await postToAcs(svc, org, body);
      expect(response.status, String(body).slice(0, 40)).toBe(status);
    }
    // Bigger than the API's body limit: 413 before anything reads it.
    expect((await postToAcs(svc, org, "A".repeat(300 * 1024))).status).toBe(413);
    const unknown = await svc.request(
      "GET",
      `${SERVER}${PREFIX}/sso/saml/${org.connectionId}/acs?result=nope`,
    );
    expect(location(unknown).searchParams.get("error")).toBe("invalid-state");
  });

  // Threat: a flood of forged responses at the ACS, each costing an RSA verification or two (CPU per request).
  it("counts ACS posts per address in BRUTE_FORCE: past the limit, 429 before any signature is checked", async () => {
    const limited = samlService({
      AUTH_RATE_LIMIT_ENABLE: "true",
      // Counted exactly in the RateLimiter object, without the platform's approximate binding.
      BRUTE_FORCE_LIMITER: undefined,
      AUTH_RATE_LIMIT_BRUTE_FORCE_BURST: "2",
    });
    const org = await samlOrg();
    const ip = uniqueAddress();
    const statuses = [];
    for (let i = 0; i < 3; i++) {
      const response = await limited.request("POST", org.acsUrl, {
        body: new URLSearchParams({ SAMLResponse: toBase64("<not-saml/>") }).toString(),
        headers: { "content-type": "application/x-www-form-urlencoded", "cf-connecting-ip": ip },
      });
      statuses.push(response.status);
    }
    expect(statuses).toEqual([400, 400, 429]);
  });
});
