// `check` and `checkMany` of AuthService through a real service binding (contract platform.md §1–2): a consumer
// Worker (test/fakes/binding-consumer.js) asks, as an app's Worker does. Threat: a consumer's malformed or hostile
// request (an entity reference granting itself a relationship) crossing the binding as a throw the consumer cannot
// tell from an outage, or being evaluated at all; it must be a value with the catalogue's code.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { service } from "../helpers";
import { rpc } from "../platform/support";
import { admin, SERVICE_SCHEMA, usePolicies, userWith } from "./support";

const svc = service();
const SCHEMA = `${SERVICE_SCHEMA}
entity note { author?: String };
action read, write appliesTo { principal: User, resource: note };
`;
const POLICIES = `
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
