// The console's organizations (contract organizations.md §1) over HTTP: the list and search, creation, an org's page
// with members (add, role, remove), invitations (send, withdraw), edit and delete. Every action goes through the
// console's Origin and CSRF check and is audited like the admin API's.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  auditTypesOf,
  mailbox,
  NO_VERIFICATION,
  PREFIX,
  SERVER,
  service,
  signUp,
  uniqueEmail,
} from "../helpers";
import { idpMetadataXml } from "../sso/saml-support/idp";

const svc = service({ ...NO_VERIFICATION });
const SECRET = String(env.AUTH_ADMIN_SECRET);
const BASE = "/admin/console";
const ORIGIN = new URL(SERVER).origin;

const postForm = (path: string, values: Record<string, string>, cookie: string, origin = ORIGIN) =>
  svc.request("POST", `${BASE}${path}`, {
    body: new URLSearchParams(values).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", origin, cookie },
  });

async function signIn(): Promise<{ cookie: string; csrf: string }> {
  const response = await postForm("/login", { secret: SECRET }, "");
  const cookie = response.headers.get("set-cookie")!.split(";")[0]!;
  const page = await (await svc.request("GET", BASE, { headers: { cookie } })).text();
  return { cookie, csrf: /name="csrf" value="([^"]+)"/.exec(page)![1]! };
}

const getPage = async (cookie: string, path: string) => {
  const response = await svc.request("GET", `${BASE}${path}`, { headers: { cookie } });
  return { status: response.status, text: await response.text(), response };
};

/** An org made through the console's form; its id from where the console sends the browser. */
async function createOrg(cookie: string, csrf: string, name: string, ownerEmail: string, slug = "") {
  const response = await postForm("/orgs/create", { csrf, name, slug, ownerEmail }, cookie);
  expect(response.status, await response.clone().text()).toBe(303);
  const location = response.headers.get("location")!;
  expect(location).toContain("done=org-created");
  return /\/orgs\/([^?]+)/.exec(location)![1]!;
}

