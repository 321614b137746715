import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { describe, expect, inject, it } from "vitest";
import { UPSTREAM_ANON_KEY, UPSTREAM_JWT_SECRET } from "../../fakes/supabase-upstream";
import { PASSWORD } from "../../helpers";
import { admin, importUsers, iso, nhostBcrypt, nhostUser, sha256Hex } from "../../move-in/support";
import { FACE, PUBLISHABLE_KEY, SECRET_KEY, supabaseClient, supabaseService } from "./support";

/**
 * The old Supabase project's access tokens after the move (contract supabase.md §5–6). The threat: the project's JWT
 * secret was in every Edge Function and server of the old app, so whoever holds it can sign any token; without these
 * rules such a token would read and change anyone's account here for as long as the setting stays. Now: nothing before
 * a recorded `supabase` cut-over or after its ceiling; only HS256 under that secret, from that issuer, short-lived,
 * for a user not banned and unchanged since, whose GoTrue session the import carried; and read-only.
 *
 * The first test must run before any cut-over is recorded in this file's database.
 */

const KEY = "an-old-supabase-project-jwt-secret-of-40-chars";
const ISSUER = "https://old-project.supabase.co/auth/v1";
const svc = supabaseService({
  AUTH_IMPORTED_SUPABASE_JWT_SECRET: KEY,
  AUTH_IMPORTED_SUPABASE_ISSUER: ISSUER,
  AUTH_MFA_ENABLED: "true",
});
const hash = await nhostBcrypt(PASSWORD);
const seconds = (ms: number) => Math.floor(ms / 1000);
const DAY = 86_400_000;

/** A user moved from Supabase with one GoTrue session (its 12-character token), and that session's id. */
async function movedUser() {
  const sessionId = crypto.randomUUID();
  const now = Date.now();
  const refreshToken = sessionId.replace(/-/g, "").slice(0, 12);
  const session = {
    id: sessionId,
    createdAt: iso(now - DAY),
    refreshTokens: [
      { id: "1", tokenHash: await sha256Hex(refreshToken), revoked: false, createdAt: iso(now) },
    ],
  };
  const { bundle, id, email } = await nhostUser({ refreshTokens: [], supabaseSessions: [session] }, hash);
  expect((await importUsers(svc, [bundle])).results[0]!.outcome).toBe("imported");
  return { id, email, sessionId, refreshToken };
}

/** A token as GoTrue signs them (internal/tokens: HS256 with the secret's raw bytes), or as anyone with the key could. */
function oldToken(
  user: { id: string; sessionId: string },
  options: { iat?: number; lifetime?: number; role?: string; iss?: string } = {},
) {
  const iat = options.iat ?? seconds(Date.now()) - 60;
  return new SignJWT({
    aud: "authenticated",
    role: options.role ?? "authenticated",
    session_id: user.sessionId,
    aal: "aal1",
    email: "someone@example.com",
    is_anonymous: false,
  })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(user.id)
    .setIssuer(options.iss ?? ISSUER)
    .setIssuedAt(iat)
    .setExpirationTime(iat + (options.lifetime ?? 3600))
    .sign(new TextEncoder().encode(KEY));
}

const recordCutOver = (at: number) =>
  svc.request("POST", "/admin/import/cut-over", {
    json: { system: "supabase", at: new Date(at).toISOString() },
    headers: admin(),
  });

const getUser = (token: string) => supabaseClient(svc).auth.getUser(token);

