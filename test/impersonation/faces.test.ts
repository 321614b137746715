// Impersonation through the other doors (contract operators.md §1): the service binding (AuthAdmin starts one with
// the calling Worker recorded; AuthService.authenticate says who acts), the Supabase face (its tokens carry `act` and
// `amr` imp; its writes are refused), the forwarded data calls (the upstream's token says who acts), and the user's
// session list. Threats: a door that drops `act` (support's actions then look like the user's own), or one that
// lets an impersonation change the account.
import { env } from "cloudflare:test";
import { decodeJwt } from "jose";
import { describe, expect, inject, it } from "vitest";
import { getConfig } from "../../src/runtime/config";
import { FACE, PUBLISHABLE_KEY, supabaseService } from "../faces/supabase/support";
import type { Seen } from "../fakes/supabase-upstream";
import { UPSTREAM_ANON_KEY, UPSTREAM_JWT_SECRET } from "../fakes/supabase-upstream";
import { expectError, signUp, type WireSession } from "../helpers";
import { authenticateThrough, rpc } from "../platform/support";

const svc = supabaseService({
  AUTH_IMPERSONATION_ENABLED: "true",
  OUTBOUND: undefined,
  AUTH_OUTBOUND_ALLOW_LOCAL: "true",
  AUTH_SUPABASE_UPSTREAM_URL: inject("upstreamUrl"),
  AUTH_SUPABASE_UPSTREAM_JWT_SECRET: UPSTREAM_JWT_SECRET,
  AUTH_SUPABASE_UPSTREAM_ANON_KEY: UPSTREAM_ANON_KEY,
});
const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };

async function impersonated(userId: string): Promise<WireSession> {
  const answer = await svc.request("POST", `/admin/users/${userId}/impersonate`, {
    json: { reason: "billing question", actor: "bo@support" },
    headers: ADMIN,
  });
  expect(answer.status).toBe(200);
  return ((await answer.json()) as { session: WireSession }).session;
}

/**
 * The binding's calls run with the Worker's own parsed configuration (as test/platform/auth-admin.test.ts does): the
 * two switches on for `work`, and put back whatever happens.
 */
async function withBinding(work: () => Promise<void>): Promise<void> {
  const config = getConfig(env);
  config.platform.adminBindingEnabled = true;
  config.impersonation.enabled = true;
  try {
    await work();
  } finally {
    config.platform.adminBindingEnabled = false;
    config.impersonation.enabled = false;
  }
}

describe("impersonation through the service binding", () => {
  it("AuthAdmin.impersonateUser starts one (the caller audited); AuthService.authenticate names who acts; endImpersonation ends it", async () => {
    const { user } = await signUp(svc);
    await withBinding(async () => {
      const started = await rpc("ADMIN", "impersonateUser", user.id, {
        reason: "refund",
        actor: "cy@support",
      });
      expect(started.url).toMatch(/\/impersonation\/land\?ticket=/);
      const token = started.session.accessToken as string;
      expect(decodeJwt(token)).toMatchObject({ act: { sub: "cy@support" }, amr: ["imp"] });
      const who = await authenticateThrough({ authorization: `Bearer ${token}` });
      expect(who).toMatchObject({ user: { id: user.id }, actor: "cy@support" });
      const mine = await authenticateThrough({ authorization: `Bearer ${(await signUp(svc)).accessToken}` });
      expect(mine.actor).toBeUndefined();
      const bad = await rpc("ADMIN", "impersonateUser", user.id, { actor: "cy@support" });
      expect(bad).toMatchObject({ ok: false, error: { code: "invalid-request" } });
      const page = await rpc("ADMIN", "listAudit", { userId: user.id, type: "admin.impersonation.start" });
      expect(page.items[0].detail).toMatchObject({
        caller: "billing-worker",
        actor: "cy@support",
        reason: "refund",
      });
      const sessionId = started.session.refreshTokenId as string;
      expect(await rpc("ADMIN", "endImpersonation", sessionId)).toEqual({ ended: sessionId });
      const again = await rpc("ADMIN", "endImpersonation", sessionId);
      expect(again).toMatchObject({ ok: false, error: { code: "invalid-request" } });
    });
  });
});

describe("impersonation on the Supabase face and the data calls", () => {
  it("a refresh on the face keeps act and amr imp; its writes are 403 forbidden, its reads answer", async () => {
    const { user } = await signUp(svc);
    const session = await impersonated(user.id);
    const refreshed = await svc.request("POST", `${FACE}/auth/v1/token?grant_type=refresh_token`, {
      headers: { apikey: PUBLISHABLE_KEY, "content-type": "application/json" },
      body: JSON.stringify({ refresh_token: session.refreshToken }),
    });
    expect(refreshed.status).toBe(200);
    const { access_token } = (await refreshed.json()) as { access_token: string };
    const claims = decodeJwt(access_token);
    expect(claims).toMatchObject({ sub: user.id, act: { sub: "bo@support" }, amr: [{ method: "imp" }] });
    expect((claims["https://hasura.io/jwt/claims"] as Record<string, unknown>)["x-hasura-impersonator"]).toBe(
      "bo@support",
    );
    const headers = { apikey: PUBLISHABLE_KEY, authorization: `Bearer ${access_token}` };
    expect((await svc.request("GET", `${FACE}/auth/v1/user`, { headers })).status).toBe(200);
    for (const [method, path, body] of [
      ["PUT", "/auth/v1/user", { password: "another long password" }],
      ["POST", "/auth/v1/factors", { factor_type: "totp" }],
      ["GET", "/auth/v1/reauthenticate", undefined],
    ] as const) {
      const answer = await svc.request(method, `${FACE}${path}`, {
        headers: { ...headers, "content-type": "application/json" },
        body: body ? JSON.stringify(body) : undefined,
      });
      // GoTrue's reauthenticate is a GET that mails a code: refused as a write would be.
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect(((await answer.json()) as { error_code: string }).error_code).toBe("forbidden");
    }
  });

  it("a forwarded data call's upstream token carries act and amr imp, from either face's token", async () => {
    const { user } = await signUp(svc);
    const session = await impersonated(user.id);
    const response = await svc.request("POST", `${FACE}/graphql/v1`, {
      headers: { apikey: PUBLISHABLE_KEY, authorization: `Bearer ${session.accessToken}` },
      body: "{}",
    });
    expect(response.status).toBe(200);
    const seen = (await response.json()) as Seen;
    expect(seen.claims).toMatchObject({ sub: user.id, act: { sub: "bo@support" }, amr: [{ method: "imp" }] });
    expect(seen.claims.exp as number).toBeLessThanOrEqual(decodeJwt(session.accessToken).exp!);
  });

  it("the user's session list shows the session as impersonated, by whom", async () => {
    const own = await signUp(svc);
    const session = await impersonated(own.user.id);
    const { items: list } = (await (await svc.get("/user/sessions", own.accessToken)).json()) as {
      items: { id: string; method: string; impersonatedBy?: string | null }[];
    };
    expect(list.find((row) => row.id === session.refreshTokenId)).toMatchObject({
      method: "impersonation",
      impersonatedBy: "bo@support",
    });
    expect(list.find((row) => row.id === own.refreshTokenId)?.impersonatedBy ?? null).toBeNull();
    await expectError(
      await svc.post("/user/password", { newPassword: "x".repeat(12) }, session.accessToken),
      403,
      "forbidden",
    );
  });
});
