// SCIM under attack and at its boundaries: sessions ended at once by a deactivation, revoked and foreign tokens,
// one organization's token against another's users and groups, hostile filters and bodies.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { PASSWORD, signUp } from "../helpers";
import {
  ADMIN,
  body,
  createUser,
  listJsonSchema,
  PATCH_OP,
  type ScimOrg,
  type ScimUser,
  scim,
  scimError,
  scimOrg,
  svc,
  USER_SCHEMA,
  userJsonSchema,
} from "./support";

const q = encodeURIComponent;

/**
 * A user who signed up by themselves inside the org's domain and proved the address, with two sessions; SCIM then
 * links it to the org.
 */
async function linkedUser(org: ScimOrg) {
  const email = `member-${crypto.randomUUID().slice(0, 8)}@${org.domain}`;
  const first = await signUp(svc, email);
  await svc.request("PATCH", `/admin/users/${first.user.id}`, {
    headers: ADMIN,
    json: { emailVerified: true },
  });
  const signIn = await svc.post("/signin/email-password", { email, password: PASSWORD });
  const second = ((await signIn.json()) as { session: { refreshToken: string } }).session;
  const scimUser = await body<ScimUser>(
    await scim(org, "POST", "/Users", { schemas: [USER_SCHEMA], userName: email, active: true }),
    201,
    userJsonSchema,
  );
  expect(scimUser.id).toBe(first.user.id);
  // The first session switches into the organization.
  const switched = await svc.post("/token", { refreshToken: first.refreshToken, orgId: org.id });
  expect(switched.status).toBe(200);
  const inOrg = (await switched.json()) as { refreshToken: string };
  return {
    email,
    userId: first.user.id,
    inOrgRefresh: inOrg.refreshToken,
    otherRefresh: second.refreshToken,
  };
}

describe("provisioning an address someone holds unproven", () => {
  // Threat: before the IdP provisions a new hire, someone signs their address up here (verification off, or a
  // provider that does not verify it) and keeps the session. SCIM made that account the member, and the squatter
  // switched into the org as the new hire. The org's word proves the address as its IdP's does at an SSO sign-in:
  // what was set up before goes, sessions and password included.
  it("wipes what was set up on the account before it becomes the member: the squatter's session can't switch in", async () => {
    const org = await scimOrg("squat");
    const email = `new-hire-${crypto.randomUUID().slice(0, 8)}@${org.domain}`;
    const squatter = await signUp(svc, email);
    expect(squatter.user.emailVerified).toBe(false);
    const provisioned = await body<ScimUser>(
      await scim(org, "POST", "/Users", { schemas: [USER_SCHEMA], userName: email, active: true }),
      201,
      userJsonSchema,
    );
    expect(provisioned.id).toBe(squatter.user.id);
    expect((await svc.post("/token", { refreshToken: squatter.refreshToken, orgId: org.id })).status).toBe(
      401,
    );
    const password = await svc.post("/signin/email-password", { email, password: PASSWORD });
    expect(password.status).toBe(401);
    const user = (await (
      await svc.request("GET", `/admin/users/${squatter.user.id}`, { headers: ADMIN })
    ).json()) as {
      emailVerified: boolean;
    };
    expect(user.emailVerified).toBe(true);
  });
});

