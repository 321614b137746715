// Permissions in the console (contract platform.md §2: policies "validated, versioned, edited and tried in the
// console"), over HTTP as a browser posts its forms: the schema and the policy set validated without saving, saved,
// refused with Cedar's message while the set in force stays; a request tried against what is in force; relationships
// added, shown and deleted. Every change is audited under the admin API's names and passes the console's CSRF check.
import { env } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SERVER, service } from "../helpers";
import { admin, SERVICE_SCHEMA, userWith } from "./support";

const svc = service();
const SECRET = String(env.AUTH_ADMIN_SECRET);
const BASE = "/admin/console";
const ORIGIN = new URL(SERVER).origin;

const SCHEMA = `${SERVICE_SCHEMA}
entity Document { owner?: String, editors?: Set<User> };
action view, edit appliesTo { principal: User, resource: Document };
`;
const POLICIES = `@id("owners-view")
permit (principal, action == Action::"view", resource) when { resource has owner && principal has email && resource.owner == principal.email };
@id("editors-edit")
permit (principal, action == Action::"edit", resource) when { resource has editors && principal in resource.editors };
`;

const postForm = (path: string, values: Record<string, string>, cookie: string) =>
  svc.request("POST", `${BASE}${path}`, {
    body: new URLSearchParams(values).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN, cookie },
  });

let cookie: string;
let csrf: string;
/** What was in force before this file, put back after it (the workerd and its D1 are shared by the project's files). */
let before: { schema: string | null; policies: string | null };

/** The admin actions on permissions the audit holds (they concern no user: the home database's rows). */
const authzAudit = async () =>
  (
    await env.DB.prepare("SELECT type FROM audit_events WHERE type LIKE 'admin.authz.%'").all<{
      type: string;
    }>()
  ).results.map((row) => row.type);

const textOf = async (kind: "schema" | "policies") =>
  ((await (await admin(svc, "GET", `/admin/authz/${kind}`)).json()) as Record<string, string | null>)[kind] ??
  null;

beforeAll(async () => {
  before = { schema: await textOf("schema"), policies: await textOf("policies") };
  const login = await postForm("/login", { secret: SECRET }, "");
  cookie = login.headers.get("set-cookie")!.split(";")[0]!;
  const page = await (await svc.request("GET", BASE, { headers: { cookie } })).text();
  csrf = /name="csrf" value="([^"]+)"/.exec(page)![1]!;
});

afterAll(async () => {
  // An empty set validates against any schema: the old schema can then come back, and its policies after it.
  await admin(svc, "PUT", "/admin/authz/policies", { policies: "" });
  if (before.schema) await admin(svc, "PUT", "/admin/authz/schema", { schema: before.schema });
  if (before.policies !== null)
    await admin(svc, "PUT", "/admin/authz/policies", { policies: before.policies });
});

