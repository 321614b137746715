import { SignJWT } from "jose";
import { describe, expect, inject, it } from "vitest";
import { type Seen, UPSTREAM_ANON_KEY, UPSTREAM_JWT_SECRET } from "../../fakes/supabase-upstream";
import { PASSWORD } from "../../helpers";
import { admin, importUsers, nhostBcrypt, nhostUser } from "../../move-in/support";
import { FACE, supabaseClient, supabaseService } from "./support";

/**
 * The old Supabase project's `anon` and `service_role` keys after a move (contract supabase.md §1, §5): an app built
 * with them keeps working from the cut-over until its ceiling, so the app can be redeployed with the new keys. The
 * threats: the old JWT secret was widely held, so a key minted with it (any `service_role` JWT) must confer nothing —
 * only the exact recorded strings do; the old keys must stop at the ceiling; and the old anon key must never be more
 * than the publishable key (no admin).
 *
 * The tests run in order: the cut-over is recorded partway.
 */

const svc = supabaseService();
const OLD_SECRET = new TextEncoder().encode("the-old-supabase-projects-jwt-secret-40chars");
/** Keys as Supabase made them: HS256 JWTs with `iss: "supabase"`, the role, and a ten-year `exp`. */
const legacyKey = (role: string) =>
  new SignJWT({ iss: "supabase", ref: "oldprojectref", role })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuedAt(1_700_000_000)
    .setExpirationTime(2_015_000_000)
    .sign(OLD_SECRET);
const ANON = await legacyKey("anon");
const SERVICE = await legacyKey("service_role");

const recordKeys = (json: unknown) =>
  svc.request("POST", "/admin/import/supabase/api-keys", { json, headers: admin() });
const recordCutOver = (at: number) =>
  svc.request("POST", "/admin/import/cut-over", {
    json: { system: "supabase", at: new Date(at).toISOString() },
    headers: admin(),
  });
const settingsWith = (key: string) =>
  svc.request("GET", `${FACE}/auth/v1/settings`, { headers: { apikey: key } });

describe("the old project's API keys", () => {
  it("are recorded as hashes only when each is the key its role claim says", async () => {
    expect((await recordKeys({ anonKey: SERVICE })).status).toBe(400);
    expect((await recordKeys({ serviceRoleKey: ANON })).status).toBe(400);
    expect((await recordKeys({ anonKey: ANON })).status).toBe(200);
    const both = await recordKeys({ serviceRoleKey: SERVICE });
    expect(await both.json()).toMatchObject({ anonKey: true, serviceRoleKey: true });
    // The admin secret guards it.
    expect(
      (await svc.request("POST", "/admin/import/supabase/api-keys", { json: { anonKey: ANON } })).status,
    ).toBe(401);
  });

  // Before the cut-over the old system's credentials are accepted nowhere (supabase.md §6).
  it("before a supabase cut-over: the face's 401", async () => {
    const answer = await settingsWith(ANON);
    expect(answer.status).toBe(401);
    expect(await answer.json()).toMatchObject({ error_code: "invalid_api_key" });
  });

  it("after the cut-over: the anon key signs in through supabase-js, and is no admin", async () => {
    expect((await recordCutOver(Date.now())).status).toBe(200);
    const { bundle, email } = await nhostUser({ refreshTokens: [] }, await nhostBcrypt(PASSWORD));
    expect((await importUsers(svc, [bundle])).results[0]!.outcome).toBe("imported");
    const app = supabaseClient(svc, ANON);
    const { data, error } = await app.auth.signInWithPassword({ email, password: PASSWORD });
    expect(error).toBeNull();
    expect(data.user?.email).toBe(email);
    expect((await supabaseClient(svc, ANON).auth.admin.listUsers()).error).toMatchObject({ status: 403 });
  });

  it("the service_role key reaches auth.admin as the secret key would; a user's token beside it does not", async () => {
    const server = supabaseClient(svc, SERVICE);
    const listed = await server.auth.admin.listUsers();
    expect(listed.error).toBeNull();
    expect(listed.data.users.length).toBeGreaterThan(0);
    // Sent from a browser, as a secret key is refused.
    const browser = await svc.request("GET", `${FACE}/auth/v1/admin/users`, {
      headers: { apikey: SERVICE, authorization: `Bearer ${SERVICE}`, origin: "https://app.example.com" },
    });
    expect(browser.status).toBe(401);
    // Another service_role JWT under the same old secret (minted by whoever holds it): nothing.
    const minted = await new SignJWT({ iss: "supabase", ref: "oldprojectref", role: "service_role" })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setIssuedAt(1_700_000_001)
      .setExpirationTime(2_015_000_000)
      .sign(OLD_SECRET);
    expect((await supabaseClient(svc, minted).auth.admin.listUsers()).error).toMatchObject({ status: 401 });
  });

  // supabase-js sends the key as the bearer too: on the data calls it is the key (anon or service_role upstream), not a
  // user token that fails.
  it("data calls with the old keys go upstream as anon and as service_role", async () => {
    const forwarding = supabaseService({
      OUTBOUND: undefined,
      AUTH_OUTBOUND_ALLOW_LOCAL: "true",
      AUTH_SUPABASE_UPSTREAM_URL: inject("upstreamUrl"),
      AUTH_SUPABASE_UPSTREAM_JWT_SECRET: UPSTREAM_JWT_SECRET,
      AUTH_SUPABASE_UPSTREAM_ANON_KEY: UPSTREAM_ANON_KEY,
    });
    for (const [key, role] of [
      [ANON, "anon"],
      [SERVICE, "service_role"],
    ] as const) {
      const { data, error } = await supabaseClient(forwarding, key).from("todos").select("id");
      expect(error).toBeNull();
      expect((data as unknown as Seen[])[0]!.claims.role).toBe(role);
    }
  });

  // The ceiling: a cut-over two hours ago plus the one-hour cap is past; the app must have its new keys by then.
  it("after the ceiling: both old keys get the face's 401", async () => {
    expect((await recordCutOver(Date.now() - 2 * 3_600_000)).status).toBe(200);
    for (const key of [ANON, SERVICE]) {
      const answer = await settingsWith(key);
      expect(answer.status).toBe(401);
      expect(await answer.json()).toMatchObject({ error_code: "invalid_api_key" });
    }
  });
});
