// Each membership's user slot (`org_members.user_slot`, migration 0045): what lets an org switch whose session is
// not in the home database read the membership beside its rotation (issue 48; docs/decisions.md, "Issue 48: a
// refresh in an org in one wave"). Every writer sets it; rows from before get it from the daily sweep or from the
// member's next switch, and until then are read after the session's row, as before. The waves themselves are
// pinned in test/round-trips.test.ts.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { slotOfUser } from "../../src/db/shards";
import { fillMemberSlots } from "../../src/orgs/housekeeping";
import type { WireSession } from "../helpers";
import { failingShards } from "../support/faults";
import { allD1, testShards, userD1 } from "../support/shards";
import { waveService } from "../support/waves";
import { addMember, createOrg, user } from "./support";

const home = () => allD1()[0]!;
const slotIn = async (orgId: string, userId: string) =>
  (
    await home()
      .prepare("SELECT user_slot AS slot FROM org_members WHERE org_id = ? AND user_id = ?")
      .bind(orgId, userId)
      .first<{ slot: number | null }>()
  )?.slot;
const forgetSlot = (orgId: string, userId: string) =>
  home()
    .prepare("UPDATE org_members SET user_slot = NULL WHERE org_id = ? AND user_id = ?")
    .bind(orgId, userId)
    .run();

/** An org of two whose memberships have no slot, as rows written before migration 0045 have none. */
async function orgFromBefore() {
  const [owner, member] = [await user("slots"), await user("slots")];
  const org = await createOrg(owner);
  await addMember(org, member, "admin");
  await forgetSlot(org.id, owner.user.id);
  await forgetSlot(org.id, member.user.id);
  return { org, owner, member };
}

/** Each member's row holds their user's slot. */
async function expectSlotsFilled(orgId: string, ...members: WireSession[]) {
  for (const { user } of members) expect(await slotIn(orgId, user.id)).toBe(slotOfUser(user.id));
}

/** A user whose session is not in the home database (the suite runs two shards). */
async function userElsewhere(): Promise<WireSession> {
  for (let i = 0; i < 60; i++) {
    const candidate = await user("slots");
    if (userD1(candidate.user.id) !== home()) return candidate;
  }
  throw new Error("no user outside the home database");
}

describe("org_members.user_slot", () => {
  it("is written by the org's creation and by adding a member", async () => {
    // Threat: a writer that forgets the slot leaves its members on the two-wave path for good (until the sweep).
    const [owner, member] = [await user("slots"), await user("slots")];
    const org = await createOrg(owner);
    await addMember(org, member, "member");
    await expectSlotsFilled(org.id, owner, member);
  });

  it("a row without it: the switch from another database reads the membership after the session (two waves), and fills it for the next one", async () => {
    // Threat: a membership the slot's read does not find taken for no membership (a member refused), or never
    // found by it (every switch of that member two waves for good).
    const waves = waveService();
    const owner = await userElsewhere();
    const org = await createOrg(owner);
    await forgetSlot(org.id, owner.user.id);
    // A first request of this service reads what an isolate keeps (the signing keys, the slot map): not counted.
    const warm = await userElsewhere();
    expect((await waves.post("/token", { refreshToken: warm.refreshToken })).response.status).toBe(200);
    const first = await waves.post("/token", { refreshToken: owner.refreshToken, orgId: org.id });
    expect([first.response.status, first.waves.sequential], first.waves.trace).toEqual([200, 2]);
    // Filled after the answer (the wave service waits for it).
    expect(await slotIn(org.id, owner.user.id)).toBe(slotOfUser(owner.user.id));
    const out = await waves.post("/token", {
      refreshToken: ((await first.response.json()) as WireSession).refreshToken,
      orgId: null,
    });
    const again = await waves.post("/token", {
      refreshToken: ((await out.response.json()) as WireSession).refreshToken,
      orgId: org.id,
    });
    expect([again.response.status, again.waves.sequential], again.waves.trace).toEqual([200, 1]);
  });

  it("a member of another org sharing the slot does not make a non-member's switch pass", async () => {
    // Threat: the slot's read finds every member of the org in the slot; a user switching into an org only
    // someone else of the same slot belongs to.
    const waves = waveService();
    const [owner, stranger] = [await userElsewhere(), await userElsewhere()];
    const org = await createOrg(owner);
    // The owner's membership in the stranger's slot, as if they shared it: the stranger's switch reads it beside.
    await home()
      .prepare("UPDATE org_members SET user_slot = ? WHERE org_id = ? AND user_id = ?")
      .bind(slotOfUser(stranger.user.id), org.id, owner.user.id)
      .run();
    const refused = await waves.post("/token", { refreshToken: stranger.refreshToken, orgId: org.id });
    expect(refused.response.status).toBe(403);
    // The slot's read cannot say "none": the membership read after, then the rotation put back.
    expect(refused.waves.sequential, refused.waves.trace).toBe(3);
    expect(((await refused.response.json()) as { error: string }).error).toBe("not-org-member");
  });

  it("the daily sweep fills the rows from before, a page at a time", async () => {
    const { org, owner, member } = await orgFromBefore();
    expect(await fillMemberSlots({ shards: testShards() })).toBeGreaterThanOrEqual(2);
    await expectSlotsFilled(org.id, owner, member);
    const left = await home()
      .prepare("SELECT count(*) AS n FROM org_members WHERE user_slot IS NULL")
      .first<{ n: number }>();
    expect(left?.n).toBe(0);
  });

  // Threat: a sweep cut by the database half-writes a page, so that some members keep a wrong or missing slot with no
  // one to notice. A page is one statement: it lands whole or not at all, and the next day's sweep starts again from
  // the rows still without.
  it("a sweep the database fails leaves every row as it was; the next one fills them", async () => {
    const { org, owner, member } = await orgFromBefore();
    const { bindings, fault } = failingShards(env as unknown as Record<string, unknown>, {
      match: /^update "org_members"/i,
      times: 1,
    });
    // Drizzle names the statement; its cause is the platform's D1_ERROR the fault threw.
    await expect(fillMemberSlots({ shards: testShards({ ...env, ...bindings }) })).rejects.toThrow(
      /update "org_members"/,
    );
    expect(fault.failures).toBe(1);
    expect(await slotIn(org.id, owner.user.id)).toBeNull();
    expect(await slotIn(org.id, member.user.id)).toBeNull();
    expect(await fillMemberSlots({ shards: testShards() })).toBeGreaterThanOrEqual(2);
    await expectSlotsFilled(org.id, owner, member);
  });
});
