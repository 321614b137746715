import { describe, expect, it } from "vitest";
import { expectContractError, expectError, signUp, uniqueEmail } from "../helpers";
import {
  ADMIN,
  IDP,
  oidcConnection,
  orgWithDomain,
  setTxtRecord,
  ssoService,
  type TestOrg,
  uniqueDomain,
} from "./support";

/**
 * An org's email domains (DNS TXT verification over DNS-over-HTTPS, against the fake resolver of
 * test/fakes/oidc-idp.ts) and its connections' management: who may, what the answers hold, what is refused.
 */

const svc = ssoService();

const verify = (org: TestOrg, domain = org.domain) =>
  svc.post(`/orgs/${org.orgId}/domains/${domain}/verify`, undefined, org.owner.accessToken);

/** A member of the org who is not its owner. */
async function plainMember(org: TestOrg) {
  const member = await signUp(svc, uniqueEmail("member"));
  const added = await svc.request("POST", `/admin/orgs/${org.orgId}/members`, {
    json: { userId: member.user.id, role: "admin" },
    headers: ADMIN,
  });
  expect(added.status).toBe(201);
  return member;
}

describe("domains", () => {
  it("are claimed unverified with the TXT record to add, and verified once DNS holds it", async () => {
    const org = await orgWithDomain(svc, { verify: false });
    const listed = await svc.get(`/orgs/${org.orgId}/domains`, org.owner.accessToken);
    const [claim] = ((await listed.json()) as { items: Record<string, unknown>[] }).items;
    expect(claim).toMatchObject({
      domain: org.domain,
      verified: false,
      txtName: `_edge-auth-verify.${org.domain}`,
    });
    await expectError(await verify(org), 400, "domain-verification-failed");
    // Threat: a TXT value of another claim (or a guess) proves nothing.
    await setTxtRecord(`_edge-auth-verify.${org.domain}`, ["edge-auth-verify=someone-elses"]);
    await expectError(await verify(org), 400, "domain-verification-failed");
    await setTxtRecord(`_edge-auth-verify.${org.domain}`, ["v=spf1 -all", String(claim!.txtValue)]);
    const verified = await verify(org);
    expect(verified.status).toBe(200);
    expect(await verified.json()).toMatchObject({ domain: org.domain, verified: true });
  });

  // Threat: an org claiming gmail.com would route (and with enforced SSO, lock out) everyone's personal accounts,
  // and its connection could JIT anyone's address.
  it("refuses public mail domains and things that are no domain names", async () => {
    const org = await orgWithDomain(svc);
    for (const domain of ["gmail.com", "Outlook.com", "proton.me", "icloud.com."]) {
      const response = await svc.post(`/orgs/${org.orgId}/domains`, { domain }, org.owner.accessToken);
      await expectError(response, 400, "domain-not-allowed");
    }
    for (const domain of [
      "localhost",
      "a..b",
      "1.2.3.4",
      "-x.com",
      "exa mple.com",
      `${"x".repeat(64)}.com`,
    ]) {
      const response = await svc.post(`/orgs/${org.orgId}/domains`, { domain }, org.owner.accessToken);
      await expectContractError(response, domain);
    }
  });

  // Threat: a second org verifying a domain another org owns, to route its people to a connection it controls.
  it("are verified by one org at most", async () => {
    const first = await orgWithDomain(svc, { verify: false });
    const second = await orgWithDomain(svc, { verify: false, domain: first.domain });
    const firstClaim = (await (
      await svc.get(`/orgs/${first.orgId}/domains`, first.owner.accessToken)
    ).json()) as {
      items: { txtValue: string }[];
    };
    const secondClaim = (await (
      await svc.get(`/orgs/${second.orgId}/domains`, second.owner.accessToken)
    ).json()) as {
      items: { txtValue: string }[];
    };
    expect(firstClaim.items[0]!.txtValue).not.toBe(secondClaim.items[0]!.txtValue);
    await setTxtRecord(`_edge-auth-verify.${first.domain}`, [
      firstClaim.items[0]!.txtValue,
      secondClaim.items[0]!.txtValue,
    ]);
    expect((await verify(first)).status).toBe(200);
    await expectError(await verify(second), 409, "domain-already-verified");
    await expectError(
      await svc.request("POST", `/admin/orgs/${second.orgId}/domains/${first.domain}/verify`, {
        headers: ADMIN,
      }),
      409,
      "domain-already-verified",
    );
    const third = await orgWithDomain(svc, { verify: false });
    await expectError(
      await svc.post(`/orgs/${third.orgId}/domains`, { domain: first.domain }, third.owner.accessToken),
      409,
      "domain-already-verified",
    );
  });

  it("answer 503 when the resolver fails, and go away when deleted", async () => {
    const org = await orgWithDomain(svc, { verify: false });
    const down = ssoService({ AUTH_DNS_RESOLVER_URL: `${IDP}/no-resolver-here` });
    const response = await down.post(
      `/orgs/${org.orgId}/domains/${org.domain}/verify`,
      undefined,
      org.owner.accessToken,
    );
    expect(response.status).toBe(503);
    expect(
      (
        await svc.request("DELETE", `/orgs/${org.orgId}/domains/${org.domain}`, {
          token: org.owner.accessToken,
        })
      ).status,
    ).toBe(204);
    await expectError(await verify(org), 404, "not-found");
  });

  // Threat: someone other than the org's owner claiming domains for it (or an outsider learning the org exists).
  it("are the owner's: another member gets 403, an outsider 404", async () => {
    const org = await orgWithDomain(svc);
    const member = await plainMember(org);
    const outsider = await signUp(svc, uniqueEmail("outsider"));
    const domain = uniqueDomain();
    await expectError(
      await svc.post(`/orgs/${org.orgId}/domains`, { domain }, member.accessToken),
      403,
      "insufficient-org-role",
    );
    await expectError(
      await svc.post(`/orgs/${org.orgId}/domains`, { domain }, outsider.accessToken),
      404,
      "not-found",
    );
    await expectError(await svc.get(`/orgs/${org.orgId}/domains`, outsider.accessToken), 404, "not-found");
  });
});

