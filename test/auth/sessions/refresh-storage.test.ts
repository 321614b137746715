// What a refresh costs in D1 (issue "hot paths that scale"): none of the hot path writes the one D1 primary, and it
// reads one row. Counted by wrapping the D1 binding the Worker gets. Also: tokens issued before sessions had a
// locator keep working through the read-only fallback until they expire.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { NO_VERIFICATION, service, signUp, type WireSession } from "../../helpers";

interface Counts {
  reads: number;
  writes: number;
}

/** A D1 binding that counts the statements it runs, by their first keyword. */
function countingDb(counts: Counts): D1Database {
  const count = (sql: string) => {
    if (/^\s*(select|with)\b/i.test(sql)) counts.reads++;
    else counts.writes++;
  };
  const wrap = (statement: D1PreparedStatement, sql: string): D1PreparedStatement =>
    new Proxy(statement, {
      get(target, property) {
        if (property === "bind") return (...values: unknown[]) => wrap(target.bind(...values), sql);
        const value = Reflect.get(target, property);
        if (typeof value !== "function") return value;
        if (["first", "run", "all", "raw"].includes(String(property))) {
          return (...args: unknown[]) => {
            count(sql);
            return value.apply(target, args);
          };
        }
        return value.bind(target);
      },
    });
  return new Proxy(env.DB, {
    get(target, property) {
      if (property === "prepare") return (sql: string) => wrap(target.prepare(sql), sql);
      // A batch is counted as writes, all of it: the hot path is not supposed to run one at all.
      if (property === "batch") {
        return (statements: D1PreparedStatement[]) => {
          counts.writes += statements.length;
          return target.batch(statements);
        };
      }
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

describe("D1 on the refresh hot path", () => {
  it("runs no write and one read per refresh (the session's last-used time is written at most hourly)", async () => {
    const svc = service(NO_VERIFICATION);
    let session = await signUp(svc);
    const counts: Counts = { reads: 0, writes: 0 };
    const counted = service({ ...NO_VERIFICATION, DB: countingDb(counts) });
    // The first request of an isolate also reads the signing keys (then at most every ten seconds, src/lib/keys.ts).
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

  it("keeps refreshing a session from before locators through the D1 index", async () => {
    const svc = service(NO_VERIFICATION);
    const current = await signUp(svc);
    // A session as the previous release made it: no locator, its token in refresh_tokens.
    const legacyId = crypto.randomUUID();
    const legacyToken = crypto.randomUUID();
    const now = Date.now();
    const hash = [
      ...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(legacyToken))),
    ]
      .map((b) => b.toString(16).padStart(2, "0"))
      .join("");
    await env.DB.batch([
      env.DB.prepare(
        "INSERT INTO sessions (id, user_id, created_at, last_used_at, expires_at) VALUES (?, ?, ?, ?, ?)",
      ).bind(legacyId, current.user.id, now, now, now + 3_600_000),
      env.DB.prepare("INSERT INTO refresh_tokens (token_hash, session_id, expires_at) VALUES (?, ?, ?)").bind(
        hash,
        legacyId,
        now + 3_600_000,
      ),
    ]);
    const response = await svc.post("/token", { refreshToken: legacyToken });
    expect(response.status).toBe(200);
    const next = (await response.json()) as WireSession;
    expect(next.refreshTokenId).toBe(legacyId);
    // Sign-out by such a token still ends its session.
    const third = (await (
      await svc.post("/token", { refreshToken: next.refreshToken })
    ).json()) as WireSession;
    expect((await svc.post("/signout", { refreshToken: third.refreshToken })).status).toBe(200);
    expect((await svc.post("/token", { refreshToken: third.refreshToken })).status).toBe(401);
  });
});
