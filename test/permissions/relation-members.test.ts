// Which of a resource's stored relationships a check hands to Cedar (src/permissions/relation-uses.ts): only the
// members that can matter when the policy set reads a relation as `principal in resource.<r>` or `resource has <r>`
// (Cedar's cost is per member: docs/performance.md, "Issue 45"), and every member otherwise. Threat: a decision that
// changes because members were left out, above all a `forbid` that reads another member (`contains`) no longer firing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { service } from "../helpers";
import { ADMIN, access, admin, SERVICE_SCHEMA, usePolicies, userWith } from "./support";

const svc = service();

const SCHEMA = `${SERVICE_SCHEMA}
entity note { editors?: Set<User>, blocked?: Set<User>, watchers?: Set<User> };
action edit appliesTo { principal: User, resource: note };
`;
const MEMBERSHIP_ONLY = `
permit (principal, action, resource is note) when { resource has editors && principal in resource.editors };
forbid (principal, action, resource is note) when { resource has watchers };
`;
const READS_OTHERS = `${MEMBERSHIP_ONLY}
forbid (principal, action, resource is note) when {
  resource has blocked && resource has editors && resource.blocked.containsAny(resource.editors)
};
`;

let [ana, bob, cy] = ["", "", ""];
const note = crypto.randomUUID();
const noteWithWatchers = crypto.randomUUID();

const relate = (resource: string, relation: string, subject: string) =>
  admin(svc, "POST", "/admin/authz/relationships", {
    resource: { type: "note", id: resource },
    relation,
    subject: { type: "User", id: subject },
  });

async function decision(subject: string, resource: string): Promise<boolean> {
  const response = await access(
    svc,
    "evaluation",
    {
      subject: { type: "user", id: subject },
      action: { name: "edit" },
      resource: { type: "note", id: resource },
    },
    ADMIN,
  );
  expect(response.status, await response.clone().text()).toBe(200);
  return ((await response.json()) as { decision: boolean }).decision;
}

beforeAll(async () => {
  [ana, bob, cy] = [
    (await userWith(svc, ["user"])).id,
    (await userWith(svc, ["user"])).id,
    (await userWith(svc, ["user"])).id,
  ];
  // Ana and Bob edit the note, Cy is blocked (a member neither of them is); the second note only has a watcher.
  for (const [resource, relation, subject] of [
    [note, "editors", ana],
    [note, "editors", bob],
    [note, "blocked", cy],
    [noteWithWatchers, "editors", ana],
    [noteWithWatchers, "watchers", cy],
  ] as const) {
    expect((await relate(resource, relation, subject)).status).toBe(201);
  }
});

// The policies go with the file: the next file of this worker starts from none.
afterAll(async () => {
  await admin(svc, "PUT", "/admin/authz/policies", { policies: "" });
});

describe("the members a check passes to Cedar", () => {
  it("read only as membership: the same decisions, and `has` still sees a relation none of whose members is passed", async () => {
    await usePolicies(svc, SCHEMA, MEMBERSHIP_ONLY);
    expect(
      await Promise.all([decision(ana, note), decision(cy, note), decision(ana, noteWithWatchers)]),
    ).toEqual([
      true,
      false,
      // Cy watches it: no member Ana can be is in `watchers`, and the attribute is still there for the forbid.
      false,
    ]);
  });

  it("a relation read another way keeps all its members: the forbid over another member still fires", async () => {
    await usePolicies(svc, SCHEMA, READS_OTHERS);
    // Blocked and editors share no member yet: the forbid reads every editor, not only Ana.
    expect(await decision(ana, note)).toBe(true);
    // Blocking Bob, an editor: `blocked` and `editors` share a member that is not Ana, and Ana is refused.
    expect((await relate(note, "blocked", bob)).status).toBe(201);
    expect(await decision(ana, note)).toBe(false);
  });
});