describe("connections", () => {
  it("are created, read, changed and removed by the owner, and never answer the secret", async () => {
    const org = await orgWithDomain(svc);
    const { id, clientId } = await oidcConnection(svc, org, {
      defaultRole: "member",
      roleMapping: { eng: "admin" },
    });
    const one = await svc.get(`/orgs/${org.orgId}/connections/${id}`, org.owner.accessToken);
    const text = await one.text();
    expect(text).not.toContain("client secret");
    expect(text).not.toContain("Sealed");
    expect(JSON.parse(text)).toMatchObject({
      id,
      type: "oidc",
      enabled: true,
      roleMapping: { eng: "admin" },
      oidc: { issuer: IDP, clientId, scopes: ["openid", "email", "profile"] },
    });
    const patched = await svc.request("PATCH", `/orgs/${org.orgId}/connections/${id}`, {
      json: { enabled: false, scopes: ["email"], clientSecret: "rotated" },
      token: org.owner.accessToken,
    });
    expect(await patched.json()).toMatchObject({ enabled: false, oidc: { scopes: ["openid", "email"] } });
    // A disabled connection routes no one.
    await expectError(await svc.post("/sso/start", { domain: org.domain }), 404, "sso-connection-not-found");
    const list = await svc.get(`/orgs/${org.orgId}/connections`, org.owner.accessToken);
    expect(((await list.json()) as { items: unknown[] }).items).toHaveLength(1);
    expect(
      (await svc.request("DELETE", `/orgs/${org.orgId}/connections/${id}`, { token: org.owner.accessToken }))
        .status,
    ).toBe(204);
    await expectError(
      await svc.get(`/orgs/${org.orgId}/connections/${id}`, org.owner.accessToken),
      404,
      "not-found",
    );
  });

  // Threat: org boundaries — an owner of org B reading or changing org A's connection by its id.
  it("of another org are not found, whatever the caller's role in their own", async () => {
    const a = await orgWithDomain(svc);
    const b = await orgWithDomain(svc);
    const { id } = await oidcConnection(svc, a);
    await expectError(
      await svc.get(`/orgs/${b.orgId}/connections/${id}`, b.owner.accessToken),
      404,
      "not-found",
    );
    await expectError(
      await svc.request("DELETE", `/orgs/${b.orgId}/connections/${id}`, { token: b.owner.accessToken }),
      404,
      "not-found",
    );
    await expectError(
      await svc.get(`/orgs/${a.orgId}/connections/${id}`, b.owner.accessToken),
      404,
      "not-found",
    );
    const member = await plainMember(a);
    await expectError(
      await svc.get(`/orgs/${a.orgId}/connections`, member.accessToken),
      403,
      "insufficient-org-role",
    );
  });

  // Threat: SSRF — an issuer the service would fetch on an org owner's say-so pointing inside the network.
  it("refuse issuers the outbound-URL policy refuses, unknown roles and unknown types", async () => {
    const org = await orgWithDomain(svc);
    const strict = ssoService({ AUTH_OUTBOUND_ALLOW_LOCAL: "false" });
    for (const issuer of [
      "http://idp.example",
      "https://10.0.0.1",
      "https://localhost",
      "https://metadata.internal",
    ]) {
      const response = await strict.post(
        `/orgs/${org.orgId}/connections`,
        { type: "oidc", issuer, clientId: "c", clientSecret: "s" },
        org.owner.accessToken,
      );
      await expectContractError(response, issuer);
    }
    for (const body of [
      { type: "oidc", issuer: IDP, clientId: "c", clientSecret: "s", defaultRole: "emperor" },
      { type: "oidc", issuer: IDP, clientId: "c", clientSecret: "s", roleMapping: { g: "emperor" } },
      { type: "ldap" },
      { type: "oidc", issuer: IDP },
    ]) {
      await expectContractError(
        await svc.post(`/orgs/${org.orgId}/connections`, body, org.owner.accessToken),
        JSON.stringify(body),
      );
    }
  });

  it("are managed for any org through the admin API; an org that does not exist is 404", async () => {
    const org = await orgWithDomain(svc);
    const admin = (method: string, path: string, json?: unknown) =>
      svc.request(method, `/admin/orgs/${path}`, { headers: ADMIN, ...(json ? { json } : {}) });
    const created = await admin("POST", `${org.orgId}/connections`, {
      type: "oidc",
      issuer: IDP,
      clientId: "admin-made",
      clientSecret: "secret",
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const listed = (await (await admin("GET", `${org.orgId}/connections`)).json()) as {
      items: { id: string }[];
    };
    expect(listed.items.map((item) => item.id)).toEqual([id]);
    expect((await admin("PATCH", `${org.orgId}/connections/${id}`, { enabled: false })).status).toBe(200);
    expect((await admin("DELETE", `${org.orgId}/connections/${id}`)).status).toBe(204);
    const missing = crypto.randomUUID();
    await expectError(await admin("GET", `${missing}/connections`), 404, "not-found");
    await expectError(
      await admin("POST", `${missing}/connections`, {
        type: "oidc",
        issuer: IDP,
        clientId: "c",
        clientSecret: "s",
      }),
      404,
      "not-found",
    );
    await expectError(
      await admin("POST", `${missing}/domains`, { domain: uniqueDomain() }),
      404,
      "not-found",
    );
    await expectError(await admin("POST", `${missing}/domains/${uniqueDomain()}/verify`), 404, "not-found");
  });
});
