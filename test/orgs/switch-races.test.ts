// An org switch decided in the rotation's own run (issue 48, "an org switch adds no wave"; docs/decisions.md, "Issue
// 48: the org switch in one wave"): the rotation records the org in the family's object while the membership is read
// beside it, and a refused switch puts the rotation back. These are its races and refusals; its waves are pinned in
// test/round-trips.test.ts. The races the object decides are driven through the object itself, in the order the
// threat needs (two requests' calls interleaved), then checked through `POST /token`.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/lib/crypto";
import { expectUnavailable } from "../faults/support";
import {
  expectError,
  NO_VERIFICATION,
  PASSWORD,
  PREFIX,
  SERVER,
  service,
  type WireSession,
} from "../helpers";
import { proof, proofKey } from "../oauth2/dpop-support";
import { failingD1 } from "../support/faults";
import { laggingReplica } from "../support/replica";
import { testShards, userD1 } from "../support/shards";
import { waveService } from "../support/waves";
import { addMember, as, createOrg, orgClaims, refresh, svc, user } from "./support";

/** The family's object of a refresh token (its first six hex digits name it). */
const familiesOf = (token: string) =>
  env.SESSION_FAMILIES.get(env.SESSION_FAMILIES.idFromName(`families:${token.slice(0, 6)}`));

/** A successor token of the same object, as the service mints them. */
const successorOf = (token: string) => `${token.slice(0, 6)}${crypto.randomUUID().slice(6)}`;

/** A rotation as `renewSession` asks it of the object (the grace window 60 s). */
async function rotate(presented: string, successor: string, switchTo?: { org: string | null }) {
  const now = Date.now();
  return familiesOf(presented).rotate({
    presentedHash: await sha256Hex(presented),
    candidateHash: await sha256Hex(successor),
    candidateSealed: "sealed",
    now,
    graceMs: 60_000,
    expiresAt: now + 3_600_000,
    touchEveryMs: 3_600_000,
    ...(switchTo ? { switchTo } : {}),
  });
}

const undo = async (presented: string, family: string, successor: string) =>
  familiesOf(presented).undoSwitch(family, await sha256Hex(successor));

