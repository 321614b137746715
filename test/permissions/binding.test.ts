// `check` and `checkMany` of AuthService through a real service binding (contract platform.md §1–2): a consumer
// Worker (test/fakes/binding-consumer.js) asks, as an app's Worker does. Threat: a consumer's malformed or hostile
// request (an entity reference granting itself a relationship) crossing the binding as a throw the consumer cannot
// tell from an outage, or being evaluated at all; it must be a value with the catalogue's code.
import { env } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { getConfig } from "../../src/runtime/config";
import { service } from "../helpers";
import { rpc } from "../platform/support";
import { admin, SERVICE_SCHEMA, usePolicies, userWith } from "./support";

const svc = service();
const SCHEMA = `${SERVICE_SCHEMA}
entity note { author?: String, writers?: Set<User> };
action read, write appliesTo { principal: User, resource: note };
`;
const POLICIES = `
@id("shared") permit (principal, action == Action::"write", resource is note)
  when { resource has writers && principal in resource.writers };
@id("read") permit (principal, action == Action::"read", resource is note);
@id("author-writes") permit (principal, action == Action::"write", resource is note)
  when { resource has author && principal has email && resource.author == principal.email };
`;

beforeAll(() => usePolicies(svc, SCHEMA, POLICIES));
afterAll(async () => {
  await admin(svc, "PUT", "/admin/authz/policies", { policies: "" });
});

describe("AuthService: check and checkMany", () => {
  it("answers decisions with the policies that made them, one or several with AuthZEN's semantics", async () => {
    const ana = await userWith(svc, ["user"]);
    const ask = (action: string, author?: string) => ({
      subject: { type: "user", id: ana.id },
      action: { name: action },
      resource: { type: "note", id: "n1", ...(author ? { properties: { author } } : {}) },
    });
    expect(await rpc("AUTH", "check", ask("read"))).toEqual({ decision: true, reasons: ["read"] });
    expect(await rpc("AUTH", "check", ask("write", "someone@example.com"))).toEqual({ decision: false });
    const batch = [ask("write"), ask("write", ana.email), ask("read")];
    expect(await rpc("AUTH", "checkMany", batch)).toEqual([
      { decision: false },
      { decision: true, reasons: ["author-writes"] },
      { decision: true, reasons: ["read"] },
    ]);
    expect(await rpc("AUTH", "checkMany", batch, { semantic: "deny_on_first_deny" })).toEqual([
      { decision: false },
    ]);
    expect(await rpc("AUTH", "checkMany", batch, { semantic: "permit_on_first_permit" })).toHaveLength(2);
    // Nobody: false, not an error.
    expect(
      await rpc("AUTH", "check", { ...ask("read"), subject: { type: "user", id: "nobody@example.com" } }),
    ).toEqual({
      decision: false,
    });
  });

  it("answers a bad request as a value with invalid-request, never a throw", async () => {
    const ana = await userWith(svc, ["user"]);
    const escaped = {
      subject: { type: "user", id: ana.id },
      action: { name: "write" },
      resource: {
        type: "note",
        id: "n1",
        properties: { author: { __entity: { type: "User", id: ana.id } } },
      },
    };
    for (const [method, args] of [
      ["check", [escaped]],
      ["check", [{ action: { name: "read" } }]],
      ["checkMany", ["not a list"]],
      ["checkMany", [[escaped]]],
      ["checkMany", [[], { semantic: "sometimes" }]],
    ] as const) {
      const answer = await rpc("AUTH", method, ...args);
      expect(answer, `${method} ${JSON.stringify(args).slice(0, 60)}`).toEqual({
        ok: false,
        error: { code: "invalid-request", message: expect.any(String) },
      });
    }
  });
});

describe("AuthAdmin: writeRelationship and deleteRelationship", () => {
  // Threat: an operator's power (granting access) open to every Worker of the account: closed unless switched on,
  // and audited with the caller's declared name when it is.
  it("is off by default; switched on, a stored relationship allows at once, its deletion denies again", async () => {
    const ana = await userWith(svc, ["user"]);
    const id = `note-${crypto.randomUUID()}`;
    const tuple = {
      resource: { type: "note", id },
      relation: "writers",
      subject: { type: "User", id: ana.id },
    };
    const write = {
      subject: { type: "user", id: ana.id },
      action: { name: "write" },
      resource: { type: "note", id },
    };
    expect(await rpc("ADMIN", "writeRelationship", tuple)).toEqual({
      ok: false,
      error: { code: "disabled-endpoint", message: expect.any(String) },
    });
    const platform = getConfig(env).platform;
    platform.adminBindingEnabled = true;
    try {
      expect(await rpc("ADMIN", "writeRelationship", tuple)).toEqual({ relationship: tuple, created: true });
      expect(await rpc("ADMIN", "writeRelationship", tuple)).toEqual({ relationship: tuple, created: false });
      expect(await rpc("AUTH", "check", write)).toEqual({ decision: true, reasons: ["shared"] });
      expect(await rpc("ADMIN", "deleteRelationship", tuple)).toEqual({ deleted: true });
      expect(await rpc("ADMIN", "deleteRelationship", tuple)).toMatchObject({
        ok: false,
        error: { code: "not-found" },
      });
      expect(await rpc("AUTH", "check", write)).toEqual({ decision: false });
      expect(await rpc("ADMIN", "writeRelationship", { ...tuple, relation: "no spaces" })).toMatchObject({
        ok: false,
        error: { code: "invalid-request" },
      });
      // The audit is written after the answer: it shows within a moment, with the binding's caller.
      await vi.waitFor(async () => {
        const audited = await env.DB.prepare(
          "SELECT type, detail FROM audit_events WHERE type LIKE 'admin.authz.relationship.%' AND detail LIKE ?",
        )
          .bind(`%${id}%`)
          .all<{ type: string; detail: string }>();
        expect(audited.results.map((row) => row.type).sort()).toEqual([
          "admin.authz.relationship.add",
          "admin.authz.relationship.delete",
        ]);
        expect(audited.results.every((row) => row.detail.includes("billing-worker"))).toBe(true);
      });
    } finally {
      platform.adminBindingEnabled = false;
    }
  });
});
