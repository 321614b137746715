// A plain refresh of a session in an org, where the session is kept in another database than the home one (the
// suite runs two shards): its membership is read beside the rotation through the home database's hint of which org
// the token's sessions act in (`org_session_hints`, migration 0046; docs/decisions.md, "Issue 48: a refresh in an
// org in one wave, elsewhere"). The hint says which membership to read, never that there is one. The waves of the
// switch and of the home database's refreshes are pinned in test/round-trips.test.ts.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { forgetOldOrgHints, HINT_MAX_AGE_MS } from "../../src/orgs/housekeeping";
import { decodeJwt, PASSWORD, type WireSession } from "../helpers";
import { failingShards } from "../support/faults";
import { allD1, testShards, userD1 } from "../support/shards";
import { waveService } from "../support/waves";
import { addMember, createOrg, svc, user } from "./support";

const home = () => allD1()[0]!;
const waves = waveService();

interface HintRow {
  locator: string;
  user_id: string;
  org_id: string;
  written_at: number;
}
const hintOf = (sessionId: string) =>
  home()
    .prepare("SELECT locator, user_id, org_id, written_at FROM org_session_hints WHERE session_id = ?")
    .bind(sessionId)
    .first<HintRow>();

const orgClaim = (accessToken: string) =>
  (decodeJwt(accessToken).payload["https://hasura.io/jwt/claims"] as Record<string, string | undefined>)[
    "x-hasura-org-id"
  ];

/** A user whose session is not in the home database. */
async function userElsewhere(): Promise<WireSession> {
  for (let i = 0; i < 60; i++) {
    const candidate = await user("hints");
    if (userD1(candidate.user.id) !== home()) return candidate;
  }
  throw new Error("no user outside the home database");
}

/** `owner` switched into a new org of their own (asserting a 200): the org, and the session the switch answered. */
async function switchedIn(owner: WireSession) {
  const org = await createOrg(owner);
  const switched = await waves.post("/token", { refreshToken: owner.refreshToken, orgId: org.id });
  expect(switched.response.status, switched.waves.trace).toBe(200);
  return { org, session: (await switched.response.json()) as WireSession };
}

async function refresh(refreshToken: string) {
  const { response, waves: count } = await waves.post("/token", { refreshToken });
  expect(response.status, count.trace).toBe(200);
  return { session: (await response.json()) as WireSession, waves: count };
}

