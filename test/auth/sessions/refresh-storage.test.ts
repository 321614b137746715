// What a refresh costs in D1 and Durable Objects: the session and OAuth2 refresh paths write nothing to the one D1
// primary, read one row and call one object. Counted by wrapping the bindings the Worker gets (tokens from before
// families: test/token-families/legacy/).
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { NO_VERIFICATION, service, signUp, type WireSession } from "../../helpers";
import { basic, grantFor, postForm, provider, type TokenAnswer } from "../../oauth2/support";
import { type Counts, countingNamespace, countingShards } from "../../support/counting-bindings";

describe("D1 on the refresh hot path", () => {
  it("runs no write and one read per refresh (the session's last-used time is written at most hourly)", async () => {
    const svc = service(NO_VERIFICATION);
    let session = await signUp(svc);
    const counts: Counts = { reads: 0, writes: 0 };
    // Every shard is counted: the session's row is in its user's, the keys in the home database.
    const counted = service({ ...NO_VERIFICATION, ...countingShards(counts) });
    // The first request of an isolate also reads the signing keys (then at most every ten seconds, src/signing-keys/keys.ts).
    const warm = await counted.post("/token", { refreshToken: session.refreshToken });
    session = (await warm.json()) as WireSession;
    expect(counts).toEqual({ reads: 2, writes: 0 });
    counts.reads = 0;
    for (let i = 0; i < 5; i++) {
      const response = await counted.post("/token", { refreshToken: session.refreshToken });
      expect(response.status).toBe(200);
      session = (await response.json()) as WireSession;
    }
    expect(counts).toEqual({ reads: 5, writes: 0 });
  });
});

describe("D1 and Durable Objects on the OAuth2 refresh path", () => {
  it("one object call, one D1 read and no write per refresh", async () => {
    const oauth2 = provider();
    const { client, tokens } = await grantFor(oauth2);
    const counts: Counts = { reads: 0, writes: 0 };
    const objects = { families: 0, legacy: 0 };
    const counted = provider({
      ...countingShards(counts),
      SESSION_FAMILIES: countingNamespace(env.SESSION_FAMILIES, () => objects.families++),
      REFRESH_SESSIONS: countingNamespace(env.REFRESH_SESSIONS, () => objects.legacy++),
    });
    const refresh = async (refreshToken: string) => {
      const answer = await postForm(
        counted,
        "/oauth2/token",
        { grant_type: "refresh_token", refresh_token: refreshToken },
        basic(client),
      );
      expect(answer.status).toBe(200);
      return ((await answer.json()) as TokenAnswer).refresh_token!;
    };
    expect(tokens.refresh_token).toMatch(/^ort_[0-9a-f]{32}[A-Za-z0-9_-]{43}$/);
    // The first request of an isolate also reads the key set and the client (both kept ten seconds).
    let refreshToken = await refresh(tokens.refresh_token!);
    Object.assign(counts, { reads: 0, writes: 0 });
    Object.assign(objects, { families: 0, legacy: 0 });
    for (let i = 0; i < 5; i++) refreshToken = await refresh(refreshToken);
    expect(counts).toEqual({ reads: 5, writes: 0 });
    expect(objects).toEqual({ families: 5, legacy: 0 });
  });
});
