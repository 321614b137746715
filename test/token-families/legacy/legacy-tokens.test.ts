// The legacy drawer (src/token-families/legacy/): refresh tokens from before token families keep working through the
// read-only D1 indexes and are moved onto a family at their next refresh. Goes with the drawer (docs/operations.md).
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { NO_VERIFICATION, service, signUp, type WireSession } from "../../helpers";
import { basic, grantFor, postForm, provider, type TokenAnswer } from "../../oauth2/support";
import { type Counts, countingDb } from "../../support/counting-bindings";

describe("session tokens from before locators", () => {
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

describe("OAuth2 refresh tokens from before grant-naming tokens", () => {
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

  it("introspection sees such a token while it is current; revoking it ends the grant", async () => {
    const oauth2 = provider();
    const { client } = await grantFor(oauth2);
    const { grantId, legacy } = await legacyGrantToken(client.clientId);
    const introspect = async () =>
      (await (await postForm(oauth2, "/oauth2/introspect", { token: legacy }, basic(client))).json()) as {
        active: boolean;
        client_id?: string;
      };
    expect(await introspect()).toMatchObject({ active: true, client_id: client.clientId });
    expect((await postForm(oauth2, "/oauth2/revoke", { token: legacy }, basic(client))).status).toBe(200);
    expect(await introspect()).toEqual({ active: false });
    const left = await env.DB.prepare("SELECT id FROM oauth2_grants WHERE id = ?").bind(grantId).first();
    expect(left).toBeNull();
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

/** A grant's refresh token as the release before grant-naming tokens made it: `ort_` + 43 characters, indexed. */
async function legacyGrantToken(clientId: string): Promise<{ grantId: string; legacy: string }> {
  const grantId = (await env.DB.prepare("SELECT id FROM oauth2_grants WHERE client_id = ?")
    .bind(clientId)
    .first<{ id: string }>())!.id;
  const legacy = `ort_${"L".repeat(11)}${crypto.randomUUID().replace(/-/g, "")}`;
  await env.DB.prepare(
    "INSERT INTO oauth2_refresh_tokens (token_hash, grant_id, expires_at) VALUES (?, ?, ?)",
  )
    .bind(await sha256(legacy), grantId, Date.now() + 3_600_000)
    .run();
  return { grantId, legacy };
}
