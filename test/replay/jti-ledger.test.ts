// The JtiLedger Durable Object's contract (src/replay/jti-ledger.ts): a JWT id is accepted once until it expires, and the
// object keeps working after its alarm swept every id away.
import { env, runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";

const ledger = () => env.JTI_LEDGERS.get(env.JTI_LEDGERS.idFromName(`test:${crypto.randomUUID()}`));

describe("JtiLedger", () => {
  // Threat: the same proof sent twice in parallel (a replay racing the original).
  it("accepts an id once, also among parallel claims, and again only after it expired", async () => {
    const stub = ledger();
    const now = Date.now();
    const claims = await Promise.all(Array.from({ length: 10 }, () => stub.claim("k", now + 60_000, now)));
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await stub.claim("k", now + 60_000, now + 59_999)).toBe(false);
    expect(await stub.claim("k", now + 120_000, now + 60_000)).toBe(true);
  });

  // A 500 seen in CI: the alarm emptied the object's storage (table included) under a live instance, whose next
  // claim then failed. After the sweep the same instance must still record and refuse.
  it("keeps working after its alarm swept every expired id", async () => {
    const stub = ledger();
    const now = Date.now();
    expect(await stub.claim("old", now - 1, now - 1000)).toBe(true);
    await runDurableObjectAlarm(stub);
    expect(await stub.claim("old", now + 60_000, now)).toBe(true);
    expect(await stub.claim("old", now + 60_000, now)).toBe(false);
    expect(await stub.claim("new", now + 60_000, now)).toBe(true);
  });
});
