// Impersonation (contract operators.md §1) over HTTP. Threats: support acting as a user invisibly (tokens without
// `act`, no audit, no mail), for longer than allowed (a refresh past the end, a token outliving it), or using the
// user's session to grant, link or create something in the user's name (a password, a PAT, an org, a consent); a
// landing link spent twice or forwarded; impersonating an admin or an enforced-SSO member without the deployment's say.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { sweepImpersonations } from "../../src/impersonation/end";
import {
  decodeJwt,
  expectError,
  mailbox,
  NO_VERIFICATION,
  service,
  signUp,
  testDeps,
  type WireSession,
} from "../helpers";
import { Browser } from "../oauth2/page-browser";
import {
  authorize,
  form,
  location,
  newClient,
  REDIRECT_URI,
  requestIdOf,
  s256,
  VERIFIER,
} from "../oauth2/support";
import { routedD1, userD1 } from "../support/shards";

const ON = { ...NO_VERIFICATION, AUTH_IMPERSONATION_ENABLED: "true" };
const svc = service(ON);
const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };
const HASURA = "https://hasura.io/jwt/claims";

interface Started {
  session: WireSession;
  url: string;
  expiresAt: string;
}

const impersonate = (id: string, json: unknown, on = svc) =>
  on.request("POST", `/admin/users/${id}/impersonate`, { json, headers: ADMIN });

async function started(id: string, json: Record<string, unknown> = {}, on = svc): Promise<Started> {
  const answer = await impersonate(
    id,
    { reason: "ticket #4521: checkout fails", actor: "ana@support", ...json },
    on,
  );
  expect(answer.status, await answer.clone().text()).toBe(200);
  return (await answer.json()) as Started;
}

async function auditOf(userId: string, type: string) {
  const answer = await svc.request("GET", `/admin/audit?userId=${userId}&type=${type}`, { headers: ADMIN });
  return ((await answer.json()) as { items: { detail: Record<string, unknown> }[] }).items;
}

