// Who vouched for a user (issue 42): every token a JWT bearer or ID-JAG assertion buys is written to the audit log
// with the issuer that signed it, and an admin may narrow a trusted issuer to some users or organizations.
import { describe, expect, it } from "vitest";
import { signUp } from "../helpers";
import { userD1 } from "../support/shards";
import { type FakeIdp, fakeIdp, redeem, trustingClient } from "./assertions";
import { ADMIN, oauth2Error, provider } from "./support";

const MCP = "https://mcp.example.com/mcp";
const svc = provider({ AUTH_OAUTH2_PROVIDER_RESOURCES: MCP });

/** The `oauth2.assertion` events of a user, as stored in their shard. */
async function assertionEvents(userId: string): Promise<Record<string, unknown>[]> {
  const { results } = await userD1(userId)
    .prepare(
      "SELECT detail FROM audit_events WHERE user_id = ? AND type = 'oauth2.assertion' ORDER BY at, rowid",
    )
    .bind(userId)
    .all<{ detail: string }>();
  return results.map((row) => JSON.parse(row.detail) as Record<string, unknown>);
}

/** A client trusting `idp` for `narrowing` (users, orgs) only. */
const narrowedClient = (idp: FakeIdp, narrowing: Record<string, unknown>) =>
  trustingClient(svc, idp, {
    trustedIssuers: [{ issuer: idp.issuer, jwks: { keys: [idp.publicJwk] }, ...narrowing }],
  });

async function newOrg(ownerUserId: string): Promise<string> {
  const response = await svc.request("POST", "/admin/orgs", {
    headers: ADMIN,
    json: { name: `Partner ${crypto.randomUUID().slice(0, 6)}`, ownerUserId },
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { id: string }).id;
}

describe("assertions from trusted issuers, audited and narrowed", () => {
  // Threat: a trusted IdP (or its stolen key) mints tokens for users here and nothing records which issuer did it,
  // so an operator cannot tell an enterprise's grants from an attacker's or revoke by issuer.
  it("records the issuer, the client, the jti and what was granted for a JWT bearer and an ID-JAG", async () => {
    const idp = await fakeIdp();
    const client = await trustingClient(svc, idp, { scopes: ["openid", "email"], resources: [MCP] });
    const user = (await signUp(svc)).user;
    const plain = await idp.sign({ sub: user.id, jti: "plain-1" });
    expect((await redeem(svc, client, plain, { scope: "openid" })).status).toBe(200);
    const jag = await idp.sign(
      { sub: user.id, jti: "jag-1", client_id: client.clientId, resource: MCP, scope: "email" },
      { typ: "oauth-id-jag+jwt" },
    );
    expect((await redeem(svc, client, jag)).status).toBe(200);
    expect(await assertionEvents(user.id)).toEqual([
      {
        clientId: client.clientId,
        issuer: idp.issuer,
        idJag: false,
        jti: "plain-1",
        scopes: ["openid"],
        resources: [],
      },
      {
        clientId: client.clientId,
        issuer: idp.issuer,
        idJag: true,
        jti: "jag-1",
        scopes: ["email"],
        resources: [MCP],
      },
    ]);
  });

  // Threat: a partner's IdP trusted for its own people names anyone else here (an admin, another customer's user).
  it("an issuer narrowed to users names only them", async () => {
    const idp = await fakeIdp();
    const [listed, other] = [(await signUp(svc)).user, (await signUp(svc)).user];
    const client = await narrowedClient(idp, { users: [listed.id] });
    expect(client.trustedIssuers[0]).toMatchObject({ users: [listed.id] });
    expect((await redeem(svc, client, await idp.sign({ sub: listed.id }))).status).toBe(200);
    const refused = await oauth2Error(
      await redeem(svc, client, await idp.sign({ sub: other.id })),
      400,
      "invalid_grant",
    );
    expect(refused.error_description).toContain("not a user this issuer may name");
    expect(await assertionEvents(other.id)).toEqual([]);
  });

  it("an issuer narrowed to organizations names only their active members", async () => {
    const idp = await fakeIdp();
    const [member, outsider] = [(await signUp(svc)).user, (await signUp(svc)).user];
    const orgId = await newOrg(member.id);
    const client = await narrowedClient(idp, { orgs: [orgId] });
    expect((await redeem(svc, client, await idp.sign({ sub: member.id }))).status).toBe(200);
    await oauth2Error(await redeem(svc, client, await idp.sign({ sub: outsider.id })), 400, "invalid_grant");
    // Both lists: either admits.
    const both = await narrowedClient(idp, { orgs: [orgId], users: [outsider.id] });
    expect((await redeem(svc, both, await idp.sign({ sub: outsider.id }))).status).toBe(200);
  });

  it("refuses lists that are empty or not ids", async () => {
    const idp = await fakeIdp();
    for (const narrowing of [{ users: [] }, { orgs: ["not-an-org-id"] }, { orgs: [] }]) {
      const response = await svc.request("POST", "/admin/oauth2/clients", {
        headers: ADMIN,
        json: {
          clientName: "Narrowed",
          redirectUris: [],
          grantTypes: ["urn:ietf:params:oauth:grant-type:jwt-bearer"],
          trustedIssuers: [{ issuer: idp.issuer, jwks: { keys: [idp.publicJwk] }, ...narrowing }],
        },
      });
      expect(response.status, JSON.stringify(narrowing)).toBe(400);
    }
  });
});
