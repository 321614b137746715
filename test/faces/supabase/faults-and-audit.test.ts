import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { PASSWORD, uniqueAddress, uniqueEmail } from "../../helpers";
import { failingD1, failingNamespace, failingShards } from "../../support/faults";
import { FACE, PUBLISHABLE_KEY, SECRET_KEY, supabaseClient, supabaseService } from "./support";

/**
 * The face under faults and in the audit (contract supabase.md §1: "the audit sees this face's users exactly as the
 * Nhost face's"). Threats: a database fault answered with a 500 (or a half-made session) through the second API;
 * credential stuffing through the face that the operator's audit log never shows.
 */

const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };

describe("the Supabase face under D1 faults", () => {
  it("each statement of a password sign-in failing: GoTrue's 503 with Retry-After, or a whole session", async () => {
    const email = uniqueEmail("sb-fault");
    await supabaseClient(supabaseService()).auth.signUp({ email, password: PASSWORD });
    const signIn = (svc: ReturnType<typeof supabaseService>) =>
      svc.request("POST", `${FACE}/auth/v1/token?grant_type=password`, {
        headers: { apikey: PUBLISHABLE_KEY, "content-type": "application/json" },
        body: JSON.stringify({ email, password: PASSWORD }),
      });
    const watched = failingShards(env, { after: Number.POSITIVE_INFINITY });
    expect((await signIn(supabaseService(watched.bindings))).status).toBe(200);
    expect(watched.fault.seen.length).toBeGreaterThan(1);
    for (let step = 0; step < watched.fault.seen.length; step++) {
      const context = `step ${step}: ${watched.fault.seen[step]!.slice(0, 80)}`;
      const answer = await signIn(supabaseService(failingShards(env, { after: step, times: 1 }).bindings));
      if (answer.status === 200) continue;
      const text = await answer.text();
      expect(answer.status, `${context}: ${text}`).toBe(503);
      expect(Number(answer.headers.get("retry-after")), context).toBeGreaterThan(0);
      expect(JSON.parse(text), context).toMatchObject({ error_code: "unexpected_failure" });
      expect(text, context).not.toMatch(/D1_ERROR|\bat \S+:\d+/);
    }
  });
});

describe("the Supabase face's token at a cold isolate whose signing keys cannot be read", () => {
  // Threat: a database blip read as `bad_jwt`, which supabase-js answers by signing its user out.
  it("getUser: GoTrue's 503, not 403 bad_jwt; the user once D1 is back", async () => {
    const client = supabaseClient(supabaseService());
    const email = uniqueEmail("sb-keys");
    await client.auth.signUp({ email, password: PASSWORD });
    const { access_token } = (await client.auth.signInWithPassword({ email, password: PASSWORD })).data
      .session!;
    const { binding, fault } = failingD1(env.DB, { match: /signing_keys/ });
    const svc = supabaseService({ DB: binding });
    const getUser = () =>
      svc.request("GET", `${FACE}/auth/v1/user`, {
        headers: { apikey: PUBLISHABLE_KEY, authorization: `Bearer ${access_token}` },
      });
    const failed = await getUser();
    const text = await failed.text();
    expect(failed.status, text).toBe(503);
    expect(JSON.parse(text)).toMatchObject({ error_code: "unexpected_failure" });
    expect(fault.failures).toBeGreaterThan(0);
    fault.heal();
    expect((await getUser()).status).toBe(200);
  });
});