describe("deactivation and removal end the user's sessions in the org at once", () => {
  // Threat: an employee leaves; IT deactivates them in the IdP, but a session already switched into the org keeps
  // refreshing for its whole lifetime. The deactivation must end those sessions (families revoked), not wait.
  it("active:false: the session switched into the org can't refresh right after; another session still can", async () => {
    const org = await scimOrg("deact");
    const member = await linkedUser(org);
    const patched = await scim(org, "PATCH", `/Users/${member.userId}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", path: "active", value: false }],
    });
    expect((await body<ScimUser>(patched, 200, userJsonSchema)).active).toBe(false);
    expect((await svc.post("/token", { refreshToken: member.inOrgRefresh })).status).toBe(401);
    const other = await svc.post("/token", { refreshToken: member.otherRefresh });
    expect(other.status).toBe(200);
    const otherSession = (await other.json()) as { refreshToken: string };
    // A suspended member can't switch back in; reactivation restores the membership.
    expect(
      (await svc.post("/token", { refreshToken: otherSession.refreshToken, orgId: org.id })).status,
    ).toBe(403);
    await body(
      await scim(org, "PATCH", `/Users/${member.userId}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: "replace", path: "active", value: "True" }],
      }),
      200,
      userJsonSchema,
    );
    expect(
      (await svc.post("/token", { refreshToken: otherSession.refreshToken, orgId: org.id })).status,
    ).toBe(200);
  });

  // Threat: removing a user the org did not create must not delete their account (they exist outside the org),
  // but must still end what they hold inside the org.
  it("DELETE of a user the org didn't create: membership and org sessions go, the account stays", async () => {
    const org = await scimOrg("unlink");
    const member = await linkedUser(org);
    expect((await scim(org, "DELETE", `/Users/${member.userId}`)).status).toBe(204);
    expect((await svc.post("/token", { refreshToken: member.inOrgRefresh })).status).toBe(401);
    expect((await svc.post("/token", { refreshToken: member.otherRefresh })).status).toBe(200);
    expect(
      (await svc.post("/signin/email-password", { email: member.email, password: PASSWORD })).status,
    ).toBe(200);
  });

  it("DELETE of a user the org created deletes the user", async () => {
    const org = await scimOrg("prov");
    const user = await createUser(org);
    expect((await scim(org, "DELETE", `/Users/${user.id}`)).status).toBe(204);
    const admin = await svc.request("GET", `/admin/users/${user.id}`, { headers: ADMIN });
    expect(admin.status).toBe(404);
  });
});

describe("SCIM tokens", () => {
  // Threat: a token leaked from the IdP's configuration; revoking it must stop it at once.
  it("a revoked token is refused at once, in SCIM's error body", async () => {
    const org = await scimOrg("revoke");
    await body(await scim(org, "GET", "/Users"), 200, listJsonSchema(userJsonSchema));
    const tokens = await svc.request("GET", `/orgs/${org.id}/scim-tokens`, { token: org.owner.accessToken });
    const [listed] = (await tokens.json()) as { id: string; token?: string }[];
    expect(listed!.token).toBeUndefined();
    const revoked = await svc.request("DELETE", `/orgs/${org.id}/scim-tokens/${listed!.id}`, {
      token: org.owner.accessToken,
    });
    expect(revoked.status).toBe(204);
    const refused = await scim(org, "GET", "/Users");
    await scimError(refused, 401);
    expect(refused.headers.get("www-authenticate")).toMatch(/^Bearer/);
  });

  // Threat: a database leak handing out working SCIM tokens: only SHA-256 hashes are stored.
  it("is stored hashed, never in plain", async () => {
    const org = await scimOrg("hash");
    const rows = await env.DB.prepare("SELECT token_hash FROM scim_tokens WHERE org_id = ?")
      .bind(org.id)
      .all();
    expect(rows.results).toHaveLength(1);
    expect(JSON.stringify(rows.results)).not.toContain(org.token);
    expect(org.token).toMatch(/^scim_[A-Za-z0-9_-]{43}$/);
  });

  // Threat: anything but an org's SCIM token (nothing, garbage, a user's own access token) reaching provisioning.
  it("no token, a wrong one or a session's access token: 401", async () => {
    const org = await scimOrg("noauth");
    await scimError(await svc.request("GET", "/scim/v2/Users"), 401);
    await scimError(await scim({ token: `scim_${"A".repeat(43)}` }, "GET", "/Users"), 401);
    await scimError(await scim({ token: org.owner.accessToken }, "GET", "/Users"), 401);
  });

  // Threat: any member (or outsider) minting a provisioning token for an org: owners only; the admin API for any org.
  it("only the org's owner manages tokens; the admin API mirrors the routes", async () => {
    const org = await scimOrg("owners");
    const outsider = await signUp(svc);
    const asOutsider = await svc.request("POST", `/orgs/${org.id}/scim-tokens`, {
      token: outsider.accessToken,
      json: {},
    });
    expect(asOutsider.status).toBe(404);
    await env.DB.prepare(
      "INSERT INTO org_members (org_id, user_id, role, source, created_at, updated_at) VALUES (?, ?, 'admin', 'admin', 1, 1)",
    )
      .bind(org.id, outsider.user.id)
      .run();
    const asAdmin = await svc.request("POST", `/orgs/${org.id}/scim-tokens`, {
      token: outsider.accessToken,
      json: {},
    });
    expect(asAdmin.status).toBe(403);
    expect((await svc.request("GET", `/orgs/${org.id}/scim-tokens`)).status).toBe(401);
    const minted = await svc.request("POST", `/admin/orgs/${org.id}/scim-tokens`, {
      headers: ADMIN,
      json: { name: "ops" },
    });
    expect(minted.status).toBe(201);
    const { id, token } = (await minted.json()) as { id: string; token: string };
    await body(await scim({ token }, "GET", "/Users"), 200, listJsonSchema(userJsonSchema));
    const listed = await svc.request("GET", `/admin/orgs/${org.id}/scim-tokens`, { headers: ADMIN });
    expect(((await listed.json()) as unknown[]).length).toBe(2);
    expect(
      (await svc.request("DELETE", `/admin/orgs/${org.id}/scim-tokens/${id}`, { headers: ADMIN })).status,
    ).toBe(204);
    await scimError(await scim({ token }, "GET", "/Users"), 401);
    const unknownOrg = await svc.request("GET", `/admin/orgs/${crypto.randomUUID()}/scim-tokens`, {
      headers: ADMIN,
    });
    expect(unknownOrg.status).toBe(404);
  });
});

