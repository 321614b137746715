import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { claim, ownerOf } from "../../src/db/directory";
import { getConfig } from "../../src/runtime/config";
import { runHousekeeping } from "../../src/runtime/cron";
import { fileEntry } from "../../src/storage/file-shards";
import { NO_VERIFICATION, service } from "../helpers";
import { allInShards, testShards, userD1 } from "../support/shards";
import { signUpInEachShard, signUpInShard } from "./shard-users";

/** Rows counted in every shard (src/db/shards.ts): a user's are in one, the home database's globals in the first. */
const count = async (sql: string, ...args: unknown[]) =>
  (await allInShards<{ n: number }>(sql, ...args)).reduce((sum, { n }) => sum + n, 0);

describe("scheduled housekeeping", () => {
  it("removes expired sessions and tokens and keeps live ones", async () => {
    const svc = service(NO_VERIFICATION);
    // One of each in every shard: the sweep visits them all.
    const [live, expired] = [await signUpInEachShard(svc), await signUpInEachShard(svc)];
    for (const session of expired) {
      const shard = userD1(session.user.id);
      await shard
        .prepare("UPDATE sessions SET expires_at = 1 WHERE id = ?")
        .bind(session.refreshTokenId)
        .run();
      await shard
        .prepare("UPDATE refresh_tokens SET expires_at = 1 WHERE session_id = ?")
        .bind(session.refreshTokenId)
        .run();
    }
    await runHousekeeping(svc.env, getConfig(svc.env));
    for (const session of expired) {
      expect(await count("SELECT count(*) AS n FROM sessions WHERE id = ?", session.refreshTokenId)).toBe(0);
      expect(
        await count("SELECT count(*) AS n FROM refresh_tokens WHERE session_id = ?", session.refreshTokenId),
      ).toBe(0);
    }
    for (const session of live) {
      expect(await count("SELECT count(*) AS n FROM sessions WHERE id = ?", session.refreshTokenId)).toBe(1);
      expect((await svc.post("/token", { refreshToken: session.refreshToken })).status).toBe(200);
    }
  });

  it("removes expired personal access tokens and keeps live ones", async () => {
    const svc = service(NO_VERIFICATION);
    const { accessToken, user } = await signUpInShard(svc, 1);
    const create = async () => {
      const response = await svc.post(
        "/pat",
        { expiresAt: new Date(Date.now() + 60_000).toISOString() },
        accessToken,
      );
      return (await response.json()) as { id: string; personalAccessToken: string };
    };
    const [live, expired] = [await create(), await create()];
    await userD1(user.id)
      .prepare("UPDATE personal_access_tokens SET expires_at = 1 WHERE id = ?")
      .bind(expired.id)
      .run();
    await runHousekeeping(svc.env, getConfig(svc.env));
    expect(await count("SELECT count(*) AS n FROM personal_access_tokens WHERE id = ?", expired.id)).toBe(0);
    expect((await svc.post("/signin/pat", { personalAccessToken: live.personalAccessToken })).status).toBe(
      200,
    );
  });

  it("removes upload reservations a crash left behind, with their bytes, and keeps uploads in progress", async () => {
    const old = crypto.randomUUID();
    const fresh = crypto.randomUUID();
    const day = 24 * 3600 * 1000;
    for (const [id, createdAt] of [
      [old, Date.now() - 2 * day],
      [fresh, Date.now()],
    ] as const) {
      await env.DB.prepare(
        "INSERT INTO files (id, bucket_id, name, size, mime_type, etag, object_key, is_uploaded, created_at, updated_at) VALUES (?, 'default', 'x', 0, 'text/plain', '\"\"', ?, 0, ?, ?)",
      )
        .bind(id, `default/${id}`, createdAt, createdAt)
        .run();
      await env.FILES.put(`default/${id}`, "partial");
    }
    await runHousekeeping({ ...env }, getConfig(env));
    expect(await count("SELECT count(*) AS n FROM files WHERE id = ?", old)).toBe(0);
    expect(await env.FILES.head(`default/${old}`)).toBeNull();
    expect(await count("SELECT count(*) AS n FROM files WHERE id = ?", fresh)).toBe(1);
  });

  // Threat: with several shards, a sweep of the home database only: other shards' dead reservations (and the ids
  // they claimed in the directory) kept for ever.
  it("sweeps every shard's dead upload reservations and gives their ids back", async () => {
    const svc = service(NO_VERIFICATION);
    const day = 24 * 3600 * 1000;
    const old = Date.now() - 2 * day;
    const shards = testShards();
    const left: { id: string; d1: D1Database }[] = [];
    for (const session of await signUpInEachShard(svc)) {
      const id = crypto.randomUUID();
      const d1 = userD1(session.user.id);
      await claim(shards, session.user.id, [fileEntry(id)], old);
      await d1
        .prepare(
          "INSERT INTO files (id, bucket_id, name, size, mime_type, etag, object_key, is_uploaded, uploaded_by_user_id, created_at, updated_at) VALUES (?, 'default', 'x', 0, 'text/plain', '\"\"', ?, 0, ?, ?, ?)",
        )
        .bind(id, `default/${id}`, session.user.id, old, old)
        .run();
      await env.FILES.put(`default/${id}`, "partial");
      left.push({ id, d1 });
    }
    await runHousekeeping({ ...env }, getConfig(env));
    for (const { id, d1 } of left) {
      expect(await d1.prepare("SELECT id FROM files WHERE id = ?").bind(id).first()).toBeNull();
      expect(await env.FILES.head(`default/${id}`)).toBeNull();
      expect(await ownerOf(shards, fileEntry(id))).toBeUndefined();
    }
  });

  // Threat: a self-registered client swept from the home database while its grants and consents, in its users'
  // shards where no foreign key reaches, live on.
  it("removes an unused registered client's grants and consents in every shard; an admin's client keeps its own", async () => {
    const svc = service(NO_VERIFICATION);
    const sessions = await signUpInEachShard(svc);
    const long = Date.now() - 400 * 24 * 3600 * 1000;
    const soon = Date.now() + 3600 * 1000;
    const client = (id: string, registration: string) =>
      env.DB.prepare(
        `INSERT INTO oauth2_clients (client_id, client_name, redirect_uris, scopes, grant_types,
          token_endpoint_auth_method, access_token_lifetime, refresh_token_lifetime, created_at, updated_at, registration)
         VALUES (?, 'swept', '["https://app.example/cb"]', '["openid"]', '["authorization_code"]', 'none', 900, 2592000, ?, ?, ?)`,
      )
        .bind(id, long, long, registration)
        .run();
    const [unused, kept] = [`unused-${crypto.randomUUID()}`, `admins-${crypto.randomUUID()}`];
    await client(unused, "open");
    await client(kept, "admin");
    for (const session of sessions) {
      const d1 = userD1(session.user.id);
      for (const clientId of [unused, kept]) {
        await d1
          .prepare(
            "INSERT INTO oauth2_grants (id, client_id, user_id, scopes, auth_time, created_at, last_used_at, expires_at) VALUES (?, ?, ?, '[\"openid\"]', ?, ?, ?, ?)",
          )
          .bind(crypto.randomUUID(), clientId, session.user.id, long, long, long, soon)
          .run();
        await d1
          .prepare(
            "INSERT INTO oauth2_consents (user_id, client_id, scopes, granted_at) VALUES (?, ?, '[\"openid\"]', ?)",
          )
          .bind(session.user.id, clientId, long)
          .run();
      }
    }
    await runHousekeeping({ ...env }, getConfig(env));
    const rows = (table: string, clientId: string) =>
      count(`SELECT count(*) AS n FROM ${table} WHERE client_id = ?`, clientId);
    expect(await rows("oauth2_clients", unused)).toBe(0);
    expect(await rows("oauth2_grants", unused)).toBe(0);
    expect(await rows("oauth2_consents", unused)).toBe(0);
    expect(await rows("oauth2_clients", kept)).toBe(1);
    expect(await rows("oauth2_grants", kept)).toBe(sessions.length);
    expect(await rows("oauth2_consents", kept)).toBe(sessions.length);
  });

  it("removes expired invitations, enterprise sign-ins under way and remembered assertion ids; keeps live ones", async () => {
    const svc = service();
    const orgId = crypto.randomUUID();
    const now = Date.now();
    await env.DB.prepare(
      "INSERT INTO organizations (id, name, slug, created_at, updated_at) VALUES (?, 'Sweep', ?, ?, ?)",
    )
      .bind(orgId, `sweep-${orgId}`, now, now)
      .run();
    const tag = crypto.randomUUID();
    for (const [suffix, expiresAt] of [
      ["live", now + 60_000],
      ["dead", now - 1],
    ] as const) {
      await env.DB.batch([
        env.DB.prepare(
          "INSERT INTO org_invitations (id, org_id, email, role, ticket_hash, created_at, expires_at) VALUES (?, ?, 'a@example.com', 'member', ?, ?, ?)",
        ).bind(`${tag}-${suffix}`, orgId, `${tag}-${suffix}`, now, expiresAt),
        env.DB.prepare(
          "INSERT INTO sso_requests (state_hash, connection_id, redirect_to, browser_hash, expires_at) VALUES (?, 'c', '/', 'b', ?)",
        ).bind(`${tag}-${suffix}`, expiresAt),
        env.DB.prepare("INSERT INTO sso_assertion_ids (id_hash, expires_at) VALUES (?, ?)").bind(
          `${tag}-${suffix}`,
          expiresAt,
        ),
      ]);
    }
    await runHousekeeping(svc.env, getConfig(svc.env));
    for (const [table, key] of [
      ["org_invitations", "id"],
      ["sso_requests", "state_hash"],
      ["sso_assertion_ids", "id_hash"],
    ] as const) {
      const left = await env.DB.prepare(`SELECT ${key} AS k FROM ${table} WHERE ${key} LIKE ?`)
        .bind(`${tag}-%`)
        .all<{ k: string }>();
      expect(left.results.map((row) => row.k)).toEqual([`${tag}-live`]);
    }
  });
});
