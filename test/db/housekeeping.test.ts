import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { getConfig } from "../../src/config";
import { runHousekeeping } from "../../src/db/housekeeping";
import { NO_VERIFICATION, service, signUp } from "../helpers";

const count = async (sql: string, ...args: unknown[]) =>
  (await env.DB.prepare(sql)
    .bind(...args)
    .first<{ n: number }>())!.n;

describe("scheduled housekeeping", () => {
  it("removes expired sessions and tokens and keeps live ones", async () => {
    const svc = service(NO_VERIFICATION);
    const live = await signUp(svc);
    const expired = await signUp(svc);
    await env.DB.prepare("UPDATE sessions SET expires_at = 1 WHERE id = ?")
      .bind(expired.refreshTokenId)
      .run();
    await env.DB.prepare("UPDATE refresh_tokens SET expires_at = 1 WHERE session_id = ?")
      .bind(expired.refreshTokenId)
      .run();
    await runHousekeeping(svc.env, getConfig(svc.env));
    expect(await count("SELECT count(*) AS n FROM sessions WHERE id = ?", expired.refreshTokenId)).toBe(0);
    expect(
      await count("SELECT count(*) AS n FROM refresh_tokens WHERE session_id = ?", expired.refreshTokenId),
    ).toBe(0);
    expect(await count("SELECT count(*) AS n FROM sessions WHERE id = ?", live.refreshTokenId)).toBe(1);
    expect((await svc.post("/token", { refreshToken: live.refreshToken })).status).toBe(200);
  });

  it("removes expired personal access tokens and keeps live ones", async () => {
    const svc = service(NO_VERIFICATION);
    const { accessToken } = await signUp(svc);
    const create = async () => {
      const response = await svc.post(
        "/pat",
        { expiresAt: new Date(Date.now() + 60_000).toISOString() },
        accessToken,
      );
      return (await response.json()) as { id: string; personalAccessToken: string };
    };
    const [live, expired] = [await create(), await create()];
    await env.DB.prepare("UPDATE personal_access_tokens SET expires_at = 1 WHERE id = ?")
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
});