describe("organization boundaries", () => {
  // Threat: org B's IdP (or whoever holds its token) reading, changing, deactivating or deleting org A's users and
  // groups by guessing or learning their ids, or pulling them into its own groups.
  it("a token of org A can't see or touch org B's users or groups", async () => {
    const a = await scimOrg("orga");
    const b = await scimOrg("orgb");
    const user = await createUser(a);
    const group = await body<{ id: string }>(
      await scim(a, "POST", "/Groups", { displayName: "A team", members: [{ value: user.id }] }),
      201,
      { type: "object" },
    );
    await scimError(await scim(b, "GET", `/Users/${user.id}`), 404);
    await scimError(
      await scim(b, "PUT", `/Users/${user.id}`, { userName: user.userName, active: false }),
      404,
    );
    await scimError(
      await scim(b, "PATCH", `/Users/${user.id}`, {
        Operations: [{ op: "replace", path: "active", value: false }],
      }),
      404,
    );
    await scimError(await scim(b, "DELETE", `/Users/${user.id}`), 404);
    await scimError(await scim(b, "GET", `/Groups/${group.id}`), 404);
    await scimError(await scim(b, "DELETE", `/Groups/${group.id}`), 404);
    const filtered = await body<{ totalResults: number }>(
      await scim(b, "GET", `/Users?filter=${q(`userName eq "${user.userName}"`)}`),
      200,
      listJsonSchema(userJsonSchema),
    );
    expect(filtered.totalResults).toBe(0);
    const listed = await body<{ Resources: ScimUser[] }>(
      await scim(b, "GET", "/Users"),
      200,
      listJsonSchema(userJsonSchema),
    );
    expect(listed.Resources.map((u) => u.id)).not.toContain(user.id);
    await scimError(
      await scim(b, "POST", "/Groups", { displayName: "grab", members: [{ value: user.id }] }),
      400,
      "invalidValue",
    );
    // Org B can't provision an address in org A's domain either.
    await scimError(await scim(b, "POST", "/Users", { userName: `new@${a.domain}` }), 400, "invalidValue");
    // And org A's user is untouched.
    const still = await body<ScimUser>(await scim(a, "GET", `/Users/${user.id}`), 200, userJsonSchema);
    expect(still.active).toBe(true);
  });

  // Threat: an IdP provisioning (and so taking over) an address outside the domains its org proved it owns.
  it("creates users only inside the org's verified domains", async () => {
    const org = await scimOrg("domains");
    await scimError(await scim(org, "POST", "/Users", { userName: "victim@gmail.com" }), 400, "invalidValue");
    await scimError(
      await scim(org, "POST", "/Users", { userName: `x@sub.${org.domain}` }),
      400,
      "invalidValue",
    );
    await env.DB.prepare(
      "INSERT INTO org_domains (org_id, domain, txt_value, created_at) VALUES (?, ?, 'x', 1)",
    )
      .bind(org.id, `unverified-${org.domain}`)
      .run();
    await scimError(
      await scim(org, "POST", "/Users", { userName: `x@unverified-${org.domain}` }),
      400,
      "invalidValue",
    );
    await scimError(await scim(org, "POST", "/Users", { userName: "not an email" }), 400, "invalidValue");
  });
});

