// Permissions' rules (contract platform.md §2) through the admin API and the AuthZEN endpoint: a policy set refused
// with Cedar's message keeps the one in force (threat: one typo in an admin's edit denying, or allowing, everything);
// what the service knows always wins (threat: a PEP, or whoever can shape its request, granting itself a role or a
// relationship by sending it); a deleted user is nobody; sharing through stored relationships, organization roles and
// an admin override; a change seen within one second, and what goes when a user or an organization does.
import { createMessageBatch, env } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StreamEvent } from "../../src/events/types";
import { evaluate } from "../../src/permissions";
import { handleQueueBatch } from "../../src/runtime/consumers";
import { service, testDeps } from "../helpers";
import { failingD1 } from "../support/faults";
import { ADMIN, access, admin, SERVICE_SCHEMA, usePolicies, userWith } from "./support";

const svc = service();

const SCHEMA = `${SERVICE_SCHEMA}
entity document { owner?: String, editors?: Set<User>, viewers?: Set<User>, org?: Set<Org>, level?: Long };
action view, edit appliesTo { principal: User, resource: document, context: { ip?: String } };
`;
/** Own resources, sharing, an organization's members, an admin override; `@id`s name them in the reasons. */
const POLICIES = `
@id("own") permit (principal, action, resource is document)
  when { resource has owner && principal has email && resource.owner == principal.email };
@id("editors") permit (principal, action in [Action::"view", Action::"edit"], resource is document)
  when { resource has editors && principal in resource.editors };
@id("viewers") permit (principal, action == Action::"view", resource is document)
  when { resource has viewers && principal in resource.viewers };
@id("org-members-view") permit (principal, action == Action::"view", resource is document)
  when { resource has org && principal in resource.org };
@id("admin") permit (principal in Role::"admin", action, resource);
`;

const check = (subject: string, action: string, resource: Record<string, unknown>, context?: unknown) =>
  access(
    svc,
    "evaluation",
    {
      subject: { type: "user", id: subject },
      action: { name: action },
      resource,
      ...(context ? { context } : {}),
    },
    ADMIN,
  );
const decision = async (...args: Parameters<typeof check>) => {
  const response = await check(...args);
  expect(response.status, await response.clone().text()).toBe(200);
  return ((await response.json()) as { decision: boolean }).decision;
};
const doc = (id: string, properties?: Record<string, unknown>) => ({
  type: "document",
  id,
  ...(properties ? { properties } : {}),
});
const relate = (
  method: "POST" | "DELETE",
  resource: string,
  relation: string,
  subject: { type: string; id: string },
) =>
  admin(svc, method, "/admin/authz/relationships", {
    resource: { type: "document", id: resource },
    relation,
    subject,
  });

beforeAll(() => usePolicies(svc, SCHEMA, POLICIES));
afterAll(async () => {
  await admin(svc, "PUT", "/admin/authz/policies", { policies: "" });
});

describe("the policy set", () => {
  it("is refused with Cedar's message when it does not parse or validate, and the set in force stays", async () => {
    const ana = await userWith(svc, ["user"]);
    const before = (await (await admin(svc, "GET", "/admin/authz/policies")).json()) as {
      policies: string;
      version: number;
      versions: { version: number }[];
    };
    expect(before.policies).toBe(POLICIES);
    const syntax = await admin(svc, "PUT", "/admin/authz/policies", {
      policies: "permit (principal, action",
    });
    expect(syntax.status).toBe(400);
    expect(((await syntax.json()) as { message: string }).message).toMatch(/unexpected|expected/i);
    // Parses, but names an attribute the schema does not have: strict validation refuses it.
    const invalid = await admin(svc, "PUT", "/admin/authz/policies", {
      policies: 'permit (principal, action, resource is document) when { resource.colour == "red" };',
    });
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as { message: string }).message).toMatch(/colour/);
    // A schema the policies in force do not validate against is refused too.
    const schema = await admin(svc, "PUT", "/admin/authz/schema", {
      schema: `${SERVICE_SCHEMA} entity document;`,
    });
    expect(schema.status).toBe(400);
    // Text Cedar's parser throws on rather than answers (a lone surrogate): refused with the field named.
    for (const [path, field] of [
      ["/admin/authz/policies", "policies"],
      ["/admin/authz/schema", "schema"],
    ] as const) {
      const lone = await svc.request("PUT", path, {
        headers: { ...ADMIN, "content-type": "application/json" },
        body: `{"${field}":"entity d\\ud800;"}`,
      });
      expect(lone.status).toBe(400);
      expect(((await lone.json()) as { message: string }).message).toMatch(
        new RegExp(`^${field}: text that is not well-formed Unicode`),
      );
    }
    const after = (await (await admin(svc, "GET", "/admin/authz/policies")).json()) as typeof before;
    expect(after).toEqual(before);
    expect(await decision(ana.id, "view", doc("kept", { owner: ana.email }))).toBe(true);
    // An older version reads back by its number.
    const old = await admin(svc, "GET", `/admin/authz/policies?version=${before.version}`);
    expect(await old.json()).toMatchObject({ policies: POLICIES, version: before.version });
  });
});