describe("an org switch in the rotation's run: races", () => {
  it("many switches of one user's sessions in flight at once: every answer 200, each token in the org asked", async () => {
    // Threat: a switch racing another rotation of the same user (the bench's pool: sessions of one user, each
    // switching into the same org) answering 401 or mixing up two sessions' orgs.
    const owner = await user("org-race");
    const org = await createOrg(owner);
    const sessions: WireSession[] = [owner];
    for (let i = 0; i < 4; i++) {
      const response = await svc.post("/signin/email-password", {
        email: owner.user.email,
        password: PASSWORD,
      });
      sessions.push(((await response.json()) as { session: WireSession }).session);
    }
    let current = sessions;
    // In, in again, then every other session out: every session at once, in each round.
    for (const round of [0, 1, 2]) {
      const asked = (i: number) => (round === 2 && i % 2 ? null : org.id);
      const answers = await Promise.all(
        current.map((session, i) =>
          svc.post("/token", { refreshToken: session.refreshToken, orgId: asked(i) }),
        ),
      );
      expect(answers.map((answer) => answer.status)).toEqual(current.map(() => 200));
      current = await Promise.all(answers.map(async (answer) => (await answer.json()) as WireSession));
      expect(current.map((session) => orgClaims(session.accessToken).orgId)).toEqual(
        current.map((_, i) => asked(i) ?? undefined),
      );
    }
    expect(new Set(current.map((session) => session.refreshTokenId)).size).toBe(sessions.length);
  });

  it("a duplicate inside the grace window while the refusal puts the rotation back: the duplicate's successor stays", async () => {
    // Threat: the put-back forgetting a successor a duplicate of the same token was already handed (its holder
    // signed out), or making it a replay that ends the session. The duplicate comes between the refused switch's
    // rotation and its put-back; the refusal then leaves the token spent and only puts the org back.
    const [owner, outsider] = [await user("org-race"), await user("org-race")];
    const org = await createOrg(owner);
    const presented = outsider.refreshToken;
    const [successor, duplicate] = [successorOf(presented), successorOf(presented)];
    expect(await rotate(presented, successor, { org: org.id })).toMatchObject({
      outcome: "rotated",
      switched: true,
      org: org.id,
    });
    expect(await rotate(presented, duplicate)).toMatchObject({ outcome: "grace", org: org.id });
    expect(await undo(presented, outsider.refreshTokenId, successor)).toBe(false);
    // The duplicate's holder refreshes with the successor, in no org (the recorded one was taken back).
    const renewed = await refresh({ ...outsider, refreshToken: successor });
    expect(orgClaims(renewed.accessToken).orgId).toBeUndefined();
    expect(renewed.refreshTokenId).toBe(outsider.refreshTokenId);
  });

  it("a sign-out while the refused switch is pending: the put-back brings nothing back", async () => {
    // Threat: the put-back making a signed-out session's token current again.
    const [owner, outsider] = [await user("org-race"), await user("org-race")];
    const org = await createOrg(owner);
    const presented = outsider.refreshToken;
    const successor = successorOf(presented);
    expect(await rotate(presented, successor, { org: org.id })).toMatchObject({ outcome: "rotated" });
    expect((await svc.post("/signout", { refreshToken: presented })).status).toBe(200);
    expect(await undo(presented, outsider.refreshTokenId, successor)).toBe(false);
    for (const token of [presented, successor]) {
      await expectError(await svc.post("/token", { refreshToken: token }), 401, "invalid-refresh-token");
    }
  });

  it("a refused switch racing a plain refresh of the same token: whichever runs first, the plain refresh's token refreshes", async () => {
    // Threat: the two interleaving inside the service (the rotation, the grace answer, the put-back) leaving the
    // client that got a 200 with a token that no longer refreshes.
    const [owner, outsider] = [await user("org-race"), await user("org-race")];
    const org = await createOrg(owner);
    const [refused, plain] = await Promise.all([
      svc.post("/token", { refreshToken: outsider.refreshToken, orgId: org.id }),
      svc.post("/token", { refreshToken: outsider.refreshToken }),
    ]);
    expect([refused.status, plain.status]).toEqual([403, 200]);
    const next = await refresh((await plain.json()) as WireSession);
    expect(orgClaims(next.accessToken).orgId).toBeUndefined();
  });
});

describe("an org switch in the rotation's run: what the next refresh reads", () => {
  it("the next refresh through a lagging replica carries the switch: the object holds it, not the row", async () => {
    // Threat: a replica that has not got the session row's new org (written after the answer now, with no bookmark
    // raised for it) taking the switch back at the next refresh.
    const names = String(env.AUTH_D1_SHARDS).split(",");
    const replicas = await Promise.all(names.map((name) => laggingReplica(env[name] as D1Database)));
    const lagging = service({
      ...NO_VERIFICATION,
      ...Object.fromEntries(names.map((name, i) => [name, replicas[i]!.binding])),
    });
    const owner = await user("org-race");
    const org = await createOrg(owner);
    const replica = replicas[testShards().indexOfUser(owner.user.id)]!;
    await replica.freeze(owner.user.id);
    const switched = await lagging.post("/token", { refreshToken: owner.refreshToken, orgId: org.id });
    expect(switched.status).toBe(200);
    replica.counts.replica = 0;
    const next = await lagging.post("/token", {
      refreshToken: ((await switched.json()) as WireSession).refreshToken,
    });
    expect(next.status).toBe(200);
    expect(orgClaims(((await next.json()) as WireSession).accessToken).orgId).toBe(org.id);
    // The session's row came from the replica, which still has it in no org.
    expect(replica.counts.replica).toBeGreaterThan(0);
  });
});

