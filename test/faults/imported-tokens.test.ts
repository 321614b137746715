// D1 failing under an old system's access token and under the cut-over (contract supabase.md §6). Threat: a database
// fault read as "no cut-over" or "no credential change" turns a refusal into an acceptance, or the reverse into a 500;
// a cut-over half recorded. Each statement fails in turn: the answer is the contract's 503 (or the whole answer when
// the statement ran after it), never a 500, and a cut-over is recorded whole or not at all.
import { env } from "cloudflare:test";
import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { PASSWORD, service } from "../helpers";
import { admin, importUsers, nhostBcrypt, nhostUser } from "../move-in/support";
import { failingShards } from "../support/faults";
import { expectUnavailable } from "./support";

const KEY = "a-faulty-nhost-project-hs256-secret-32+chars";
const IMPORTED = { AUTH_IMPORTED_JWT_SECRET: JSON.stringify({ type: "HS256", key: KEY }) };

/** A token the old project signed a minute ago for `userId`, as Nhost signs them (issuer `hasura-auth`). */
function oldToken(userId: string): Promise<string> {
  const iat = Math.floor(Date.now() / 1000) - 60;
  return new SignJWT({
    "https://hasura.io/jwt/claims": {
      "x-hasura-allowed-roles": ["user"],
      "x-hasura-default-role": "user",
      "x-hasura-user-id": userId,
    },
  })
    .setProtectedHeader({ alg: "HS256" })
    .setIssuer("hasura-auth")
    .setSubject(userId)
    .setIssuedAt(iat)
    .setExpirationTime(iat + 900)
    .sign(new TextEncoder().encode(KEY));
}

/** When the recorded Nhost cut-over says the app switched, read with D1 healthy (null: none recorded). */
async function recordedAt(): Promise<string | null> {
  const answer = await service(IMPORTED).request("GET", "/admin/import/cut-over", { headers: admin() });
  const { items } = (await answer.json()) as { items: { system: string; at: string }[] };
  return items.find((item) => item.system === "nhost")?.at ?? null;
}

describe("old tokens with D1 failing", () => {
  it("each statement of recording the cut-over, then of GET /user with an old token: a 503, never a 500", async () => {
    const healthy = service(IMPORTED);
    const moved = await nhostUser({}, await nhostBcrypt(PASSWORD));
    expect((await importUsers(healthy, [moved.bundle])).results[0]!.outcome).toBe("imported");

    // Recording the cut-over (each time at a new minute in the past): a failed step answers 503 and leaves the
    // cut-over recorded before; an answered one recorded it whole.
    const record = (bindings: Record<string, unknown>, at: string) =>
      service({ ...IMPORTED, ...bindings }).request("POST", "/admin/import/cut-over", {
        json: { at },
        headers: admin(),
      });
    const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();
    const recordSteps = failingShards(env, { after: Number.POSITIVE_INFINITY });
    expect((await record(recordSteps.bindings, minutesAgo(1))).status).toBe(200);
    expect(recordSteps.fault.seen.length).toBeGreaterThan(0);
    for (let step = 0; step < recordSteps.fault.seen.length; step++) {
      const before = await recordedAt();
      const at = minutesAgo(2 + step);
      const answer = await record(failingShards(env, { after: step, times: 1 }).bindings, at);
      if (answer.status === 200) {
        expect(await recordedAt()).toBe(at);
        continue;
      }
      await expectUnavailable(answer, `cut-over step ${step}`);
      expect(await recordedAt()).toBe(before);
    }
    // The last word: a cut-over a minute ago, so the old token below was issued before it.
    expect((await record({}, minutesAgo(0.5))).status).toBe(200);

    // Reading with an old token: each statement failing gives 503; when D1 is back the token reads.
    const token = await oldToken(moved.id);
    const read = (bindings: Record<string, unknown>) =>
      service({ ...IMPORTED, ...bindings }).get("/user", token);
    const readSteps = failingShards(env, { after: Number.POSITIVE_INFINITY });
    expect((await read(readSteps.bindings)).status).toBe(200);
    expect(readSteps.fault.seen.length).toBeGreaterThan(0);
    for (let step = 0; step < readSteps.fault.seen.length; step++) {
      const answer = await read(failingShards(env, { after: step, times: 1 }).bindings);
      if (answer.status === 200) continue;
      await expectUnavailable(answer, `read step ${step}: ${readSteps.fault.seen[step]!.slice(0, 80)}`);
    }
    expect((await read({})).status).toBe(200);
  });
});