describe("what the service knows always wins", () => {
  it("refuses with 400 properties naming the service's attributes, and Cedar's entity escapes anywhere", async () => {
    const eve = await userWith(svc, ["user"]);
    await relate("POST", "secret-plan", "editors", { type: "User", id: crypto.randomUUID() });
    const refused: [string, Parameters<typeof check>][] = [
      ["a role sent as a subject property", [eve.id, "edit", doc("x"), undefined]],
      ["a stored relation sent as a property", [eve.id, "edit", doc("secret-plan", { editors: [eve.id] })]],
      [
        "an entity reference as a property",
        [eve.id, "edit", doc("x", { editors: [{ __entity: { type: "User", id: eve.id } }] })],
      ],
      [
        "an entity reference in the context",
        [eve.id, "edit", doc("x"), { deep: { list: [{ __entity: { type: "Role", id: "admin" } }] } }],
      ],
      [
        "an extension value",
        [eve.id, "edit", doc("x", { level: { __extn: { fn: "decimal", arg: "1.0" } } })],
      ],
      [
        "properties on a service entity",
        [eve.id, "edit", { type: "User", id: eve.id, properties: { roles: ["admin"] } }],
      ],
    ];
    for (const [what, args] of refused) {
      const request =
        what === "a role sent as a subject property"
          ? access(
              svc,
              "evaluation",
              {
                subject: { type: "user", id: eve.id, properties: { roles: ["admin"] } },
                action: { name: "edit" },
                resource: doc("x"),
              },
              ADMIN,
            )
          : check(...args);
      const response = await request;
      expect(response.status, what).toBe(400);
      expect(typeof (await response.json()), what).toBe("string");
    }
  });

  it("answers false about a user that does not exist or was deleted, found by id or email", async () => {
    const gone = await userWith(svc, ["admin"]);
    expect((await admin(svc, "DELETE", `/admin/users/${gone.id}`)).status).toBe(204);
    expect(await decision(gone.id, "view", doc("any"))).toBe(false);
    expect(await decision(gone.email, "view", doc("any"))).toBe(false);
    expect(await decision(crypto.randomUUID(), "view", doc("any"))).toBe(false);
  });
});