describe("a plain refresh in an org of a session kept elsewhere", () => {
  it("reads its membership beside the rotation through the hint its switch wrote: one wave, every time", async () => {
    // Threat (of speed): such a session paying a second wave on every refresh, the membership read only once the
    // rotation named the org. The hint is written after the switch's answer (the wave service waits for it).
    const owner = await userElsewhere();
    await refresh((await userElsewhere()).refreshToken); // what an isolate keeps (signing keys, the slot map)
    const { org, session } = await switchedIn(owner);
    const hint = await hintOf(owner.refreshTokenId);
    expect(hint).toMatchObject({
      locator: session.refreshToken.slice(0, 6),
      user_id: owner.user.id,
      org_id: org.id,
    });
    let current = session;
    for (let i = 0; i < 2; i++) {
      const next = await refresh(current.refreshToken);
      expect(next.waves.sequential, next.waves.trace).toBe(1);
      expect(next.waves.perKind, next.waves.trace).toContain("d1-primary 1/1");
      expect(next.waves.trace).toMatch(/org_session_hints/);
      expect(orgClaim(next.session.accessToken)).toBe(org.id);
      current = next.session;
    }
    // Found through the hint: not written again.
    expect((await hintOf(owner.refreshTokenId))?.written_at).toBe(hint?.written_at);
  });

  it("a member removed loses the org in the same request, still in one wave: the hinted membership is read, not assumed", async () => {
    // Threat: the hint taken for a membership, so that a removed member's tokens keep the org until something else
    // notices. The hint names the org; the membership is read on the home primary in the request itself.
    const owner = await userElsewhere();
    const { org, session } = await switchedIn(owner);
    await home()
      .prepare("DELETE FROM org_members WHERE org_id = ? AND user_id = ?")
      .bind(org.id, owner.user.id)
      .run();
    const next = await refresh(session.refreshToken);
    expect(orgClaim(next.session.accessToken)).toBeUndefined();
    expect(next.waves.sequential, next.waves.trace).toBe(1);
  });

  it("another user's hint on the same locator answers for no one else", async () => {
    // Threat: the read finds every hint of the locator's sessions with each hinted user's membership; a removed
    // member keeping the org because another user sharing the locator is hinted in it and is a member.
    const [mine, theirs] = [await userElsewhere(), await userElsewhere()];
    const { org, session } = await switchedIn(mine);
    await addMember(org, theirs, "member");
    await home()
      .prepare(
        "INSERT INTO org_session_hints (session_id, locator, user_id, org_id, written_at) VALUES (?, ?, ?, ?, ?)",
      )
      .bind(theirs.refreshTokenId, session.refreshToken.slice(0, 6), theirs.user.id, org.id, Date.now())
      .run();
    await home()
      .prepare("DELETE FROM org_members WHERE org_id = ? AND user_id = ?")
      .bind(org.id, mine.user.id)
      .run();
    const next = await refresh(session.refreshToken);
    expect(next.session.user!.id).toBe(mine.user.id);
    expect(orgClaim(next.session.accessToken)).toBeUndefined();
    // Settled by the read beside (mine's hint, with no membership found), not read again after it.
    expect(next.waves.sequential, next.waves.trace).toBe(1);
  });

  it("no hint (lost, or a session that began in an org): read after the session's row, then written; the next refresh takes one wave", async () => {
    // Threat: a missing hint taken for no membership (a member losing the org), or never written again (two waves
    // for good).
    const owner = await userElsewhere();
    const { org, session } = await switchedIn(owner);
    await home()
      .prepare("DELETE FROM org_session_hints WHERE session_id = ?")
      .bind(owner.refreshTokenId)
      .run();
    const missed = await refresh(session.refreshToken);
    expect(orgClaim(missed.session.accessToken)).toBe(org.id);
    expect(missed.waves.sequential, missed.waves.trace).toBe(2);
    expect(await hintOf(owner.refreshTokenId)).toMatchObject({ user_id: owner.user.id, org_id: org.id });
    const next = await refresh(missed.session.refreshToken);
    expect(next.waves.sequential, next.waves.trace).toBe(1);
    expect(orgClaim(next.session.accessToken)).toBe(org.id);
  });

  it("a hint naming another org than the session's: the session's org is read after and the hint set right", async () => {
    // Threat: a stale hint (its write lost while the session switched again) putting the session in the hinted org,
    // or its membership there standing in for the one the session acts in.
    const owner = await userElsewhere();
    const other = await createOrg(owner);
    const { org, session } = await switchedIn(owner);
    await home()
      .prepare("UPDATE org_session_hints SET org_id = ? WHERE session_id = ?")
      .bind(other.id, owner.refreshTokenId)
      .run();
    const next = await refresh(session.refreshToken);
    expect(orgClaim(next.session.accessToken)).toBe(org.id);
    expect(next.waves.sequential, next.waves.trace).toBe(2);
    expect((await hintOf(owner.refreshTokenId))?.org_id).toBe(org.id);
  });

  it("the hints' read failing: the membership is read after it, and the refresh answers with the org", async () => {
    // Threat: a fault of the read beside taken for "no membership" (the org dropped from the session), or answered
    // 503 when the membership itself can still be read.
    const owner = await userElsewhere();
    const { org, session } = await switchedIn(owner);
    const { bindings, fault } = failingShards(env as unknown as Record<string, unknown>, {
      match: /from "org_session_hints"/i,
      times: 1,
    });
    const faulty = waveService(bindings);
    const { response } = await faulty.post("/token", { refreshToken: session.refreshToken });
    expect(fault.failures).toBe(1);
    expect(response.status).toBe(200);
    expect(orgClaim(((await response.json()) as WireSession).accessToken)).toBe(org.id);
  });

  it("the hint's write failing after the answer: the refresh answered 200 with the org, and the next one reads after and writes it", async () => {
    // Threat: a write after the answer that fails taking the answer with it (a 500 after the token was spent), or
    // leaving the session on two waves for good.
    const owner = await userElsewhere();
    const org = await createOrg(owner);
    const { bindings, fault } = failingShards(env as unknown as Record<string, unknown>, {
      match: /^insert into "org_session_hints"/i,
      times: 1,
    });
    const faulty = waveService(bindings);
    const switched = await faulty.post("/token", { refreshToken: owner.refreshToken, orgId: org.id });
    expect(fault.failures).toBe(1);
    expect(switched.response.status).toBe(200);
    const session = (await switched.response.json()) as WireSession;
    expect(orgClaim(session.accessToken)).toBe(org.id);
    expect(await hintOf(owner.refreshTokenId)).toBeNull();
    const missed = await refresh(session.refreshToken);
    expect([orgClaim(missed.session.accessToken), missed.waves.sequential]).toEqual([org.id, 2]);
    expect((await hintOf(owner.refreshTokenId))?.org_id).toBe(org.id);
  });

  it("a crowd: 150 sessions kept elsewhere switched in, then refreshed plainly twice, all at once: every answer 200 with the org", async () => {
    // Threat: the hints' writes after the answers racing the reads of the next round (an upsert per session, 150 in
    // flight), or one session's hint answering for another of the same user: a refresh answering 401 or 503, or a
    // token without its org.
    // 150 in flight: each session is a sign-in first (the test's cost, ~30 s of a lane's time in a whole run with
    // 200); `npm start` with two local databases took 300 at once (docs/decisions.md, the section of this change).
    const SESSIONS_A_USER = 75;
    const owners = [await userElsewhere(), await userElsewhere()];
    const org = await createOrg(owners[0]!);
    await addMember(org, owners[1]!, "member");
    const sessions: WireSession[] = [];
    for (const owner of owners) {
      sessions.push(owner);
      for (let i = 1; i < SESSIONS_A_USER; i++) {
        const response = await svc.post("/signin/email-password", {
          email: owner.user.email,
          password: PASSWORD,
        });
        expect(response.status).toBe(200);
        sessions.push(((await response.json()) as { session: WireSession }).session);
      }
    }
    let current = sessions;
    for (const orgId of [org.id, undefined, undefined]) {
      const answers = await Promise.all(
        current.map((session) => svc.post("/token", { refreshToken: session.refreshToken, orgId })),
      );
      expect(answers.map((answer) => answer.status)).toEqual(current.map(() => 200));
      current = await Promise.all(answers.map(async (answer) => (await answer.json()) as WireSession));
      expect(current.map((session) => orgClaim(session.accessToken))).toEqual(current.map(() => org.id));
    }
    const hinted = await home()
      .prepare("SELECT count(*) AS n FROM org_session_hints WHERE user_id IN (?, ?) AND org_id = ?")
      .bind(owners[0]!.user.id, owners[1]!.user.id, org.id)
      .first<{ n: number }>();
    expect(hinted?.n).toBe(2 * SESSIONS_A_USER);
  }, 60_000);

  it("the daily sweep removes hints older than their age and keeps the others", async () => {
    // Threat: the table growing with every session that ever acted in an org (nothing says when a session kept in
    // another database ends), or the sweep removing hints still young.
    const owner = await userElsewhere();
    const { org } = await switchedIn(owner);
    const now = Date.now();
    const old = `old-${crypto.randomUUID()}`;
    await home()
      .prepare(
        "INSERT INTO org_session_hints (session_id, locator, user_id, org_id, written_at) VALUES (?, ?, ?, ?, ?)",
      )
      .bind(old, "abcdef", owner.user.id, org.id, now - HINT_MAX_AGE_MS - 1)
      .run();
    expect(await forgetOldOrgHints({ shards: testShards() }, now)).toBeGreaterThanOrEqual(1);
    expect(await hintOf(old)).toBeNull();
    expect(await hintOf(owner.refreshTokenId)).not.toBeNull();
  });
});
