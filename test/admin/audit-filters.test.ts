// GET /admin/audit's filters (contract operators.md §4): actor, userId, type, since, until, limit and the opaque
// cursor, and a 400 in the catalogue's shape for every bad value. Threat: an operator's query silently answering
// the wrong events (a misspelt actor or date read as "no filter"), or a 500 on hostile input.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { expectContractError, NO_VERIFICATION, service, signUp } from "../helpers";
import { scim, scimOrg, USER_SCHEMA } from "../scim/support";

const svc = service(NO_VERIFICATION);
const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };

interface Page {
  items: {
    id: string;
    at: string;
    type: string;
    actor: { type: string; name?: string };
    outcome: string;
    reason: string;
  }[];
  nextCursor: string | null;
}
const audit = async (query: string) => svc.request("GET", `/admin/audit?${query}`, { headers: ADMIN });
const page = async (query: string) => {
  const response = await audit(query);
  expect(response.status, query).toBe(200);
  return (await response.json()) as Page;
};

describe("GET /admin/audit's filters", () => {
  it("filters by actor and a time range, pages with the cursor, each event naming actor, outcome and reason", async () => {
    const started = new Date(Date.now() - 1000).toISOString();
    const session = await signUp(svc);
    const userId = session.user.id;
    expect(
      (
        await svc.request("PATCH", `/admin/users/${userId}`, {
          json: { displayName: "Filtered" },
          headers: ADMIN,
        })
      ).status,
    ).toBe(200);
    const all = await page(`userId=${userId}&since=${started}`);
    expect(all.items.map((event) => [event.type, event.actor.type, event.outcome])).toEqual([
      ["admin.user.update", "admin", "success"],
      ["signup", "user", "success"],
    ]);
    expect(all.items[1]!.reason).toBe("email-password");
    expect((await page(`userId=${userId}&actor=admin`)).items.map((event) => event.type)).toEqual([
      "admin.user.update",
    ]);
    expect((await page(`userId=${userId}&actor=user&type=signup`)).items).toHaveLength(1);
    expect((await page(`userId=${userId}&actor=scim`)).items).toEqual([]);
    // `until` is exclusive: before the first event, nothing.
    expect((await page(`userId=${userId}&until=${started}`)).items).toEqual([]);
    const first = await page(`userId=${userId}&limit=1`);
    expect(first.items.map((event) => event.type)).toEqual(["admin.user.update"]);
    const second = await page(`userId=${userId}&limit=1&cursor=${encodeURIComponent(first.nextCursor!)}`);
    expect(second.items.map((event) => event.type)).toEqual(["signup"]);
  });

  // Threat: a directory's changes to accounts passing unseen, or as the user's own doing.
  it("a SCIM directory's changes are audited as the scim actor's, named by the organization", async () => {
    const org = await scimOrg("audited");
    const created = await scim(org, "POST", "/Users", {
      schemas: [USER_SCHEMA],
      userName: `ines@${org.domain}`,
      name: { givenName: "Ines", familyName: "Audit" },
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    expect((await scim(org, "DELETE", `/Users/${id}`)).status).toBe(204);
    const events = await page(`userId=${id}&actor=scim`);
    expect(events.items.map((event) => [event.type, event.actor])).toEqual([
      ["scim.user.delete", { type: "scim", name: org.id }],
      ["scim.user.create", { type: "scim", name: org.id }],
      // The account the directory made: its sign-up, by the directory, not by the person.
      ["signup", { type: "scim", name: org.id }],
    ]);
  });

  it("answers 400 in the catalogue's shape for a bad actor, time, range, limit or cursor", async () => {
    for (const query of [
      "actor=root",
      "actor=",
      "since=yesterday",
      "since=2026-13-01",
      "until=1700000000000",
      "since=2026-11-02&until=2026-11-01",
      "limit=0",
      "limit=501",
      "cursor=not-a-cursor",
      `cursor=${btoa(JSON.stringify(["x", 1]))}`,
    ]) {
      await expectContractError(await audit(query), query);
    }
  });
});