describe("policies over the service's data", () => {
  it("allows through a stored relationship (principal in resource.editors) until it is deleted", async () => {
    const [ana, bob] = [await userWith(svc, ["user"]), await userWith(svc, ["user"])];
    const id = `doc-${crypto.randomUUID()}`;
    expect(await decision(ana.id, "edit", doc(id))).toBe(false);
    expect((await relate("POST", id, "editors", { type: "User", id: ana.id })).status).toBe(201);
    expect((await relate("POST", id, "editors", { type: "User", id: ana.id })).status).toBe(200);
    const allowed = await check(ana.email, "edit", doc(id));
    expect(await allowed.json()).toEqual({
      decision: true,
      context: { reason_admin: { policies: ["editors"] } },
    });
    expect(await decision(bob.id, "edit", doc(id))).toBe(false);
    expect((await relate("DELETE", id, "editors", { type: "User", id: ana.id })).status).toBe(204);
    expect((await relate("DELETE", id, "editors", { type: "User", id: ana.id })).status).toBe(404);
    expect(await decision(ana.id, "edit", doc(id))).toBe(false);
  });

  it("allows an organization's members and an org role; an admin role overrides; the owner edits their own", async () => {
    const [owner, member, outsider, root] = [
      await userWith(svc, ["user"]),
      await userWith(svc, ["user"]),
      await userWith(svc, ["user"]),
      await userWith(svc, ["user", "admin"]),
    ];
    const created = await admin(svc, "POST", "/admin/orgs", {
      name: "Permissions Inc",
      ownerUserId: owner.id,
    });
    expect(created.status).toBe(201);
    const org = ((await created.json()) as { id: string }).id;
    expect(
      (await admin(svc, "POST", `/admin/orgs/${org}/members`, { userId: member.id, role: "member" })).status,
    ).toBe(201);
    const id = `doc-${crypto.randomUUID()}`;
    await relate("POST", id, "org", { type: "Org", id: org });
    expect(await decision(member.id, "view", doc(id))).toBe(true);
    expect(await decision(member.id, "edit", doc(id))).toBe(false);
    expect(await decision(outsider.id, "view", doc(id))).toBe(false);
    // Only the org's owners edit: a relationship to the org role, not to the org.
    await relate("POST", id, "editors", { type: "OrgRole", id: `${org}/owner` });
    expect(await decision(owner.id, "edit", doc(id))).toBe(true);
    expect(await decision(member.id, "edit", doc(id))).toBe(false);
    expect(await decision(root.id, "edit", doc(id))).toBe(true);
    expect(await decision(outsider.id, "edit", doc("theirs", { owner: outsider.email }))).toBe(true);
    expect(await decision(outsider.id, "edit", doc("theirs", { owner: owner.email }))).toBe(false);
    // The organization goes, and its relationships with it (the trigger of migration authz).
    expect((await admin(svc, "DELETE", `/admin/orgs/${org}`)).status).toBe(204);
    const left = await env.DB.prepare("SELECT count(*) AS n FROM authz_relationships WHERE resource_id = ?")
      .bind(id)
      .first<{ n: number }>();
    expect(left?.n).toBe(0);
  });

  it("removes a deleted user's relationships on its user.deleted event", async () => {
    const gone = await userWith(svc, ["user"]);
    const id = `doc-${crypto.randomUUID()}`;
    await relate("POST", id, "viewers", { type: "User", id: gone.id });
    const count = () =>
      env.DB.prepare("SELECT count(*) AS n FROM authz_relationships WHERE subject_id = ?")
        .bind(gone.id)
        .first<{ n: number }>();
    expect((await count())?.n).toBe(1);
    const event: StreamEvent = {
      id: `evt_${crypto.randomUUID().replace(/-/g, "")}`,
      type: "user.deleted",
      timestamp: new Date().toISOString(),
      subject: gone.id,
      sequence: 1,
      data: {},
    };
    await handleQueueBatch(
      createMessageBatch("edge-auth-events", [
        { id: event.id, timestamp: new Date(), attempts: 1, body: event },
      ]),
      env,
    );
    expect((await count())?.n).toBe(0);
  });
});

describe("faults", () => {
  // Threat: D1 failing for a moment turning into a 500 (or worse, a decision) instead of a retryable refusal.
  it("answers 503 in AuthZEN's shape while D1 fails, and decides once it is back", async () => {
    const ana = await userWith(svc, ["admin"]);
    const { binding, fault } = failingD1(env.DB, { match: /authz_relationships/ });
    const broken = service({ DB: binding });
    const request = {
      subject: { type: "user", id: ana.id },
      action: { name: "view" },
      resource: doc(`f-${crypto.randomUUID()}`),
    };
    const refused = await access(broken, "evaluation", request, ADMIN);
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(typeof (await refused.json())).toBe("string");
    fault.heal();
    const answered = await access(broken, "evaluation", request, ADMIN);
    expect(await answered.json()).toMatchObject({ decision: true });
  });
});

describe("freshness", () => {
  // Another isolate's view, by the clock it reads: what it cached stays in use for less than one second, then the
  // change (written as any other isolate would, straight to D1) is seen.
  it("sees a new policy set and a user's new roles within one second, not before", async () => {
    const ana = await userWith(svc, ["user"]);
    const clock = { now: Date.now() + 60_000 };
    const deps = testDeps(env, clock);
    const request = {
      subject: { type: "user", id: ana.id },
      action: { name: "edit" },
      resource: doc("fresh"),
    };
    expect(await evaluate(deps, request)).toEqual({ decision: false });
    const version = await env.DB.prepare(
      "INSERT INTO authz_documents (kind, text, created_at) VALUES ('policies', ?, ?) RETURNING id",
    )
      .bind(`${POLICIES}\n@id("all-users") permit (principal in Role::"user", action, resource);`, Date.now())
      .first<{ id: number }>();
    expect(version?.id).toBeGreaterThan(0);
    clock.now += 999;
    expect(await evaluate(deps, request)).toEqual({ decision: false });
    clock.now += 1;
    expect(await evaluate(deps, request)).toEqual({ decision: true, reasons: ["all-users"] });
    // The user loses the role: seen within the second too.
    expect(
      (await admin(svc, "PATCH", `/admin/users/${ana.id}`, { roles: ["guest"], defaultRole: "guest" }))
        .status,
    ).toBe(200);
    clock.now += 999;
    expect((await evaluate(deps, request)).decision).toBe(true);
    clock.now += 1;
    expect((await evaluate(deps, request)).decision).toBe(false);
    // Put back the set the other tests wrote.
    expect((await admin(svc, "PUT", "/admin/authz/policies", { policies: POLICIES })).status).toBe(200);
  });
});
