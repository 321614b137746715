import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AdminUser, AdminUserDetail } from "../../src/admin/wire";
import { expectError, NO_VERIFICATION, PASSWORD, service, signUp, uniqueEmail } from "../helpers";
import { grantFor, postForm, provider } from "../oauth2/support";
import { userD1 } from "../support/shards";

const svc = service(NO_VERIFICATION);
const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };
const admin = (method: string, path: string, json?: unknown) =>
  svc.request(method, `/admin${path}`, { headers: ADMIN, json });

async function createUser(body: Record<string, unknown>): Promise<AdminUser> {
  const response = await admin("POST", "/users", body);
  expect(response.status).toBe(201);
  expect(response.headers.get("cache-control")).toBe("no-store");
  return (await response.json()) as AdminUser;
}

const refresh = (refreshToken: string) => svc.post("/token", { refreshToken });

describe("admin API: users", () => {
  it("asks the admin secret on every user, session and audit endpoint", async () => {
    const id = crypto.randomUUID();
    for (const [method, path] of [
      ["GET", "/users"],
      ["POST", "/users"],
      ["GET", `/users/${id}`],
      ["PATCH", `/users/${id}`],
      ["DELETE", `/users/${id}`],
      ["GET", `/users/${id}/sessions`],
      ["DELETE", `/users/${id}/sessions`],
      ["DELETE", `/sessions/${id}`],
      ["GET", "/audit"],
    ]) {
      const json = method === "GET" ? undefined : {};
      await expectError(await svc.request(method!, `/admin${path}`, { json }), 401, "unauthorized");
    }
  });

  it("creates a user (201), refuses a taken email (409), and the user can sign in with the password", async () => {
    const email = uniqueEmail("admin-created");
    const user = await createUser({
      email,
      password: PASSWORD,
      displayName: "Seeded",
      emailVerified: true,
      metadata: { plan: "pro" },
    });
    expect(user).toMatchObject({ email, displayName: "Seeded", emailVerified: true, disabled: false });
    expect(user.metadata).toEqual({ plan: "pro" });
    await expectError(
      await admin("POST", "/users", { email, password: PASSWORD }),
      409,
      "email-already-in-use",
    );
    const signIn = await service().post("/signin/email-password", { email, password: PASSWORD });
    expect(signIn.status).toBe(200);
    // Without a password the account exists for passwordless methods only.
    const passwordless = await createUser({ email: uniqueEmail("no-password") });
    expect(passwordless.emailVerified).toBe(false);
  });

  it("pages the list across a cursor boundary, newest first, and searches email, name and id", async () => {
    const tag = `page${crypto.randomUUID().slice(0, 6)}`;
    const created: AdminUser[] = [];
    for (let i = 0; i < 3; i++)
      created.push(await createUser({ email: uniqueEmail(tag), displayName: `P ${i}` }));
    const first = await admin("GET", `/users?search=${tag}&limit=2`);
    const page1 = (await first.json()) as { items: AdminUser[]; nextCursor: string | null };
    expect(page1.items.map((u) => u.id)).toEqual([created[2]!.id, created[1]!.id]);
    expect(page1.nextCursor).toEqual(expect.any(String));
    const second = await admin("GET", `/users?search=${tag}&limit=2&cursor=${page1.nextCursor}`);
    const page2 = (await second.json()) as { items: AdminUser[]; nextCursor: string | null };
    expect(page2.items.map((u) => u.id)).toEqual([created[0]!.id]);
    expect(page2.nextCursor).toBeNull();

    const byId = (await (await admin("GET", `/users?search=${created[1]!.id}`)).json()) as {
      items: AdminUser[];
    };
    expect(byId.items.map((u) => u.id)).toEqual([created[1]!.id]);
    const byName = (await (await admin("GET", `/users?search=${tag}&limit=500`)).json()) as {
      items: AdminUser[];
    };
    expect(byName.items).toHaveLength(3);
    // `%` and `_` are literal, not wildcards: a search for them finds no one here.
    const wildcard = (await (await admin("GET", `/users?search=${tag}%25`)).json()) as { items: AdminUser[] };
    expect(wildcard.items).toHaveLength(0);
    await expectError(await admin("GET", "/users?cursor=not-a-cursor"), 400, "invalid-request");
    await expectError(await admin("GET", "/users?limit=501"), 400, "invalid-request");
  });

  it("shows a user with providers and security keys, and 404 for an unknown id", async () => {
    const session = await signUp(svc);
    const detail = (await (await admin("GET", `/users/${session.user.id}`)).json()) as AdminUserDetail;
    expect(detail).toMatchObject({ id: session.user.id, disabled: false, providers: [], securityKeys: [] });
    expect(detail.lastSeen).toEqual(expect.any(String));
    await expectError(await admin("GET", `/users/${crypto.randomUUID()}`), 404, "not-found");
  });

  it("patches roles, names and flags, and refuses a default role outside the roles", async () => {
    const session = await signUp(svc);
    const patched = await admin("PATCH", `/users/${session.user.id}`, {
      roles: ["user", "editor"],
      defaultRole: "editor",
      displayName: "Renamed",
      phoneNumberVerified: true,
    });
    expect(patched.status).toBe(200);
    expect(await patched.json()).toMatchObject({
      roles: ["user", "editor"],
      defaultRole: "editor",
      displayName: "Renamed",
    });
    // The next refresh carries the new claims.
    const refreshed = (await (await refresh(session.refreshToken)).json()) as { accessToken: string };
    const claims = JSON.parse(
      atob(refreshed.accessToken.split(".")[1]!.replace(/-/g, "+").replace(/_/g, "/")),
    );
    expect(claims["https://hasura.io/jwt/claims"]["x-hasura-default-role"]).toBe("editor");
    await expectError(
      await admin("PATCH", `/users/${session.user.id}`, { defaultRole: "admin" }),
      400,
      "default-role-must-be-in-allowed-roles",
    );
    await expectError(
      await admin("PATCH", `/users/${session.user.id}`, { password: "x" }),
      400,
      "invalid-request",
    );
  });

  // Threat: an operator disables a compromised account; its refresh tokens and third-party grants must stop at once.
  it("disabling ends the user's sessions and OAuth2 grants at once", async () => {
    const oauth = provider();
    const { session, tokens, client } = await grantFor(oauth);
    const disabled = await oauth.request("PATCH", `/admin/users/${session.user.id}`, {
      headers: ADMIN,
      json: { disabled: true },
    });
    expect(((await disabled.json()) as AdminUser).disabled).toBe(true);
    expect((await oauth.post("/token", { refreshToken: session.refreshToken })).status).toBe(401);
    const grantRefresh = await postForm(
      oauth,
      "/oauth2/token",
      { grant_type: "refresh_token", refresh_token: tokens.refresh_token! },
      { authorization: `Basic ${btoa(`${client.clientId}:${client.clientSecret}`)}` },
    );
    expect(grantRefresh.status).toBe(400);
    const grants = await userD1(session.user.id)
      .prepare("SELECT count(*) AS n FROM oauth2_grants WHERE user_id = ?")
      .bind(session.user.id)
      .first<{ n: number }>();
    expect(grants!.n).toBe(0);
    await expectError(
      await oauth.post("/signin/email-password", { email: session.user.email, password: PASSWORD }),
      401,
      "disabled-user",
    );
  });

  it("deletes a user and every row that depends on it; files keep their uploader id", async () => {
    const oauth = provider();
    const { session } = await grantFor(oauth);
    const userId = session.user.id;
    const pat = await oauth.post(
      "/pat",
      { expiresAt: new Date(Date.now() + 86_400_000).toISOString() },
      session.accessToken,
    );
    expect(pat.status).toBe(200);
    // A user's rows, their providers and the files they uploaded, live in their shard.
    const shard = userD1(userId);
    await shard
      .prepare(
        "INSERT INTO user_providers (id, user_id, provider, provider_user_id, created_at, updated_at) VALUES (?, ?, 'github', ?, 0, 0)",
      )
      .bind(crypto.randomUUID(), userId, crypto.randomUUID())
      .run();
    // Organizations are home rows: the user's memberships go with them, the org and its other members stay.
    const orgId = crypto.randomUUID();
    const otherMember = crypto.randomUUID();
    await env.DB.batch([
      env.DB.prepare(
        "INSERT INTO organizations (id, name, slug, created_at, updated_at) VALUES (?, 'Kept', ?, 0, 0)",
      ).bind(orgId, `kept-${orgId}`),
      env.DB.prepare(
        "INSERT INTO org_members (org_id, user_id, role, source, created_at, updated_at) VALUES (?, ?, 'owner', 'creator', 0, 0), (?, ?, 'owner', 'admin', 0, 0)",
      ).bind(orgId, userId, orgId, otherMember),
    ]);
    const fileId = crypto.randomUUID();
    await shard
      .prepare(
        "INSERT INTO files (id, bucket_id, name, size, mime_type, etag, is_uploaded, uploaded_by_user_id, created_at, updated_at, object_key, metadata) VALUES (?, 'default', 'kept.txt', 1, 'text/plain', '\"x\"', 1, ?, 0, 0, ?, '{}')",
      )
      .bind(fileId, userId, `default/${fileId}`)
      .run();

    const deleted = await oauth.request("DELETE", `/admin/users/${userId}`, { headers: ADMIN });
    expect(deleted.status).toBe(204);
    for (const table of [
      "users",
      "sessions",
      "tickets",
      "authorization_codes",
      "personal_access_tokens",
      "mfa_tickets",
      "mfa_recovery_codes",
      "security_keys",
      "user_providers",
      "oauth2_grants",
      "oauth2_codes",
      "oauth2_consents",
    ]) {
      const column = table === "users" ? "id" : "user_id";
      const left = await shard
        .prepare(`SELECT count(*) AS n FROM ${table} WHERE ${column} = ?`)
        .bind(userId)
        .first<{ n: number }>();
      expect(left!.n, table).toBe(0);
    }
    const file = await shard
      .prepare("SELECT uploaded_by_user_id AS uploader FROM files WHERE id = ?")
      .bind(fileId)
      .first<{ uploader: string }>();
    expect(file!.uploader).toBe(userId);
    const members = await env.DB.prepare("SELECT user_id AS userId FROM org_members WHERE org_id = ?")
      .bind(orgId)
      .all<{ userId: string }>();
    expect(members.results).toEqual([{ userId: otherMember }]);
    expect((await oauth.post("/token", { refreshToken: session.refreshToken })).status).toBe(401);
    await expectError(
      await oauth.request("DELETE", `/admin/users/${userId}`, { headers: ADMIN }),
      404,
      "not-found",
    );
  });
});