describe("the console's permissions", () => {
  it("validates without saving, saves, and refuses a policy set Cedar rejects while the one in force stays", async () => {
    const saved = await postForm("/permissions/schema", { csrf, intent: "save", text: SCHEMA }, cookie);
    expect(saved.status, await saved.clone().text()).toBe(303);
    expect(saved.headers.get("location")).toContain("done=schema-saved");
    expect(await textOf("schema")).toBe(SCHEMA);

    // Validate: Cedar's word, nothing written.
    const checked = await postForm(
      "/permissions/policies",
      { csrf, intent: "validate", text: POLICIES },
      cookie,
    );
    const checkedPage = await checked.text();
    expect(checked.status, /role="alert">([^<]*)/.exec(checkedPage)?.[1]).toBe(200);
    expect(checkedPage).toContain("Valid: nothing is saved yet.");
    expect(await textOf("policies")).not.toBe(POLICIES);

    const stored = await postForm("/permissions/policies", { csrf, intent: "save", text: POLICIES }, cookie);
    expect(stored.status).toBe(303);
    expect(await textOf("policies")).toBe(POLICIES);

    // Threat: a policy naming an action the schema lacks silently never matching. Refused, the text kept in its form
    // with Cedar's message, the set in force unchanged.
    const broken = `${POLICIES}\npermit (principal, action == Action::"destroy", resource);`;
    const refused = await postForm("/permissions/policies", { csrf, intent: "save", text: broken }, cookie);
    expect(refused.status).toBe(400);
    const page = await refused.text();
    expect(page).toContain('role="alert"');
    expect(page).toContain("destroy");
    expect(page).toContain("Action::&quot;destroy&quot;");
    expect(await textOf("policies")).toBe(POLICIES);

    // A schema the policies in force fail is refused too.
    const narrower = await postForm(
      "/permissions/schema",
      { csrf, intent: "save", text: SERVICE_SCHEMA },
      cookie,
    );
    expect(narrower.status).toBe(400);
    expect(await textOf("schema")).toBe(SCHEMA);

    const types = await authzAudit();
    expect(types).toContain("admin.authz.schema");
    expect(types).toContain("admin.authz.policies");
  });

  it("tries a request against what is in force, and stores, shows and deletes relationships", async () => {
    const ana = await userWith(svc, ["user"]);
    const doc = `doc-${crypto.randomUUID()}`;
    const tryEdit = () =>
      postForm(
        "/permissions/try",
        {
          csrf,
          subject: ana.email,
          action: "edit",
          resourceType: "Document",
          resourceId: doc,
          properties: "{}",
          context: "{}",
        },
        cookie,
      );
    expect(await (await tryEdit()).text()).toContain("Denied");

    const tuple = {
      resourceType: "Document",
      resourceId: doc,
      relation: "editors",
      subjectType: "User",
      subjectId: ana.id,
    };
    const added = await postForm("/permissions/relationships/add", { csrf, ...tuple }, cookie);
    expect(added.status).toBe(303);
    const listed = await svc.request("GET", `${BASE}/permissions?resourceType=Document&resourceId=${doc}`, {
      headers: { cookie },
    });
    expect(await listed.text()).toContain(`User::"${ana.id}"`);
    const allowed = await (await tryEdit()).text();
    expect(allowed).toContain("Allowed");
    expect(allowed).toContain("editors-edit");

    // The owner policy through the request's properties, as a PEP sends them.
    const view = await postForm(
      "/permissions/try",
      {
        csrf,
        subject: ana.id,
        action: "view",
        resourceType: "Document",
        resourceId: doc,
        properties: JSON.stringify({ owner: ana.email }),
        context: "{}",
      },
      cookie,
    );
    expect(await view.text()).toContain("owners-view");

    // Threat: the console as a door around the rule that a caller never grants itself a relationship by sending it.
    const smuggled = await postForm(
      "/permissions/try",
      {
        csrf,
        subject: ana.id,
        action: "edit",
        resourceType: "Document",
        resourceId: "other",
        properties: JSON.stringify({ editors: [{ __entity: { type: "User", id: ana.id } }] }),
        context: "{}",
      },
      cookie,
    );
    expect(smuggled.status).toBe(400);
    const badJson = await postForm(
      "/permissions/try",
      {
        csrf,
        subject: ana.id,
        action: "edit",
        resourceType: "Document",
        resourceId: doc,
        properties: "[",
        context: "{}",
      },
      cookie,
    );
    expect(badJson.status).toBe(400);
    expect(await badJson.text()).toContain("must be a JSON object");

    const removed = await postForm("/permissions/relationships/remove", { csrf, ...tuple }, cookie);
    expect(removed.status).toBe(303);
    expect(await (await tryEdit()).text()).toContain("Denied");
    const again = await postForm("/permissions/relationships/remove", { csrf, ...tuple }, cookie);
    expect(again.status).toBe(400);
    expect(await again.text()).toContain("no such relationship");

    const types = await authzAudit();
    expect(types).toContain("admin.authz.relationship.add");
    expect(types).toContain("admin.authz.relationship.delete");
  });

  it("refuses a change without the session's CSRF token, and escapes what it shows", async () => {
    // Threat: another site's page posting a policy set through the operator's console cookie.
    const forged = await postForm("/permissions/policies", { intent: "save", text: "" }, cookie);
    expect(forged.status).toBe(403);
    expect(await textOf("policies")).toBe(POLICIES);

    const page = await svc.request(
      "GET",
      `${BASE}/permissions?resourceType=Document&resourceId=${encodeURIComponent("<script>x</script>")}`,
      {
        headers: { cookie },
      },
    );
    const text = await page.text();
    expect(text).not.toContain("<script>x</script>");
    expect(text).toContain("&lt;script&gt;x&lt;/script&gt;");
  });
});
