// AuthZEN's Subject Search and Resource Search (contract platform.md §2, the search APIs) at the host's root: the
// service's users, and the resources with a stored relationship, each evaluated as an evaluation request would be;
// the permitted ones answered page by page, every page's cost bounded. Run with storage of its own
// (vitest.config.ts NEEDS_OWN_STORAGE): a subject search walks every user, so the users are this file's alone.
import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { loadCedar } from "../../src/permissions/cedar";
import { SERVER, service, type TestService } from "../helpers";
import { failingD1 } from "../support/faults";
import { userD1 } from "../support/shards";
import { ADMIN, admin, SERVICE_SCHEMA, usePolicies, userWith } from "./support";

const svc = service();

const SCHEMA = `${SERVICE_SCHEMA}
entity document { editors?: Set<User> };
action view, edit appliesTo { principal: User, resource: document };
`;
const POLICIES = `
@id("editors") permit (principal, action == Action::"edit", resource is document)
  when { resource has editors && principal in resource.editors };
@id("admin") permit (principal in Role::"admin", action, resource);
`;

type Found = { results: { type: string; id: string }[]; page?: { next_token: string } };

const search = (kind: "subject" | "resource", body: unknown, through: TestService = svc) =>
  through.request("POST", `${SERVER}/access/v1/search/${kind}`, {
    body: JSON.stringify(body),
    headers: { "content-type": "application/json", ...ADMIN },
  });

/** Every page of a search, followed by its tokens. */
async function allPages(kind: "subject" | "resource", body: Record<string, unknown>, limit: number) {
  const found: string[] = [];
  let token: string | undefined;
  let pages = 0;
  do {
    const response = await search(kind, { ...body, page: { limit, ...(token ? { token } : {}) } });
    expect(response.status, await response.clone().text()).toBe(200);
    const page = (await response.json()) as Found;
    expect(page.results.length).toBeLessThanOrEqual(limit);
    found.push(...page.results.map((result) => result.id));
    token = page.page?.next_token;
    pages++;
  } while (token && pages < 50);
  return { found, pages };
}

let ana: { id: string };
let bob: { id: string };
let root: { id: string };

// Cedar's first load in this file's own workerd (test/preload-cedar.ts says why it is not in a test's budget).
beforeAll(() => loadCedar(), 60_000);

beforeAll(async () => {
  await usePolicies(svc, SCHEMA, POLICIES);
  [ana, bob, root] = [
    await userWith(svc, ["user"]),
    await userWith(svc, ["user"]),
    await userWith(svc, ["admin"]),
  ];
  for (const doc of ["d1", "d2", "d3"]) {
    const related = await admin(svc, "POST", "/admin/authz/relationships", {
      resource: { type: "document", id: doc },
      relation: "editors",
      subject: { type: "User", id: doc === "d2" ? bob.id : ana.id },
    });
    expect(related.status).toBe(201);
  }
});