describe("an org switch in the rotation's run: refusals", () => {
  it("a removed membership stops the next switch at once, with the token unspent", async () => {
    // Threat: a membership cached beyond the request (in the family's object, which holds the org) letting a removed
    // member switch back into the org.
    const [owner, member] = [await user("org-race"), await user("org-race")];
    const org = await createOrg(owner);
    await addMember(org, member, "member");
    // The session stays in the org: its object holds the org when the next switch into it comes.
    const inOrg = await refresh(member, org.id);
    expect((await as(owner.accessToken, "DELETE", `/orgs/${org.id}/members/${member.user.id}`)).status).toBe(
      204,
    );
    await expectError(
      await svc.post("/token", { refreshToken: inOrg.refreshToken, orgId: org.id }),
      403,
      "not-org-member",
    );
    expect(orgClaims((await refresh(inOrg)).accessToken).orgId).toBeUndefined();
  });

  it("a switch whose membership cannot be read: 503, the rotation put back, the token unspent", async () => {
    // Threat: a D1 fault after the rotation recorded the switch costing the client its token (the membership was read
    // before the token was spent until this change).
    const owner = await user("org-race");
    const org = await createOrg(owner);
    const { binding, fault } = failingD1(env.DB, { match: /org_members/ });
    const failing = service({ ...NO_VERIFICATION, DB: binding });
    await expectUnavailable(
      await failing.post("/token", { refreshToken: owner.refreshToken, orgId: org.id }),
    );
    expect(fault.failures).toBeGreaterThan(0);
    fault.heal();
    const switched = await refresh(owner, org.id);
    expect(orgClaims(switched.accessToken).orgId).toBe(org.id);
  });

  it("a DPoP-bound session's switch without its key records nothing and spends nothing", async () => {
    // Threat: the org recorded for a request the rotation refuses: a stolen refresh token of a DPoP-bound session
    // (useless without the key) switching its owner's session into another of their orgs. The object checks the key
    // before anything else in the rotation's run, the switch's record included.
    const waves = waveService(NO_VERIFICATION);
    const owner = await user("org-race");
    const org = await createOrg(owner);
    const key = await proofKey();
    const signedIn = await waves.request("POST", "/signin/email-password", {
      json: { email: owner.user.email, password: PASSWORD },
      headers: { dpop: await proof(key, "POST", `${SERVER}${PREFIX}/signin/email-password`) },
    });
    expect(signedIn.response.status).toBe(200);
    const bound = ((await signedIn.response.json()) as { session: WireSession }).session;
    const refused = await waves.post("/token", { refreshToken: bound.refreshToken, orgId: org.id });
    expect(refused.response.status).toBe(401);
    expect(refused.waves.trace, refused.waves.trace).not.toMatch(/update "sessions"|undoSwitch|setOrg/);
    const row = await userD1(bound.user.id)
      .prepare("SELECT org_id FROM sessions WHERE id = ?")
      .bind(bound.refreshTokenId)
      .first<{ org_id: string | null }>();
    expect(row).toEqual({ org_id: null });
    // Nothing spent, nothing recorded: with its key the token still refreshes, in no org, then switches.
    const dpop = async () => ({ dpop: await proof(key, "POST", `${SERVER}${PREFIX}/token`) });
    const plain = await waves.request("POST", "/token", {
      json: { refreshToken: bound.refreshToken },
      headers: await dpop(),
    });
    expect(plain.response.status).toBe(200);
    const renewed = (await plain.response.json()) as WireSession;
    expect(orgClaims(renewed.accessToken).orgId).toBeUndefined();
    const withKey = await waves.request("POST", "/token", {
      json: { refreshToken: renewed.refreshToken, orgId: org.id },
      headers: await dpop(),
    });
    expect(withKey.response.status).toBe(200);
    expect(orgClaims(((await withKey.response.json()) as WireSession).accessToken).orgId).toBe(org.id);
  });
});