describe("the console's organizations", () => {
  it("creates an organization with its first owner, lists it and finds it by name or slug", async () => {
    const { cookie, csrf } = await signIn();
    const owner = await signUp(svc, uniqueEmail("org-owner"));
    const tag = crypto.randomUUID().slice(0, 8);
    const orgId = await createOrg(cookie, csrf, `Acme <i>${tag}</i>`, owner.user.email, `acme-${tag}`);

    const list = await getPage(cookie, `/orgs?q=${tag}`);
    expect(list.status).toBe(200);
    expect(list.text).toContain(`href="${PREFIX}${BASE}/orgs/${orgId}"`);
    // The name is escaped (script injection through an org name a user chose).
    expect(list.text).toContain(`Acme &lt;i&gt;${tag}&lt;/i&gt;`);
    expect((await getPage(cookie, `/orgs?q=acme-${tag}`)).text).toContain(orgId);
    expect((await getPage(cookie, `/orgs?q=zz${tag}`)).text).toContain("No organization matches.");

    const detail = await getPage(cookie, `/orgs/${orgId}?done=org-created`);
    expect(detail.status).toBe(200);
    expect(detail.text).toContain("The organization is created");
    expect(detail.text).toContain(owner.user.email);
    expect(detail.text).toMatch(/<option value="owner" selected>owner<\/option>/);
    expect(await auditTypesOf(owner.user.id)).toContain("admin.org.create");
  });

  it("refuses a taken slug, an unknown owner and a bad slug on the page, never a 500", async () => {
    const { cookie, csrf } = await signIn();
    const owner = await signUp(svc, uniqueEmail("org-slug"));
    const tag = crypto.randomUUID().slice(0, 8);
    await createOrg(cookie, csrf, "First", owner.user.email, `taken-${tag}`);
    const cases: [Record<string, string>, string][] = [
      [{ name: "Second", slug: `taken-${tag}`, ownerEmail: owner.user.email }, "slug is already in use"],
      [{ name: "Third", ownerEmail: uniqueEmail("nobody") }, "no user has that email"],
      [{ name: "Fourth", slug: "Not A Slug", ownerEmail: owner.user.email }, "slug: 2–48 lower-case"],
      [{ name: "", ownerEmail: owner.user.email }, "name"],
      [{ name: "Fifth", ownerEmail: "not-an-email" }, "email"],
    ];
    for (const [values, message] of cases) {
      const refused = await postForm("/orgs/create", { csrf, ...values }, cookie);
      expect(refused.status, JSON.stringify(values)).toBe(400);
      expect(await refused.text()).toContain(message);
    }
  });

  it("adds a member, changes the role, keeps the last owner, and removes the member", async () => {
    const { cookie, csrf } = await signIn();
    const owner = await signUp(svc, uniqueEmail("org-members-owner"));
    const member = await signUp(svc, uniqueEmail("org-members-member"));
    const orgId = await createOrg(cookie, csrf, "Members Inc", owner.user.email);
    const path = `/orgs/${orgId}`;

    const added = await postForm(
      `${path}/members/add`,
      { csrf, email: member.user.email, role: "admin" },
      cookie,
    );
    expect(added.headers.get("location")).toContain("done=member-added");
    const again = await postForm(
      `${path}/members/add`,
      { csrf, email: member.user.email, role: "member" },
      cookie,
    );
    expect(again.status).toBe(400);
    expect(await again.text()).toContain("a member already");
    const unknown = await postForm(
      `${path}/members/add`,
      { csrf, email: uniqueEmail("nope"), role: "member" },
      cookie,
    );
    expect(await unknown.text()).toContain("invite the address instead");
    const badRole = await postForm(
      `${path}/members/${member.user.id}/role`,
      { csrf, role: "emperor" },
      cookie,
    );
    expect(badRole.status).toBe(400);
    expect(await badRole.text()).toContain("role: must be one of owner, admin, member");

    // Threat: the org left without an owner (the last one demoted or removed).
    const demoted = await postForm(`${path}/members/${owner.user.id}/role`, { csrf, role: "member" }, cookie);
    expect(demoted.status).toBe(400);
    expect(await demoted.text()).toContain("at least one owner");
    const lastRemoved = await postForm(`${path}/members/${owner.user.id}/remove`, { csrf }, cookie);
    expect(await lastRemoved.text()).toContain("at least one owner");

    const promoted = await postForm(
      `${path}/members/${member.user.id}/role`,
      { csrf, role: "owner" },
      cookie,
    );
    expect(promoted.headers.get("location")).toContain("done=saved");
    const removed = await postForm(`${path}/members/${owner.user.id}/remove`, { csrf }, cookie);
    expect(removed.headers.get("location")).toContain("done=member-removed");
    const page = await getPage(cookie, path);
    expect(page.text).toContain(member.user.email);
    expect(page.text).not.toContain(owner.user.email);
    expect(await auditTypesOf(member.user.id)).toEqual(
      expect.arrayContaining(["admin.org.member.add", "admin.org.member.role"]),
    );
    expect(await auditTypesOf(owner.user.id)).toContain("admin.org.member.remove");
  });

  it("sends an invitation by mail, lists it and withdraws it", async () => {
    const { cookie, csrf } = await signIn();
    const owner = await signUp(svc, uniqueEmail("org-invite-owner"));
    const orgId = await createOrg(cookie, csrf, "Invites Ltd", owner.user.email);
    const invited = uniqueEmail("org-invited");
    const sent = await postForm(
      `/orgs/${orgId}/invitations/create`,
      { csrf, email: invited, role: "member" },
      cookie,
    );
    expect(sent.headers.get("location")).toContain("done=invitation-sent");
    expect((await mailbox(svc, invited)).length).toBe(1);
    const page = await getPage(cookie, `/orgs/${orgId}`);
    expect(page.text).toContain(invited);
    const invitationId = new RegExp(`/orgs/${orgId}/invitations/([^/]+)/delete`).exec(page.text)![1]!;
    const withdrawn = await postForm(`/orgs/${orgId}/invitations/${invitationId}/delete`, { csrf }, cookie);
    expect(withdrawn.headers.get("location")).toContain("done=invitation-withdrawn");
    expect((await getPage(cookie, `/orgs/${orgId}`)).text).toContain("No pending invitation.");
  });

  it("edits and deletes an organization, the deletion only when confirmed", async () => {
    const { cookie, csrf } = await signIn();
    const owner = await signUp(svc, uniqueEmail("org-edit"));
    const orgId = await createOrg(cookie, csrf, "Before", owner.user.email);
    const tag = crypto.randomUUID().slice(0, 8);
    const saved = await postForm(
      `/orgs/${orgId}/edit`,
      { csrf, name: "After", slug: `after-${tag}` },
      cookie,
    );
    expect(saved.headers.get("location")).toContain("done=saved");
    expect((await getPage(cookie, `/orgs/${orgId}`)).text).toContain(`after-${tag}`);
    const unconfirmed = await postForm(`/orgs/${orgId}/delete`, { csrf }, cookie);
    expect(unconfirmed.status).toBe(403);
    expect((await getPage(cookie, `/orgs/${orgId}`)).status).toBe(200);
    const deleted = await postForm(`/orgs/${orgId}/delete`, { csrf, confirm: "yes" }, cookie);
    expect(deleted.headers.get("location")).toContain("done=org-deleted");
    expect((await getPage(cookie, `/orgs/${orgId}`)).status).toBe(404);
  });

  // Threat: a SCIM token readable again after its creation (a console page, a URL, a log): it is shown once, on the
  // page answering the post, and the org's page never shows it again; revoked, the IdP's next request is refused.
  it("creates a SCIM token shown once, lists it without its value, and revokes it", async () => {
    const { cookie, csrf } = await signIn();
    const owner = await signUp(svc, uniqueEmail("org-scim"));
    const orgId = await createOrg(cookie, csrf, "Provisioned", owner.user.email);
    const created = await postForm(`/orgs/${orgId}/scim-tokens/create`, { csrf, name: "Entra ID" }, cookie);
    expect(created.status).toBe(200);
    const html = await created.text();
    const token = /<code class="secret">(scim_[A-Za-z0-9_-]+)<\/code>/.exec(html)![1]!;
    expect(created.headers.get("cache-control")).toBe("no-store");
    const scim = (bearer: string) =>
      svc.request("GET", "/scim/v2/Users", { headers: { authorization: `Bearer ${bearer}` } });
    expect((await scim(token)).status).toBe(200);

    const page = await getPage(cookie, `/orgs/${orgId}`);
    expect(page.text).toContain("Entra ID");
    expect(page.text).not.toContain(token);
    const tokenId = new RegExp(`/orgs/${orgId}/scim-tokens/([^/]+)/revoke`).exec(page.text)![1]!;
    const revoked = await postForm(`/orgs/${orgId}/scim-tokens/${tokenId}/revoke`, { csrf }, cookie);
    expect(revoked.headers.get("location")).toContain("done=scim-token-revoked");
    expect((await scim(token)).status).toBe(401);
    expect((await getPage(cookie, `/orgs/${orgId}`)).text).toContain("No SCIM token.");
  });

  // Threats: cross-site request forgery against the console (another origin, a missing or another session's CSRF
  // token), and a path naming no organization.
  it("refuses actions from another origin or without the CSRF token, and answers an unknown org with 404", async () => {
    const { cookie, csrf } = await signIn();
    const owner = await signUp(svc, uniqueEmail("org-csrf"));
    const orgId = await createOrg(cookie, csrf, "Guarded", owner.user.email);
    const forged = await postForm(
      `/orgs/${orgId}/delete`,
      { csrf, confirm: "yes" },
      cookie,
      "https://evil.example",
    );
    expect(forged.status).toBe(403);
    const tokenless = await postForm(`/orgs/${orgId}/delete`, { confirm: "yes" }, cookie);
    expect(tokenless.status).toBe(403);
    expect((await getPage(cookie, `/orgs/${orgId}`)).status).toBe(200);
    expect((await getPage(cookie, "/orgs/not-an-org")).status).toBe(404);
    const onUnknown = await postForm(
      "/orgs/not-an-org/members/add",
      { csrf, email: owner.user.email },
      cookie,
    );
    expect(onUnknown.status).toBe(404);
    // Without a console session: the sign-in form.
    expect((await svc.request("GET", `${BASE}/orgs`)).status).toBe(401);
  });

  it("adds a SAML connection from metadata, a domain marked verified, enforces SSO, and removes them", async () => {
    const { cookie, csrf } = await signIn();
    const owner = await signUp(svc, uniqueEmail("org-sso"));
    const orgId = await createOrg(cookie, csrf, "Federated", owner.user.email);
    const path = `/orgs/${orgId}`;
    // Enforcing SSO before any connection would lock the domains' people out: refused.
    const early = await postForm(`${path}/enforce-sso`, { csrf, enforce: "on" }, cookie);
    expect(early.status).toBe(400);
    expect(await early.text()).toContain("add and enable a connection");

    const saml = await postForm(
      `${path}/connections/saml`,
      { csrf, metadataXml: idpMetadataXml(), defaultRole: "member" },
      cookie,
    );
    expect(saml.headers.get("location")).toContain("done=connection-added");
    const domain = `${crypto.randomUUID().slice(0, 8)}.example.org`;
    expect(
      (await postForm(`${path}/domains/add`, { csrf, domain }, cookie)).headers.get("location"),
    ).toContain("done=domain-added");
    // Threat: claiming a public mail domain (every gmail.com user routed to this org's IdP).
    const publicDomain = await postForm(`${path}/domains/add`, { csrf, domain: "gmail.com" }, cookie);
    expect(publicDomain.status).toBe(400);
    const verified = await postForm(`${path}/domains/${domain}/verify`, { csrf, how: "admin" }, cookie);
    expect(verified.headers.get("location")).toContain("done=domain-verified");
    const enforced = await postForm(`${path}/enforce-sso`, { csrf, enforce: "on" }, cookie);
    expect(enforced.headers.get("location")).toContain("done=sso-enforced");
    const page = await getPage(cookie, path);
    expect(page.text).toContain("SAML");
    expect(page.text).toContain(domain);
    expect(page.text).toContain("Stop enforcing SSO");

    const connectionId = new RegExp(`${path}/connections/([^/]+)/delete`).exec(page.text)![1]!;
    expect((await postForm(`${path}/enforce-sso`, { csrf, enforce: "off" }, cookie)).status).toBe(303);
    expect((await postForm(`${path}/connections/${connectionId}/delete`, { csrf }, cookie)).status).toBe(303);
    expect((await postForm(`${path}/domains/${domain}/delete`, { csrf }, cookie)).status).toBe(303);
    const after = await getPage(cookie, path);
    expect(after.text).toContain("No connection.");
    expect(after.text).toContain("No domain.");
  });
});