describe("AuthZEN search", () => {
  it("subject search: every user who may, through a relationship or a role, page by page", async () => {
    const body = {
      subject: { type: "user" },
      action: { name: "edit" },
      resource: { type: "document", id: "d1" },
    };
    const { found, pages } = await allPages("subject", body, 1);
    expect(found.toSorted()).toEqual([ana.id, root.id].toSorted());
    expect(pages).toBeGreaterThanOrEqual(2);
    // A subject of another type is no user of the service: refused, not answered empty.
    const other = await search("subject", { ...body, subject: { type: "group" } });
    expect(other.status).toBe(400);
  });

  it("resource search: the documents with a stored relationship the user may edit; an admin all of them", async () => {
    const body = (id: string) => ({
      subject: { type: "user", id },
      action: { name: "edit" },
      resource: { type: "document" },
    });
    expect((await allPages("resource", body(ana.id), 1)).found).toEqual(["d1", "d3"]);
    expect((await allPages("resource", body(bob.id), 10)).found).toEqual(["d2"]);
    expect((await allPages("resource", body(root.id), 2)).found).toEqual(["d1", "d2", "d3"]);
  });

  it("refuses a forged page token, a bad limit and an entity reference, as the evaluation API refuses bad input", async () => {
    const body = {
      subject: { type: "user", id: ana.id },
      action: { name: "edit" },
      resource: { type: "document" },
    };
    // Threat: a token crafted to make the PDP scan from an arbitrary place, or to throw on decoding.
    for (const token of ["not base64 at all!", btoa('{"s":-1,"a":""}'), "x".repeat(2000)]) {
      expect((await search("resource", { ...body, page: { token } })).status).toBe(400);
    }
    expect((await search("resource", { ...body, page: { limit: 0 } })).status).toBe(400);
    const smuggled = { ...body, context: { x: { __entity: { type: "Role", id: "admin" } } } };
    expect((await search("resource", smuggled)).status).toBe(400);
    expect(
      (
        await search("subject", {
          ...escape,
          subject: { type: "user" },
          resource: { type: "document", id: "d1" },
        })
      ).status,
    ).toBe(400);
  });

  // Threat: text Cedar's parser cannot read. A lone UTF-16 surrogate (JSON's `\ud800`) made Cedar's WASM throw, so
  // a PEP forwarding a user's id got a 500, and one user who put one in their own metadata made every evaluation
  // about them, and every subject search that reached them, a 500 for every PEP. A resource id outside Latin-1 made
  // the page token (`btoa`) throw.
  it("text: a lone surrogate in a request is 400; one in a user's metadata searches as any user; any id pages", async () => {
    const lone = "\ud800";
    const body = { subject: { type: "user", id: ana.id }, action: { name: "edit" } };
    for (const bad of [
      { ...body, resource: { type: "document", id: `d${lone}` } },
      { ...body, resource: { type: "document", id: "d1" }, context: { [`k${lone}`]: 1 } },
    ]) {
      const answer = await svc.request("POST", `${SERVER}/access/v1/evaluation`, {
        body: JSON.stringify(bad),
        headers: { "content-type": "application/json", ...ADMIN },
      });
      expect(answer.status, await answer.clone().text()).toBe(400);
      expect(await answer.text()).toContain("well-formed");
    }
    const odd = await userWith(svc, ["user"]);
    // The API refuses such metadata now; a row from before (or an import) may still hold it.
    const refused = await admin(svc, "PATCH", `/admin/users/${odd.id}`, { metadata: { nick: `x${lone}` } });
    expect(refused.status).toBe(400);
    await userD1(odd.id)
      .prepare("UPDATE users SET metadata = ? WHERE id = ?")
      .bind(JSON.stringify({ [`nick${lone}`]: `x${lone}` }), odd.id)
      .run();
    const subjects = await allPages(
      "subject",
      { ...body, subject: { type: "user" }, resource: { type: "document", id: "d1" } },
      2,
    );
    expect(subjects.found).toContain(ana.id);
    const about = await svc.request("POST", `${SERVER}/access/v1/evaluation`, {
      body: JSON.stringify({
        ...body,
        subject: { type: "user", id: odd.id },
        resource: { type: "document", id: "d1" },
      }),
      headers: { "content-type": "application/json", ...ADMIN },
    });
    expect(await about.json()).toMatchObject({ decision: false });

    for (const id of ["文档-1", "文档-2"]) {
      const related = await admin(svc, "POST", "/admin/authz/relationships", {
        resource: { type: "document", id },
        relation: "editors",
        subject: { type: "User", id: odd.id },
      });
      expect(related.status).toBe(201);
    }
    const documents = await allPages(
      "resource",
      { ...body, subject: { type: "user", id: odd.id }, resource: { type: "document" } },
      1,
    );
    expect(documents.found.toSorted()).toEqual(["文档-1", "文档-2"]);
    // Stored ids are refused malformed too, and so are Cedar texts (Cedar's parser throws on them).
    const stored = await admin(svc, "POST", "/admin/authz/relationships", {
      resource: { type: "document", id: `d${lone}` },
      relation: "editors",
      subject: { type: "User", id: odd.id },
    });
    expect(stored.status).toBe(400);
    expect((await admin(svc, "PUT", "/admin/authz/schema", { schema: `entity A${lone};` })).status).toBe(400);
    expect(
      (
        await admin(svc, "PUT", "/admin/authz/policies", {
          policies: `permit (principal, action, resource) when { "${lone}" == "a" };`,
        })
      ).status,
    ).toBe(400);
  });

  it("answers 503 in AuthZEN's shape while D1 fails, and the same search once it is back", async () => {
    // Threat: a D1 failure mid-scan turning into a 500, or into a partial page passed off as the whole answer.
    const { binding, fault } = failingD1(env.DB, { match: /authz_relationships|from "users"/ });
    const broken = service({ DB: binding });
    const body = {
      subject: { type: "user", id: ana.id },
      action: { name: "edit" },
      resource: { type: "document" },
    };
    const subjects = {
      subject: { type: "user" },
      action: { name: "edit" },
      resource: { type: "document", id: "d1" },
    };
    for (const [kind, sent] of [
      ["resource", body],
      ["subject", subjects],
    ] as const) {
      const refused = await search(kind, sent, broken);
      expect(refused.status, kind).toBe(503);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(typeof (await refused.json())).toBe("string");
    }
    fault.heal();
    const answered = await search("resource", body, broken);
    expect(((await answered.json()) as Found).results.map((result) => result.id)).toEqual(["d1", "d3"]);
  });
});