describe("impersonation: start", () => {
  it("is off unless AUTH_IMPERSONATION_ENABLED (409), and needs the admin secret (401)", async () => {
    const off = service(NO_VERIFICATION);
    const { user } = await signUp(off);
    await expectError(await impersonate(user.id, { reason: "r", actor: "a" }, off), 409, "disabled-endpoint");
    const answer = await svc.request("POST", `/admin/users/${user.id}/impersonate`, {
      json: { reason: "r", actor: "a" },
    });
    await expectError(answer, 401, "unauthorized");
  });

  it("tokens say who acts (act, amr imp, Hasura's x-hasura-impersonator) and end with it; refreshes keep it; audited", async () => {
    const { user } = await signUp(svc);
    const before = Date.now();
    const { session, expiresAt } = await started(user.id, { expiresIn: 600 });
    const end = Date.parse(expiresAt);
    expect(end - before).toBeGreaterThanOrEqual(600_000 - 1000);
    expect(end - before).toBeLessThanOrEqual(600_000 + 5000);
    const { payload } = decodeJwt(session.accessToken);
    expect(payload).toMatchObject({ sub: user.id, act: { sub: "ana@support" }, amr: ["imp"] });
    expect((payload[HASURA] as Record<string, unknown>)["x-hasura-impersonator"]).toBe("ana@support");
    expect(payload.exp as number).toBeLessThanOrEqual(Math.floor(end / 1000));
    expect(session.user.id).toBe(user.id);
    // A refresh keeps who acts.
    const renewed = (await (
      await svc.post("/token", { refreshToken: session.refreshToken })
    ).json()) as WireSession;
    expect(decodeJwt(renewed.accessToken).payload).toMatchObject({
      act: { sub: "ana@support" },
      amr: ["imp"],
    });
    // Reads work as the user: the app sees what the user sees.
    const me = await svc.get("/user", renewed.accessToken);
    expect(me.status).toBe(200);
    const [event] = await auditOf(user.id, "admin.impersonation.start");
    expect(event!.detail).toMatchObject({
      actor: "ana@support",
      reason: "ticket #4521: checkout fails",
      sessionId: session.refreshTokenId,
    });
    // No token outlives it: the lifetime caps the access token's own.
    const short = await started(user.id, { expiresIn: 60 });
    const shortExp = decodeJwt(short.session.accessToken).payload.exp as number;
    expect(shortExp).toBeLessThanOrEqual(Math.floor(Date.parse(short.expiresAt) / 1000));
    expect(short.session.accessTokenExpiresIn).toBeLessThanOrEqual(60);
  });

  it("bad input: no reason, too long a reason or lifetime, no actor (400); nobody (404); disabled (400)", async () => {
    const { user } = await signUp(svc);
    for (const body of [
      { actor: "a" },
      { reason: "   ", actor: "a" },
      { reason: "x".repeat(501), actor: "a" },
      { reason: "r" },
      { reason: "r", actor: "a", expiresIn: 8 * 3600 + 1 },
      { reason: "r", actor: "a", expiresIn: 0 },
      { reason: "r", actor: "a", redirectTo: "https://evil.example.net/" },
    ]) {
      const answer = await impersonate(user.id, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
    }
    await expectError(await impersonate(crypto.randomUUID(), { reason: "r", actor: "a" }), 404, "not-found");
    const disabled = await signUp(svc);
    await svc.request("PATCH", `/admin/users/${disabled.user.id}`, {
      json: { disabled: true },
      headers: ADMIN,
    });
    await expectError(
      await impersonate(disabled.user.id, { reason: "r", actor: "a" }),
      400,
      "invalid-request",
    );
  });

  it("an admin, or a member of an org enforcing SSO, needs AUTH_IMPERSONATION_PRIVILEGED (403 without)", async () => {
    const { user } = await signUp(svc);
    await svc.request("PATCH", `/admin/users/${user.id}`, {
      json: { roles: ["user", "admin"] },
      headers: ADMIN,
    });
    const refused = await expectError(
      await impersonate(user.id, { reason: "r", actor: "a" }),
      403,
      "forbidden",
    );
    expect(refused.message).toMatch(/protected role admin/);
    const privileged = service({ ...ON, AUTH_IMPERSONATION_PRIVILEGED: "true" });
    expect((await impersonate(user.id, { reason: "r", actor: "a" }, privileged)).status).toBe(200);
    const member = await signUp(svc);
    const orgId = crypto.randomUUID();
    await env.DB.prepare(
      "INSERT INTO organizations (id, name, slug, enforce_sso, created_at, updated_at) VALUES (?, 'Acme', ?, 1, 0, 0)",
    )
      .bind(orgId, `acme-${orgId.slice(0, 8)}`)
      .run();
    await env.DB.prepare(
      "INSERT INTO org_members (org_id, user_id, role, source, created_at, updated_at) VALUES (?, ?, 'member', 'admin', 0, 0)",
    )
      .bind(orgId, member.user.id)
      .run();
    const sso = await expectError(
      await impersonate(member.user.id, { reason: "r", actor: "a" }),
      403,
      "forbidden",
    );
    expect(sso.message).toMatch(/enforces SSO/);
  });
});

describe("impersonation: what it may not do", () => {
  it("grants, links and creates nothing through the API (403 forbidden, named); reads and sign-out work", async () => {
    const { user } = await signUp(svc);
    const { session } = await started(user.id);
    const token = session.accessToken;
    const refused: [string, string, unknown][] = [
      ["POST", "/user/password", { newPassword: "another long password" }],
      ["POST", "/user/email/change", { newEmail: "other@example.com" }],
      ["POST", "/pat", { expiresAt: new Date(Date.now() + 86_400_000).toISOString() }],
      ["POST", "/user/mfa", { code: "123456", activeMfaType: "totp" }],
      ["POST", "/user/webauthn/add", {}],
      ["POST", "/orgs", { name: "Mine" }],
      ["POST", "/orgs/invitations/accept", { token: "x" }],
      ["POST", "/user/deanonymize", { signInMethod: "email-password", email: "x@example.com" }],
      ["POST", "/elevate/webauthn", {}],
      ["POST", "/link/idtoken", { provider: "google", idToken: "x" }],
      ["GET", "/mfa/totp/generate", undefined],
      ["DELETE", `/user/sessions/${session.refreshTokenId}`, undefined],
      // Setup links (operators.md §5) neither made nor read: they are an owner's grant to a customer's IT admin.
      ["POST", `/orgs/${crypto.randomUUID()}/setup-links`, { intents: ["sso"] }],
      ["GET", `/orgs/${crypto.randomUUID()}/setup-links`, undefined],
    ];
    for (const [method, path, json] of refused) {
      const answer = await svc.request(method, path, { json, token });
      const body = await expectError(answer, 403, "forbidden");
      expect(body.message, `${method} ${path}`).toMatch(/impersonated session may not/);
    }
    expect((await svc.get("/user", token)).status).toBe(200);
    const out = await svc.post("/signout", { refreshToken: session.refreshToken }, token);
    expect(out.status).toBe(200);
  });
});

describe("impersonation: the landing link", () => {
  it("lands once within its minute as a provider sign-in lands, signing the browser in to the pages; a second use lands nobody", async () => {
    const { user } = await signUp(svc);
    const { url } = await started(user.id);
    const first = await svc.request("GET", url);
    expect(first.status).toBe(302);
    const location = new URL(first.headers.get("location")!);
    const refreshToken = location.searchParams.get("refreshToken")!;
    expect(refreshToken).toMatch(/^[0-9a-f-]{36}$/);
    const cookie = first.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(/oauth2_session=/);
    const renewed = (await (await svc.post("/token", { refreshToken })).json()) as WireSession;
    expect(decodeJwt(renewed.accessToken).payload).toMatchObject({
      sub: user.id,
      act: { sub: "ana@support" },
    });
    const again = await svc.request("GET", url);
    expect(again.status).toBe(302);
    expect(new URL(again.headers.get("location")!).searchParams.get("error")).toBe("invalid-ticket");
    // The account center, signed in by that cookie: the banner names who acts; a post is refused.
    const pageCookie = cookie.split(";")[0]!;
    const page = await svc.request("GET", "/account", { headers: { cookie: pageCookie } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("ana@support is acting as this user");
    const origin = new URL(url).origin;
    const post = await svc.request("POST", "/account/password", {
      body: new URLSearchParams({
        password: "a new long password",
        confirm: "a new long password",
      }).toString(),
      headers: { cookie: pageCookie, origin, "content-type": "application/x-www-form-urlencoded" },
    });
    expect(post.status).toBe(403);
  });
});

describe("impersonation: the end", () => {
  it("DELETE ends it early (no refresh after), audited with reason and actor, the user mailed; 404 none, 400 twice", async () => {
    const { user } = await signUp(svc);
    const { session } = await started(user.id);
    const ended = await svc.request("DELETE", `/admin/impersonations/${session.refreshTokenId}`, {
      headers: ADMIN,
    });
    expect(ended.status).toBe(204);
    await expectError(
      await svc.post("/token", { refreshToken: session.refreshToken }),
      401,
      "invalid-refresh-token",
    );
    const [event] = await auditOf(user.id, "admin.impersonation.end");
    expect(event!.detail).toMatchObject({
      actor: "ana@support",
      reason: "ticket #4521: checkout fails",
      how: "ended",
    });
    const [mail] = await mailbox(svc, user.email);
    expect(mail!.subject).toBe("Someone from support acted as you");
    expect(mail!.text).toContain("ticket #4521: checkout fails");
    const again = await svc.request("DELETE", `/admin/impersonations/${session.refreshTokenId}`, {
      headers: ADMIN,
    });
    await expectError(again, 400, "invalid-request");
    const none = await svc.request("DELETE", `/admin/impersonations/${crypto.randomUUID()}`, {
      headers: ADMIN,
    });
    await expectError(none, 404, "not-found");
  });

  it("past its lifetime: no refresh (401), and the minute's sweep ends it once: audited, mailed in the user's language", async () => {
    const { user } = await signUp(svc, undefined, { locale: "fr" });
    const { session } = await started(user.id, { expiresIn: 60 });
    // Its end moved into the past, as a minute later: the row is what a refresh checks.
    const past = Date.now() - 1000;
    await routedD1(session.refreshTokenId)
      .prepare("UPDATE sessions SET ends_at = ? WHERE id = ?")
      .bind(past, session.refreshTokenId)
      .run();
    await env.DB.prepare("UPDATE impersonations SET ends_at = ? WHERE id = ?")
      .bind(past, session.refreshTokenId)
      .run();
    const refused = await svc.post("/token", { refreshToken: session.refreshToken });
    const body = await expectError(refused, 401, "invalid-refresh-token");
    expect(body.message).toMatch(/impersonation has ended/);
    const sent: { to: string; subject: string }[] = [];
    const audited: unknown[] = [];
    const deps = {
      ...testDeps(svc.env, { now: Date.now() }),
      mailer: { send: async (m: { to: string; subject: string }) => void sent.push(m) },
      audit: Object.assign((event: unknown) => void audited.push(event), {
        signInFailure: () => {},
        actAs: () => {},
        actor: () => ({ kind: "system" as const }),
      }),
    };
    await sweepImpersonations(deps, Date.now());
    await sweepImpersonations(deps, Date.now());
    const mine = sent.filter((m) => m.to === user.email);
    expect(mine).toHaveLength(1);
    expect(mine[0]!.subject).toBe("Quelqu’un du support a agi en votre nom");
    expect(audited).toContainEqual(
      expect.objectContaining({
        type: "admin.impersonation.end",
        userId: user.id,
        detail: expect.objectContaining({ how: "expired", actor: "ana@support" }),
      }),
    );
    const row = await userD1(user.id)
      .prepare("SELECT id FROM sessions WHERE id = ?")
      .bind(session.refreshTokenId)
      .first();
    expect(row).toBeNull();
  });
});

describe("impersonation in the console", () => {
  const BASE = "/admin/console";
  const origin = "http://localhost:8787";
  const postForm = (path: string, values: Record<string, string>, headers: Record<string, string>) =>
    svc.request("POST", `${BASE}${path}`, {
      body: new URLSearchParams(values).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", origin, ...headers },
    });

  it("the user page's form starts one (reason required, CSRF checked) and hands over the link; End ends it", async () => {
    const login = await postForm("/login", { secret: String(env.AUTH_ADMIN_SECRET) }, {});
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    const { user } = await signUp(svc);
    const page = await (await svc.request("GET", `${BASE}/users/${user.id}`, { headers: { cookie } })).text();
    expect(page).toContain('<h2 id="impersonation">Impersonation</h2>');
    const csrf = /name="csrf" value="([^"]+)"/.exec(page)![1]!;
    const ask = { actor: "dee@support", reason: "sees a blank page", expiresIn: "900" };
    // Threat: another site (or a page without the session's token) making the console impersonate someone.
    expect(
      (await postForm(`/users/${user.id}/impersonate`, { ...ask, csrf: "forged" }, { cookie })).status,
    ).toBe(403);
    const noReason = await postForm(
      `/users/${user.id}/impersonate`,
      { ...ask, reason: " ", csrf },
      { cookie },
    );
    expect(noReason.status).toBe(400);
    expect(await noReason.text()).toContain("a reason is required");
    const started = await postForm(`/users/${user.id}/impersonate`, { ...ask, csrf }, { cookie });
    expect(started.status).toBe(200);
    const link = /href="([^"]+\/impersonation\/land\?ticket=[^"]+)"/.exec(await started.text())![1]!;
    const landed = await svc.request("GET", link.replaceAll("&amp;", "&"));
    const refreshToken = new URL(landed.headers.get("location")!).searchParams.get("refreshToken")!;
    const renewed = (await (await svc.post("/token", { refreshToken })).json()) as WireSession;
    expect(decodeJwt(renewed.accessToken).payload).toMatchObject({ act: { sub: "dee@support" } });
    const listed = await (
      await svc.request("GET", `${BASE}/users/${user.id}`, { headers: { cookie } })
    ).text();
    expect(listed).toContain("sees a blank page");
    const end = /action="[^"]*(\/impersonations\/[^"/]+\/end)"/.exec(listed)![1]!;
    const ended = await postForm(end, { csrf }, { cookie });
    expect(ended.status).toBe(303);
    await expectError(
      await svc.post("/token", { refreshToken: renewed.refreshToken }),
      401,
      "invalid-refresh-token",
    );
    const [event] = await auditOf(user.id, "admin.impersonation.end");
    expect(event!.detail).toMatchObject({ actor: "dee@support", endedBy: "console", how: "ended" });
  });
});

describe("impersonation and the OAuth2 server", () => {
  // Threat: the impersonation authorizing a third-party app in the user's name, silently (a client the user consented
  // to before), through the page, or through the external login UI's JSON step.
  it("authorizes no client, even one consented to before: no code through prompt=none, the page, or /oauth2/login", async () => {
    const op = service({ ...ON, AUTH_OAUTH2_PROVIDER_ENABLED: "true" });
    const client = await newClient(op);
    const { user } = await signUp(op);
    await userD1(user.id)
      .prepare("INSERT INTO oauth2_consents (user_id, client_id, scopes, granted_at) VALUES (?, ?, ?, ?)")
      .bind(user.id, client.clientId, JSON.stringify(["openid", "profile", "email"]), Date.now())
      .run();
    const { session, url } = await started(user.id, {}, op);
    const browser = new Browser(op);
    await browser.get(url);
    expect(browser.signedIn).toBe(true);
    const challenge = await s256(VERIFIER);
    const authorizeUrl = (prompt?: string) =>
      `/oauth2/authorize?${form({
        client_id: client.clientId,
        redirect_uri: REDIRECT_URI,
        response_type: "code",
        scope: "openid profile email",
        state: "s",
        nonce: "n",
        code_challenge: challenge,
        code_challenge_method: "S256",
        ...(prompt ? { prompt } : {}),
      })}`;
    // prompt=none: back to the client with OAuth2's access_denied, never a code.
    const silent = await browser.get(authorizeUrl("none"));
    expect(silent.status).toBe(302);
    const back = new URL(silent.headers.get("location") ?? "");
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT_URI);
    expect(back.searchParams.get("error")).toBe("access_denied");
    expect(back.searchParams.get("state")).toBe("s");
    expect(back.searchParams.has("code")).toBe(false);
    const toPage = await browser.get(authorizeUrl());
    const pageAnswer = await browser.get(location(toPage).toString());
    expect(pageAnswer.headers.get("location") ?? "").not.toMatch(/[?&]code=/);
    expect(pageAnswer.status).toBe(403);
    const shown = await pageAnswer.text();
    expect(shown).toContain("authorizing a client");
    // The banner names who acts on the hosted page too.
    expect(shown).toContain("ana@support is acting as this user");
    const requestId = await requestIdOf(
      await authorize(op, client, { code_challenge: challenge, code_challenge_method: "S256" }),
    );
    const json = await op.post("/oauth2/login", { requestId }, session.accessToken);
    await expectError(json, 403, "forbidden");
  });
});
