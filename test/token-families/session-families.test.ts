// The SessionFamilies object's contract (src/token-families/session-families.ts), driven through the refresh endpoint and
// inspected in the object's own storage.
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { NO_VERIFICATION, service, signUp } from "../helpers";

const svc = service(NO_VERIFICATION);

const familiesAt = (locator: string) =>
  env.SESSION_FAMILIES.get(env.SESSION_FAMILIES.idFromName(`families:${locator}`));

/** The tables in an object's SQLite storage (reading them creates nothing). */
const tablesOf = (locator: string) =>
  runInDurableObject(familiesAt(locator), (_instance, state) =>
    state.storage.sql
      .exec<{ name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\'",
      )
      .toArray()
      .map((row) => row.name),
  );

describe("SessionFamilies", () => {
  // 100 requests reaching 50 new Durable Objects: ~0.6 s on a quiet machine, 2.6 s on a busy one.
  it("made-up refresh tokens reach objects that stay without storage (no tables, no rows)", async () => {
    // Threat: each made-up token names one of 16.7 M objects by its first six hex digits; an object that created its
    // tables on construction gave every such guess a database of its own.
    // The objects looked into afterwards are ones seen empty before: the files of this pool share storage, and a
    // random locator can be one another file's session already holds (a real family, tables and all).
    const looked: string[] = [];
    for (let i = 0; i < 50; i++) {
      const token = crypto.randomUUID();
      const locator = token.slice(0, 6);
      if (looked.length < 10 && (await tablesOf(locator)).length === 0) looked.push(locator);
      const answer = await svc.post("/token", { refreshToken: token });
      expect(answer.status).toBe(401);
      expect((await svc.post("/signout", { refreshToken: token })).status).toBe(200);
    }
    expect(looked.length).toBe(10);
    for (const locator of looked) expect(await tablesOf(locator)).toEqual([]);
  }, 15_000);

  it("a real session's object has its family and token hashes; a replay revokes the family", async () => {
    const session = await signUp(svc);
    const locator = session.refreshToken.slice(0, 6);
    expect(await tablesOf(locator)).toEqual(["families", "tokens"]);
    const rotated = await svc.post("/token", { refreshToken: session.refreshToken });
    expect(rotated.status).toBe(200);
    const next = ((await rotated.json()) as { refreshToken: string }).refreshToken;
    const rows = await runInDurableObject(familiesAt(locator), (_instance, state) => ({
      tokens: state.storage.sql
        .exec("SELECT count(*) AS n FROM tokens WHERE family = ?", session.refreshTokenId)
        .one().n,
      revoked: state.storage.sql
        .exec("SELECT revoked FROM families WHERE id = ?", session.refreshTokenId)
        .one().revoked,
    }));
    expect(rows).toEqual({ tokens: 2, revoked: 0 });
    // Outside the grace window, the first token again is a replay: the whole family ends.
    const later = service({ ...NO_VERIFICATION, AUTH_REFRESH_TOKEN_REUSE_INTERVAL: "0" });
    expect((await later.post("/token", { refreshToken: session.refreshToken })).status).toBe(401);
    expect((await later.post("/token", { refreshToken: next })).status).toBe(401);
  });
});
