import { env, runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";

function family() {
  return env.REFRESH_SESSIONS.get(env.REFRESH_SESSIONS.idFromName(crypto.randomUUID()));
}

const base = { candidateSealed: "sealed", graceMs: 10_000, expiresAt: Date.now() + 60_000 };

describe("RefreshSession Durable Object", () => {
  it("rotates the current token once; a duplicate inside the window gets the same sealed successor", async () => {
    const stub = family();
    expect(
      await stub.rotate({
        ...base,
        presentedHash: "t0",
        candidateHash: "t1",
        candidateSealed: "s1",
        now: 1000,
      }),
    ).toEqual({
      outcome: "rotated",
    });
    expect(await stub.rotate({ ...base, presentedHash: "t0", candidateHash: "x", now: 5000 })).toEqual({
      outcome: "grace",
      successorSealed: "s1",
    });
    expect(await stub.rotate({ ...base, presentedHash: "t1", candidateHash: "t2", now: 6000 })).toEqual({
      outcome: "rotated",
    });
  });

  it("a duplicate after the window is a replay and revokes the family for good", async () => {
    const stub = family();
    await stub.rotate({ ...base, presentedHash: "t0", candidateHash: "t1", now: 1000 });
    expect(await stub.rotate({ ...base, presentedHash: "t0", candidateHash: "x", now: 11_001 })).toEqual({
      outcome: "replayed",
    });
    expect(await stub.rotate({ ...base, presentedHash: "t1", candidateHash: "t2", now: 11_002 })).toEqual({
      outcome: "revoked",
    });
  });

  it("revoke stops any further rotation", async () => {
    const stub = family();
    await stub.revoke(Date.now() + 60_000);
    expect(await stub.rotate({ ...base, presentedHash: "t0", candidateHash: "t1", now: 1 })).toEqual({
      outcome: "revoked",
    });
  });

  it("keeps a live family when its alarm fires, and forgets it after expiry", async () => {
    const stub = family();
    await stub.rotate({ ...base, presentedHash: "t0", candidateHash: "t1", now: 1 });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await stub.rotate({ ...base, presentedHash: "t0", candidateHash: "x", now: 2 })).toEqual({
      outcome: "grace",
      successorSealed: "sealed",
    });
    await stub.rotate({
      ...base,
      presentedHash: "t1",
      candidateHash: "t2",
      now: 3,
      expiresAt: Date.now() - 1,
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    // State is gone: the next presented token is taken as the first of a family (D1 vouches for membership).
    expect(await stub.rotate({ ...base, presentedHash: "t1", candidateHash: "t2", now: 2 })).toEqual({
      outcome: "rotated",
    });
  });
});
