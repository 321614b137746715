// The console's setup links (contract operators.md §5) over HTTP: made from an org's page (the URL shown once, on the
// page answering the post), the IT admin's progress shown on the org's page, revoked from it; audited as the admin
// API's are, behind the console's Origin and CSRF check.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { NO_VERIFICATION, SERVER, service, signUp, uniqueAddress, uniqueEmail } from "../helpers";
import { Browser } from "../setup-links/support";
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

describe("the console's setup links", () => {
  it("makes a link shown once, shows what the IT admin did through it, and revokes it", async () => {
    const { cookie, csrf } = await signIn();
    const owner = await signUp(svc, uniqueEmail("setup-owner"));
    const made = await postForm(
      "/orgs/create",
      { csrf, name: "Setup Co", slug: "", ownerEmail: owner.user.email },
      cookie,
    );
    const orgId = /\/orgs\/([^?]+)/.exec(made.headers.get("location")!)![1]!;

    // Threat: a forged post (another origin) making a link the attacker would then see.
    expect(
      (
        await postForm(
          `/orgs/${orgId}/setup-links/create`,
          { csrf, sso: "yes" },
          cookie,
          "https://evil.example",
        )
      ).status,
    ).toBe(403);
    const none = await postForm(`/orgs/${orgId}/setup-links/create`, { csrf, days: "7" }, cookie);
    expect(none.status).toBe(400);
    const created = await postForm(
      `/orgs/${orgId}/setup-links/create`,
      { csrf, domains: "yes", sso: "yes", days: "3" },
      cookie,
    );
    expect(created.status).toBe(200);
    const page = await created.text();
    const url = /<code class="secret">([^<]+)<\/code>/.exec(page)![1]!.replace(/&amp;/g, "&");
    expect(url).toMatch(/\/setup\/open\?link=/);

    const browser = new Browser(svc, uniqueAddress());
    await browser.open(url);
    const domain = `console-${crypto.randomUUID().slice(0, 8)}.test`;
    expect((await browser.post("/setup/domains", { domain })).status).toBe(303);

    // A connection made through the link: the console turns it on only once its test passed (sso's own rule).
    const guide = await (await browser.get("/setup/sso/new?idp=saml")).text();
    const connectionId = /name="connectionId" value="([^"]+)"/.exec(guide)![1]!;
    expect(
      (await browser.post("/setup/sso", { idp: "saml", connectionId, metadataXml: idpMetadataXml() })).status,
    ).toBe(303);
    const early = await postForm(
      `/orgs/${orgId}/setup-links/connections/${connectionId}/enable`,
      { csrf },
      cookie,
    );
    expect(early.status).toBe(400);
    expect(await early.text()).toContain("has not passed its test round trip");
    // The round trip itself is test/setup-links/walk.test.ts's; here its outcome as recorded.
    await env.DB.prepare("UPDATE sso_connections SET tested_at = ?, last_test = ? WHERE id = ?")
      .bind(Date.now(), JSON.stringify({ at: Date.now(), ok: true, email: "a@b.test" }), connectionId)
      .run();
    const withTest = await (
      await svc.request("GET", `${BASE}/orgs/${orgId}`, { headers: { cookie } })
    ).text();
    expect(withTest).toContain("test passed");
    const on = await postForm(
      `/orgs/${orgId}/setup-links/connections/${connectionId}/enable`,
      { csrf },
      cookie,
    );
    expect(on.headers.get("location")).toContain("done=connection-enabled");

    const orgPage = await (await svc.request("GET", `${BASE}/orgs/${orgId}`, { headers: { cookie } })).text();
    expect(orgPage).toContain("Connections: 1 made, 1 tested, 1 on");
    expect(orgPage).toContain("Setup links");
    expect(orgPage).toContain("domains, sso");
    expect(orgPage).toContain("Domains: 0 verified of 1 claimed");
    expect(orgPage).not.toContain(url.split("link=")[1]!);
    const linkId = new RegExp(`/orgs/${orgId}/setup-links/([^/]+)/revoke`).exec(orgPage)![1]!;
    const revoked = await postForm(`/orgs/${orgId}/setup-links/${linkId}/revoke`, { csrf }, cookie);
    expect(revoked.headers.get("location")).toContain("done=setup-link-revoked");
    expect((await browser.get("/setup")).status).toBe(404);
    const { results } = await env.DB.prepare("SELECT type FROM audit_events WHERE detail LIKE ?")
      .bind(`%${linkId}%`)
      .all<{ type: string }>();
    expect(results.map((row) => row.type)).toEqual(
      expect.arrayContaining([
        "admin.setup-link.create",
        "setup-link.opened",
        "setup-link.domain-claimed",
        "admin.setup-link.revoke",
      ]),
    );
  });
});