describe("the old Supabase project's access tokens", () => {
  it("before a supabase cut-over is recorded: refused (bad_jwt)", async () => {
    const user = await movedUser();
    const { error } = await getUser(await oldToken(user));
    expect(error).toMatchObject({ status: 403, code: "bad_jwt" });
  });

  // The ceiling: a cut-over two hours ago plus the one-hour cap is past, so no old token can still be valid.
  it("after the ceiling: refused; with a cut-over now, the same kind of token reads getUser", async () => {
    const user = await movedUser();
    expect((await recordCutOver(Date.now() - 2 * 3_600_000)).status).toBe(200);
    const early = await oldToken(user, { iat: seconds(Date.now() - 2 * 3_600_000) - 60 });
    expect((await getUser(early)).error).toMatchObject({ status: 403, code: "bad_jwt" });

    const cutOver = await recordCutOver(Date.now());
    expect(await cutOver.json()).toMatchObject({ system: "supabase", secretSet: true });
    const { data, error } = await getUser(await oldToken(user));
    expect(error).toBeNull();
    expect(data.user?.id).toBe(user.id);
  });

  // Algorithm confusion (RFC 8725 §3.1): `none`, or RS256 under a key the attacker made, must never pass as HS256.
  it("alg none, RS256, another issuer, a lifetime over the cap, or the anon role: refused", async () => {
    const user = await movedUser();
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
    const iat = seconds(Date.now()) - 60;
    const body = {
      sub: user.id,
      iss: ISSUER,
      aud: "authenticated",
      role: "authenticated",
      iat,
      exp: iat + 600,
    };
    const none = `${b64({ alg: "none", typ: "JWT" })}.${b64({ ...body, session_id: user.sessionId })}.`;
    const { privateKey } = await generateKeyPair("RS256");
    const rs256 = await new SignJWT({ ...body, session_id: user.sessionId })
      .setProtectedHeader({ alg: "RS256" })
      .sign(privateKey);
    for (const token of [
      none,
      rs256,
      await oldToken(user, { iss: "https://another.supabase.co/auth/v1" }),
      await oldToken(user, { lifetime: 7200 }),
      await oldToken(user, { role: "anon" }),
      await oldToken(user, { role: "service_role" }),
    ]) {
      expect((await getUser(token)).error).toMatchObject({ status: 403, code: "bad_jwt" });
    }
    expect((await getUser(await oldToken(user))).error).toBeNull();
  });

  // The remedies for a token someone else holds must work on old tokens too: a ban, a password change here.
  it("refused for a banned user, and after a password change here", async () => {
    const service = supabaseClient(svc, SECRET_KEY);
    const banned = await movedUser();
    const bannedToken = await oldToken(banned);
    expect((await getUser(bannedToken)).error).toBeNull();
    expect((await service.auth.admin.updateUserById(banned.id, { ban_duration: "24h" })).error).toBeNull();
    expect((await getUser(bannedToken)).error).toMatchObject({ status: 403 });

    const changed = await movedUser();
    const changedToken = await oldToken(changed, { iat: seconds(Date.now()) - 5 });
    expect((await getUser(changedToken)).error).toBeNull();
    expect(
      (await service.auth.admin.updateUserById(changed.id, { password: `${PASSWORD}-new` })).error,
    ).toBeNull();
    expect((await getUser(changedToken)).error).toMatchObject({ status: 403 });
  });

  // Read-only: the shared key must not become a way to take over the account (a new email, password, or factor).
  it("updateUser and mfa.enroll with it: 403, the contract's message; the session the import carried is its session", async () => {
    const user = await movedUser();
    const client = supabaseClient(svc);
    const token = await oldToken(user);
    const set = await client.auth.setSession({ access_token: token, refresh_token: user.refreshToken });
    expect(set.error).toBeNull();
    const update = await client.auth.updateUser({ email: "attacker@example.com" });
    expect(update.error).toMatchObject({
      status: 403,
      message: "a token of the previous system cannot change credentials",
    });
    const password = await client.auth.updateUser({ password: "an-attackers-password-1" });

    expect(password.error).toMatchObject({ status: 403 });
    const enroll = await client.auth.mfa.enroll({ factorType: "totp" });
    expect(enroll.error).toMatchObject({ status: 403 });
    const link = await client.auth.linkIdentity({
      provider: "github",
      options: { skipBrowserRedirect: true },
    });
    expect(link.error).toMatchObject({ status: 403 });
    expect((await client.auth.reauthenticate()).error).toMatchObject({ status: 403 });
    // A GoTrue session the import did not carry (or one signed out here) is gone: session_not_found, as GoTrue says.
    const stranger = await oldToken({ id: user.id, sessionId: crypto.randomUUID() });
    const answer = await svc.request("GET", `${FACE}/auth/v1/user`, {
      headers: { apikey: PUBLISHABLE_KEY, authorization: `Bearer ${stranger}` },
    });
    expect(answer.status).toBe(403);
    expect(await answer.json()).toMatchObject({ error_code: "session_not_found" });
  });

  // Storage serves it as its user (contract §6: reads and storage), with the user's roles here, not the token's.
  it("storage: uploads and downloads as its user through storage-js", async () => {
    const created = await svc.request("POST", "http://localhost:8787/storage/v1/buckets", {
      headers: admin(),
      json: {
        id: "moved-files",
        rules: { upload: "authenticated", read: "owner", update: "owner", delete: "owner" },
      },
    });
    expect(created.status).toBe(201);
    const user = await movedUser();
    const client = supabaseClient(svc);
    expect(
      (await client.auth.setSession({ access_token: await oldToken(user), refresh_token: user.refreshToken }))
        .error,
    ).toBeNull();
    const path = `${user.id}/note.txt`;
    const put = await client.storage
      .from("moved-files")
      .upload(path, new File(["kept"], "note.txt", { type: "text/plain" }));
    expect(put.error).toBeNull();
    const got = await client.storage.from("moved-files").download(path);
    expect(got.error).toBeNull();
    expect(await got.data!.text()).toBe("kept");
  });

  // The data calls' forward exchanges only this service's own session tokens (contract §4): an old token handed to
  // the upstream as a fresh one would outlive every rule above. Refused with GoTrue's 401; nothing reaches upstream.
  it("a data call (from().select()) with it: GoTrue's 401, never forwarded", async () => {
    const forwarding = supabaseService({
      AUTH_IMPORTED_SUPABASE_JWT_SECRET: KEY,
      AUTH_IMPORTED_SUPABASE_ISSUER: ISSUER,
      OUTBOUND: undefined,
      AUTH_OUTBOUND_ALLOW_LOCAL: "true",
      AUTH_SUPABASE_UPSTREAM_URL: inject("upstreamUrl"),
      AUTH_SUPABASE_UPSTREAM_JWT_SECRET: UPSTREAM_JWT_SECRET,
      AUTH_SUPABASE_UPSTREAM_ANON_KEY: UPSTREAM_ANON_KEY,
    });
    const user = await movedUser();
    const token = await oldToken(user);
    expect((await supabaseClient(forwarding).auth.getUser(token)).error).toBeNull();
    const answer = await forwarding.request("GET", `${FACE}/rest/v1/todos`, {
      headers: { apikey: PUBLISHABLE_KEY, authorization: `Bearer ${token}` },
    });
    expect(answer.status).toBe(401);
    expect(await answer.json()).toMatchObject({
      error_code: "no_authorization",
      msg: "This token is not a session token of this service",
    });
    // The same face forwards the user's own session (refreshed from the carried token) as that user.
    const refreshed = await supabaseClient(forwarding).auth.refreshSession({
      refresh_token: user.refreshToken,
    });
    expect(refreshed.error).toBeNull();
    const own = await forwarding.request("GET", `${FACE}/rest/v1/todos`, {
      headers: { apikey: PUBLISHABLE_KEY, authorization: `Bearer ${refreshed.data.session!.access_token}` },
    });
    expect(own.status).toBe(200);
  });

  it("a JWKS secret (asymmetric project) takes ES256 tokens by its key, nothing else", async () => {
    const { publicKey, privateKey } = await generateKeyPair("ES256");
    const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: "old", alg: "ES256" }] });
    const asymmetric = supabaseService({
      AUTH_IMPORTED_SUPABASE_JWT_SECRET: jwks,
      AUTH_IMPORTED_SUPABASE_ISSUER: ISSUER,
    });
    const user = await movedUser();
    expect((await recordCutOver(Date.now())).status).toBe(200);
    const iat = seconds(Date.now()) - 60;
    const token = await new SignJWT({
      aud: "authenticated",
      role: "authenticated",
      session_id: user.sessionId,
    })
      .setProtectedHeader({ alg: "ES256", kid: "old" })
      .setSubject(user.id)
      .setIssuer(ISSUER)
      .setIssuedAt(iat)
      .setExpirationTime(iat + 600)
      .sign(privateKey);
    const { data, error } = await supabaseClient(asymmetric).auth.getUser(token);
    expect(error).toBeNull();
    expect(data.user?.id).toBe(user.id);
    // The HS256 secret's token is nothing to this configuration.
    expect((await supabaseClient(asymmetric).auth.getUser(await oldToken(user))).error).toMatchObject({
      status: 403,
    });
  });
});
