// The OneTimeCode Durable Object's contract (src/auth/links/one-time-code.ts): the newest code of a scope, right
// once, wrong at most MAX_FAILURES times, and nothing after it expires.
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MAX_FAILURES } from "../../../src/auth/links/one-time-code";

const challenge = () => env.ONE_TIME_CODES.get(env.ONE_TIME_CODES.idFromName(`test:${crypto.randomUUID()}`));

describe("OneTimeCode", () => {
  it("accepts the right code once; a second use finds nothing", async () => {
    const stub = challenge();
    await stub.issue("h1", 10_000);
    expect(await stub.verify("h1", 1000)).toBe("ok");
    expect(await stub.verify("h1", 1001)).toBe("invalid");
  });

  it("a new code replaces the old one and resets the count of wrong tries", async () => {
    const stub = challenge();
    await stub.issue("old", 10_000);
    for (let i = 0; i < MAX_FAILURES - 1; i++) expect(await stub.verify("wrong", 1000)).toBe("invalid");
    await stub.issue("new", 10_000);
    expect(await stub.verify("old", 1000)).toBe("invalid");
    for (let i = 0; i < MAX_FAILURES - 2; i++) expect(await stub.verify("wrong", 1000)).toBe("invalid");
    expect(await stub.verify("new", 1000)).toBe("ok");
  });

  // Threat: guessing a six-digit code with many parallel requests; the count and the check are one call.
  it(`kills the code at the ${MAX_FAILURES}th wrong try, however many tries run in parallel`, async () => {
    const stub = challenge();
    await stub.issue("right", 10_000);
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => stub.verify("wrong", 1000)));
    expect(outcomes.every((outcome) => outcome === "invalid")).toBe(true);
    expect(await stub.verify("right", 1000)).toBe("invalid");
  });

  it("refuses an expired code, and its alarm leaves no storage behind", async () => {
    const stub = challenge();
    await stub.issue("h", 5000);
    expect(await stub.verify("h", 5000)).toBe("invalid");
    await stub.issue("h2", Date.now() - 1);
    await runDurableObjectAlarm(stub);
    expect(
      await runInDurableObject(stub, (_instance, state) => state.storage.kv.get("challenge")),
    ).toBeUndefined();
  });
});