describe("admin API: sessions", () => {
  it("lists a user's sessions, revokes one (its refresh fails at once, the other works), then all", async () => {
    const email = uniqueEmail("sessions");
    const first = await signUp(svc, email);
    const second = (
      (await (await svc.post("/signin/email-password", { email, password: PASSWORD })).json()) as {
        session: { refreshToken: string; refreshTokenId: string };
      }
    ).session;
    const listed = (await (await admin("GET", `/users/${first.user.id}/sessions`)).json()) as {
      items: { id: string; userAgent: string | null; lastUsedAt: string }[];
      nextCursor: string | null;
    };
    expect(listed.items.map((s) => s.id).sort()).toEqual(
      [first.refreshTokenId, second.refreshTokenId].sort(),
    );
    expect(listed.nextCursor).toBeNull();

    expect((await admin("DELETE", `/sessions/${first.refreshTokenId}`)).status).toBe(204);
    expect((await refresh(first.refreshToken)).status).toBe(401);
    const stillThere = await refresh(second.refreshToken);
    expect(stillThere.status).toBe(200);
    const { refreshToken } = (await stillThere.json()) as { refreshToken: string };
    await expectError(await admin("DELETE", `/sessions/${first.refreshTokenId}`), 404, "not-found");

    expect((await admin("DELETE", `/users/${first.user.id}/sessions`)).status).toBe(204);
    expect((await refresh(refreshToken)).status).toBe(401);
    const none = (await (await admin("GET", `/users/${first.user.id}/sessions`)).json()) as {
      items: unknown[];
    };
    expect(none.items).toEqual([]);
  });
});
