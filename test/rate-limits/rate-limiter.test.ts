// The RateLimiter Durable Object's contract (src/rate-limits/rate-limiter.ts): a sliding window over two fixed ones,
// exact under parallel hits, and `peek` that answers without counting (wrong admin secrets, rate-limits/buckets.ts).
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";

const limiter = () => env.RATE_LIMITERS.get(env.RATE_LIMITERS.idFromName(`TEST:${crypto.randomUUID()}`));
const MINUTE = 60_000;

describe("RateLimiter", () => {
  it("allows `limit` hits per window, then refuses with the seconds until one more fits", async () => {
    const stub = limiter();
    const start = 10 * MINUTE;
    for (let i = 0; i < 3; i++) expect((await stub.hit(3, MINUTE, start + i)).allowed).toBe(true);
    const refused = await stub.hit(3, MINUTE, start + 10);
    expect(refused.allowed).toBe(false);
    expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(refused.retryAfterSeconds).toBeLessThanOrEqual(60);
  });

  it("slides: the previous window's hits weigh by how much of it still overlaps", async () => {
    const stub = limiter();
    const start = 20 * MINUTE;
    for (let i = 0; i < 4; i++) await stub.hit(4, MINUTE, start);
    // Half-way through the next window, half of the previous 4 still counts: 2 more fit, not 4.
    const halfway = start + MINUTE + MINUTE / 2;
    expect((await stub.hit(4, MINUTE, halfway)).allowed).toBe(true);
    expect((await stub.hit(4, MINUTE, halfway)).allowed).toBe(true);
    expect((await stub.hit(4, MINUTE, halfway)).allowed).toBe(false);
  });

  // Threat: a burst in parallel slipping past an exact limit.
  it("counts parallel hits exactly", async () => {
    const stub = limiter();
    const results = await Promise.all(Array.from({ length: 30 }, () => stub.hit(10, MINUTE, 30 * MINUTE)));
    expect(results.filter((result) => result.allowed)).toHaveLength(10);
  });

  it("peek answers whether one more would fit without counting it", async () => {
    const stub = limiter();
    const now = 40 * MINUTE;
    expect((await stub.peek(2, MINUTE, now)).allowed).toBe(true);
    await stub.hit(2, MINUTE, now);
    expect((await stub.peek(2, MINUTE, now)).allowed).toBe(true);
    expect((await stub.peek(2, MINUTE, now)).allowed).toBe(true);
    await stub.hit(2, MINUTE, now);
    expect((await stub.peek(2, MINUTE, now)).allowed).toBe(false);
    // Two windows later nothing is left.
    expect((await stub.peek(2, MINUTE, now + 2 * MINUTE)).allowed).toBe(true);
  });

  it("its alarm deletes the windows", async () => {
    const stub = limiter();
    await stub.hit(5, MINUTE, Date.now() - 5 * MINUTE);
    await runDurableObjectAlarm(stub);
    expect(
      await runInDurableObject(stub, (_instance, state) => state.storage.kv.get("windows")),
    ).toBeUndefined();
  });
});
