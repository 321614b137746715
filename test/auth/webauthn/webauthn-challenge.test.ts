// The WebauthnChallenge Durable Object's contract (src/auth/webauthn/webauthn-challenge.ts): a challenge's ceremony,
// taken exactly once, and nothing after it expires.
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";

const challenge = () => env.WEBAUTHN_CHALLENGES.get(env.WEBAUTHN_CHALLENGES.idFromName(crypto.randomUUID()));
const ceremony = { kind: "sign-in", userId: "u1" };

describe("WebauthnChallenge", () => {
  it("hands the ceremony to the first take, and nothing to the next", async () => {
    const stub = challenge();
    await stub.put(ceremony, 10_000);
    expect(await stub.take(1000)).toEqual(ceremony);
    expect(await stub.take(1001)).toBeNull();
  });

  // Threat: the same assertion sent twice in parallel (a replay racing the original).
  it("gives it to one of many parallel takes", async () => {
    const stub = challenge();
    await stub.put(ceremony, 10_000);
    const taken = await Promise.all(Array.from({ length: 10 }, () => stub.take(1000)));
    expect(taken.filter((value) => value !== null)).toEqual([ceremony]);
  });

  it("gives nothing once expired, and its alarm leaves no storage behind", async () => {
    const stub = challenge();
    await stub.put(ceremony, 5000);
    expect(await stub.take(5000)).toBeNull();
    const other = challenge();
    await other.put(ceremony, Date.now() - 1);
    await runDurableObjectAlarm(other);
    expect(
      await runInDurableObject(other, (_instance, state) => state.storage.kv.get("ceremony")),
    ).toBeUndefined();
  });
});