describe("the Supabase face's refresh with the session families' object failing", () => {
  // Threat: a single-use refresh token spent by a rotation whose answer was lost, leaving the app signed out.
  it("reset after the rotation: 503; the retry in the grace window gets the same successor", async () => {
    const email = uniqueEmail("sb-do-fault");
    const supabase = supabaseClient(supabaseService());
    await supabase.auth.signUp({ email, password: PASSWORD });
    const { refresh_token } = (await supabase.auth.signInWithPassword({ email, password: PASSWORD })).data
      .session!;
    const { binding, fault } = failingNamespace(env.SESSION_FAMILIES, {
      match: /^rotate$/,
      when: "after",
      times: 1,
    });
    const broken = supabaseService({ SESSION_FAMILIES: binding });
    const refresh = () =>
      broken.request("POST", `${FACE}/auth/v1/token?grant_type=refresh_token`, {
        headers: { apikey: PUBLISHABLE_KEY, "content-type": "application/json" },
        body: JSON.stringify({ refresh_token }),
      });
    const failed = await refresh();
    expect(failed.status).toBe(503);
    expect(Number(failed.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(fault.failures).toBe(1);
    const [first, second] = [await refresh(), await refresh()];
    expect([first.status, second.status]).toEqual([200, 200]);
    const tokens = [
      (await first.json()) as { refresh_token: string },
      (await second.json()) as { refresh_token: string },
    ];
    expect(tokens[0]!.refresh_token).toBe(tokens[1]!.refresh_token);
  });
});

describe("the Supabase face in the audit log", () => {
  it("a wrong password through auth-js is a signin.failure under its method, with the address it tried", async () => {
    const svc = supabaseService();
    const email = uniqueEmail("sb-audit");
    // An address of its own: past ten failures an address's failures in a window are counted, not listed one by one
    // (src/audit/sign-in-failures.ts), and other files' failures from the pool's default address come first.
    const supabase = supabaseClient(svc, undefined, { "cf-connecting-ip": uniqueAddress() });
    await supabase.auth.signUp({ email, password: PASSWORD });
    await supabase.auth.signInWithPassword({ email, password: "not the right one at all" });
    const listed = await svc.request("GET", "/admin/audit?type=signin.failure&limit=500", { headers: ADMIN });
    const failures = ((await listed.json()) as { items: { detail: Record<string, unknown> }[] }).items.filter(
      (event) => event.detail.email === email,
    );
    expect(failures).toHaveLength(1);
    expect(failures[0]!.detail).toMatchObject({ method: "email-password", error: "invalid-email-password" });
  });
});

describe("the Supabase face's limits, the Nhost API's (contract §11)", () => {
  // Threat: the second API as an unmetered door for password guessing, admin-secret guessing or memory bombs.
  it("cuts a password-grant burst per account with 429 over_request_rate_limit and Retry-After", async () => {
    const svc = supabaseService({ AUTH_RATE_LIMIT_ENABLE: "true", AUTH_RATE_LIMIT_BRUTE_FORCE_BURST: "2" });
    const email = uniqueEmail("sb-burst");
    const statuses: number[] = [];
    let last: Response | undefined;
    for (const ip of [uniqueAddress(), uniqueAddress(), uniqueAddress()]) {
      last = await svc.request("POST", `${FACE}/auth/v1/token?grant_type=password`, {
        headers: { apikey: PUBLISHABLE_KEY, "content-type": "application/json", "cf-connecting-ip": ip },
        body: JSON.stringify({ email, password: "a wrong guess here" }),
      });
      statuses.push(last.status);
    }
    expect(statuses).toEqual([400, 400, 429]);
    expect(last!.headers.get("x-sb-error-code")).toBe("over_request_rate_limit");
    expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("counts wrong keys as guesses of a secret: after the bucket's burst, even the right key waits", async () => {
    const svc = supabaseService({ AUTH_RATE_LIMIT_ENABLE: "true" });
    const ip = uniqueAddress();
    const guess = (apikey: string) =>
      svc.request("GET", `${FACE}/auth/v1/settings`, { headers: { apikey, "cf-connecting-ip": ip } });
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await guess(`sb_secret_guess${i}0123456789abcdef`)).status);
    expect(statuses.slice(0, 3)).toEqual([401, 401, 401]);
    expect(statuses.at(-1)).toBe(429);
    expect((await guess(SECRET_KEY)).status).toBe(429);
  });

  it("refuses a body over 64 KB with 413 before reading it", async () => {
    const svc = supabaseService();
    const answer = await svc.request("POST", `${FACE}/auth/v1/signup`, {
      headers: { apikey: PUBLISHABLE_KEY, "content-type": "application/json" },
      body: JSON.stringify({
        email: uniqueEmail("big"),
        password: PASSWORD,
        data: { blob: "x".repeat(70_000) },
      }),
    });
    expect(answer.status).toBe(413);
    expect(answer.headers.get("x-sb-error-code")).toBe("request_too_large");
  });
});