describe("hostile input: a 4xx in SCIM's body, never a 5xx", () => {
  it("unsupported or malformed filters: 400 invalidFilter", async () => {
    const org = await scimOrg("filters");
    for (const filter of [
      'userName co "a"',
      "userName eq",
      '(userName eq "a"',
      'title eq "x"',
      "active eq true",
      'userName eq "a" or userName eq "b"',
      'not (userName eq "a")',
      'emails[value eq "a"][type eq "b"]',
      "x".repeat(2000),
    ]) {
      await scimError(await scim(org, "GET", `/Users?filter=${q(filter)}`), 400, "invalidFilter");
    }
    await scimError(
      await scim(org, "GET", `/Groups?filter=${q('members.value co "x"')}`),
      400,
      "invalidFilter",
    );
    await scimError(await scim(org, "GET", "/Users?startIndex=abc"), 400, "invalidValue");
    // A well-formed filter whose indexed term is not a string names nobody (it threw: a 500).
    for (const filter of ["userName eq true", "externalId eq false"]) {
      const none = await body<{ totalResults: number }>(
        await scim(org, "GET", `/Users?filter=${q(filter)}`),
        200,
        listJsonSchema(userJsonSchema),
      );
      expect(none.totalResults, filter).toBe(0);
    }
  });

  it("invalid bodies: not JSON, not an object, wrong type, too big, bad PATCH", async () => {
    const org = await scimOrg("bodies");
    const user = await createUser(org);
    await scimError(await scim(org, "POST", "/Users", "{not json"), 400, "invalidSyntax");
    await scimError(await scim(org, "POST", "/Users", "[1,2]"), 400, "invalidSyntax");
    const plain = await svc.request("POST", "/scim/v2/Users", {
      headers: { authorization: `Bearer ${org.token}`, "content-type": "text/plain" },
      body: JSON.stringify({ userName: `t@${org.domain}` }),
    });
    await scimError(plain, 400, "invalidSyntax");
    await scimError(await scim(org, "POST", "/Users", { userName: 42 }), 400, "invalidValue");
    // Deep or wide attribute trees: bounded per member.
    const deep = JSON.parse(`${'{"a":'.repeat(500)}1${"}".repeat(500)}`);
    await scimError(
      await scim(org, "POST", "/Users", { userName: `deep@${org.domain}`, deep }),
      400,
      "invalidValue",
    );
    const wide = { userName: `wide@${org.domain}`, title: "x".repeat(20_000) };
    await scimError(await scim(org, "POST", "/Users", wide), 400, "invalidValue");
    // Over the API's 64 KiB: refused before any work.
    const huge = await scim(org, "POST", "/Users", {
      userName: `huge@${org.domain}`,
      title: "x".repeat(70_000),
    });
    expect(huge.status).toBe(413);
    const patch = (Operations: unknown) =>
      scim(org, "PATCH", `/Users/${user.id}`, { schemas: [PATCH_OP], Operations });
    await scimError(await patch([{ op: "remove" }]), 400, "noTarget");
    await scimError(await patch([{ op: "frobnicate", path: "active", value: true }]), 400, "invalidSyntax");
    await scimError(
      await patch([{ op: "replace", path: "name..givenName", value: "x" }]),
      400,
      "invalidPath",
    );
    await scimError(await patch([{ op: "replace", path: "active", value: "maybe" }]), 400, "invalidValue");
    await scimError(
      await patch([{ op: "replace", path: "userName", value: `other@${org.domain}` }]),
      400,
      "mutability",
    );
    await scimError(
      await patch(Array.from({ length: 101 }, () => ({ op: "add", path: "title", value: "x" }))),
      400,
    );
    await scimError(await patch([]), 400);
    // An unknown SCIM endpoint answers in SCIM's body too.
    await scimError(await scim(org, "GET", "/Bulk"), 404);
  });

  it("uniqueness: the same userName or externalId twice is 409", async () => {
    const org = await scimOrg("unique");
    const user = await createUser(org, "dup");
    await scimError(await scim(org, "POST", "/Users", { userName: user.userName }), 409, "uniqueness");
    await scimError(
      await scim(org, "POST", "/Users", { userName: `other@${org.domain}`, externalId: user.externalId }),
      409,
      "uniqueness",
    );
    await scimError(
      await scim(org, "POST", "/Groups", { displayName: "g" }).then(() =>
        scim(org, "POST", "/Groups", { displayName: "g" }),
      ),
      409,
      "uniqueness",
    );
  });
});
