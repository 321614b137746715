// What a refresh costs in D1 and Durable Objects: the session and OAuth2 refresh paths write nothing to the one D1
// primary, read one row and call one object. Counted by wrapping the bindings the Worker gets. Also: tokens issued
// before families keep working through the read-only legacy fallback and are moved onto a family at their next refresh.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { NO_VERIFICATION, service, signUp, type WireSession } from "../../helpers";
import { basic, grantFor, postForm, provider, type TokenAnswer } from "../../oauth2/support";

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
      // Reads a replica may serve (src/db/replica.ts) are counted the same: D1 is D1, wherever the copy.
      if (property === "withSession") {
        return (constraint?: string) => {
          const session = target.withSession(constraint);
          return {
            prepare: (sql: string) => wrap(session.prepare(sql), sql),
            batch: (statements: D1PreparedStatement[]) => {
              counts.writes += statements.length;
              return session.batch(statements);
            },
            getBookmark: () => session.getBookmark(),
          };
        };
      }
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
    // Its successor starts a family: the session has a locator now, and the token names it.
    const row = await env.DB.prepare("SELECT locator FROM sessions WHERE id = ?")
      .bind(legacyId)
      .first<{ locator: string }>();
    expect(next.refreshToken.slice(0, 6)).toBe(row!.locator);
    // From then on it refreshes like any other session: one read, no write, the D1 index left alone.
    const counts: Counts = { reads: 0, writes: 0 };
    const counted = service({ ...NO_VERIFICATION, DB: countingDb(counts) });
    const third = (await (
      await counted.post("/token", { refreshToken: next.refreshToken })
    ).json()) as WireSession;
    expect(counts.writes).toBe(0);
    // The legacy token again, past the grace window, is a replay: the session ends.
    const strict = service({ ...NO_VERIFICATION, AUTH_REFRESH_TOKEN_REUSE_INTERVAL: "0" });
    expect((await strict.post("/token", { refreshToken: legacyToken })).status).toBe(401);
    expect((await svc.post("/token", { refreshToken: third.refreshToken })).status).toBe(401);
  });

  it("signs out a session from before locators by its legacy token", async () => {
    const svc = service(NO_VERIFICATION);
    const current = await signUp(svc);
    const { id, token } = await legacySession(current.user.id);
    expect((await svc.post("/signout", { refreshToken: token })).status).toBe(200);
    expect(await env.DB.prepare("SELECT id FROM sessions WHERE id = ?").bind(id).first()).toBeNull();
  });
});

describe("D1 and Durable Objects on the OAuth2 refresh path", () => {
  it("one object call, one D1 read and no write per refresh", async () => {
    const oauth2 = provider();
    const { client, tokens } = await grantFor(oauth2);
    const counts: Counts = { reads: 0, writes: 0 };
    const objects = { families: 0, legacy: 0 };
    const counted = provider({
      DB: countingDb(counts),
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

  it("moves a token from before (found through the D1 index) onto a family at its next refresh", async () => {
    const oauth2 = provider();
    const { client, tokens } = await grantFor(oauth2);
    const grantId = (await env.DB.prepare("SELECT id FROM oauth2_grants WHERE client_id = ?")
      .bind(client.clientId)
      .first<{ id: string }>())!.id;
    // A token as the previous release made it: `ort_` + 43 characters, indexed in oauth2_refresh_tokens.
    const legacy = `ort_${"L".repeat(11)}${crypto.randomUUID().replace(/-/g, "")}`;
    await env.DB.prepare(
      "INSERT INTO oauth2_refresh_tokens (token_hash, grant_id, expires_at) VALUES (?, ?, ?)",
    )
      .bind(await sha256(legacy), grantId, Date.now() + 3_600_000)
      .run();
    const refresh = (refreshToken: string, svc = oauth2) =>
      postForm(
        svc,
        "/oauth2/token",
        { grant_type: "refresh_token", refresh_token: refreshToken },
        basic(client),
      );
    const moved = await refresh(legacy);
    expect(moved.status).toBe(200);
    const successor = ((await moved.json()) as TokenAnswer).refresh_token!;
    expect(successor.slice(4, 36)).toBe(grantId.slice(3).replace(/-/g, ""));
    expect((await refresh(successor)).status).toBe(200);
    // The legacy token again, past the grace window, is a replay: the grant is revoked (its other token too).
    const strict = provider({ AUTH_REFRESH_TOKEN_REUSE_INTERVAL: "0" });
    expect((await refresh(legacy, strict)).status).toBe(400);
    expect((await refresh(tokens.refresh_token!)).status).toBe(400);
  });
});

async function sha256(value: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** A session as the release before locators made it: no locator, its token in refresh_tokens. */
async function legacySession(userId: string): Promise<{ id: string; token: string }> {
  const id = crypto.randomUUID();
  const token = crypto.randomUUID();
  const now = Date.now();
  await env.DB.batch([
    env.DB.prepare(
      "INSERT INTO sessions (id, user_id, created_at, last_used_at, expires_at) VALUES (?, ?, ?, ?, ?)",
    ).bind(id, userId, now, now, now + 3_600_000),
    env.DB.prepare("INSERT INTO refresh_tokens (token_hash, session_id, expires_at) VALUES (?, ?, ?)").bind(
      await sha256(token),
      id,
      now + 3_600_000,
    ),
  ]);
  return { id, token };
}

/** A Durable Object namespace that counts the objects asked for. */
function countingNamespace<T extends DurableObjectNamespace>(namespace: T, onGet: () => void): T {
  return new Proxy(namespace, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (property === "get") {
        return (...args: unknown[]) => {
          onGet();
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
