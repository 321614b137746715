import { env } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { getConfig } from "../../../src/runtime/config";
import { UPSTREAM_ANON_KEY, UPSTREAM_JWT_SECRET } from "../../fakes/supabase-upstream";
import { uniqueEmail } from "../../helpers";
import { failingD1 } from "../../support/faults";
import { withShortTimeouts } from "../../support/timeouts";
import { FACE, PUBLISHABLE_KEY, supabaseClient, supabaseService } from "./support";

/**
 * The upstream of the forwarded data calls failing (contract supabase.md §4): refusing the connection, never
 * answering, dropping it. The caller gets 503, 504 or 502 in PostgREST's shape within a bounded time, never a hang
 * and never a 500; and the settings that would send tokens where they must not go stop the service at start-up.
 */

const UPSTREAM = inject("upstreamUrl");

const FIRST_BYTE_TIMEOUT_MS = 60_000;

/** The face forwarding to `url`, on loopback. */
const forwardingTo = (url: string) =>
  supabaseService({
    OUTBOUND: undefined,
    AUTH_OUTBOUND_ALLOW_LOCAL: "true",
    AUTH_SUPABASE_UPSTREAM_URL: url,
    AUTH_SUPABASE_UPSTREAM_JWT_SECRET: UPSTREAM_JWT_SECRET,
    AUTH_SUPABASE_UPSTREAM_ANON_KEY: UPSTREAM_ANON_KEY,
  });

const gatewayShape = { code: expect.any(String), details: null, hint: null, message: expect.any(String) };

describe("the upstream failing", () => {
  it("a refused connection: 502 in PostgREST's shape, which from().select() reads as its error", async () => {
    const supabase = supabaseClient(forwardingTo(inject("upstreamRefusedUrl")));
    const { data, error, status } = await supabase.from("todos").select();
    expect(data).toBeNull();
    expect(status).toBe(502);
    expect(error).toMatchObject({ code: "bad_gateway", details: null, hint: null });
  });

  it("Cloudflare's pages for a project that is down or slow: 503 and 504 in PostgREST's shape", async () => {
    // rpc is a POST, which postgrest-js does not retry (it retries a GET on 503, with a backoff of seconds).
    const down = await supabaseClient(forwardingTo(`${UPSTREAM}/status/521`)).rpc("f");
    expect(down.status).toBe(503);
    expect(down.error).toMatchObject({ code: "upstream_unavailable", details: null, hint: null });
    const slow = await supabaseClient(forwardingTo(`${UPSTREAM}/status/524`))
      .from("todos")
      .select();
    expect(slow.status).toBe(504);
    expect(slow.error).toMatchObject({ code: "upstream_timeout" });
    // The upstream's own 503 (PostgREST's, its database down) is its answer, passed as it is.
    const own = await forwardingTo(`${UPSTREAM}/status/503`).request("GET", `${FACE}/rest/v1/todos`, {
      headers: { apikey: PUBLISHABLE_KEY },
    });
    expect(own.status).toBe(503);
    expect(await own.text()).toContain("<!DOCTYPE html>");
  });

  it("an upstream that never answers: 504 once the time to first byte is out (60 s, shortened here)", async () => {
    const svc = forwardingTo(`${UPSTREAM}/hang`);
    let response: Response | undefined;
    const requested = await withShortTimeouts(FIRST_BYTE_TIMEOUT_MS, async () => {
      response = await svc.request("GET", `${FACE}/rest/v1/todos`, { headers: { apikey: PUBLISHABLE_KEY } });
    });
    expect(requested).toContain(FIRST_BYTE_TIMEOUT_MS);
    expect(response!.status).toBe(504);
    expect(await response!.json()).toEqual({ ...gatewayShape, code: "upstream_timeout" });
  });

  it("a connection dropped without an answer: 502, and functions.invoke reads it as an HTTP error", async () => {
    const svc = forwardingTo(`${UPSTREAM}/drop`);
    const response = await svc.request("POST", `${FACE}/rest/v1/rpc/f`, {
      headers: { apikey: PUBLISHABLE_KEY, "content-type": "application/json" },
      body: "{}",
    });
    expect(response.status).toBe(502);
    expect(await response.json()).toEqual({ ...gatewayShape, code: "bad_gateway" });
    const invoked = await supabaseClient(svc).functions.invoke("hello");
    expect(invoked.error?.name).toBe("FunctionsHttpError");
    expect((invoked.error as { context: Response }).context.status).toBe(502);
  });
});

describe("the settings", () => {
  const base = { ...env, AUTH_SUPABASE_API_ENABLED: "true", AUTH_SUPABASE_PUBLISHABLE_KEYS: PUBLISHABLE_KEY };

  it("the upstream with its secret and anon key; none: nothing forwarded", async () => {
    const config = getConfig({
      ...base,
      AUTH_SUPABASE_UPSTREAM_URL: "https://abcd.supabase.co/",
      AUTH_SUPABASE_UPSTREAM_JWT_SECRET: UPSTREAM_JWT_SECRET,
      AUTH_SUPABASE_UPSTREAM_ANON_KEY: UPSTREAM_ANON_KEY,
    });
    expect(config.supabase.upstream).toEqual({
      url: "https://abcd.supabase.co",
      jwtSecret: UPSTREAM_JWT_SECRET,
      anonKey: UPSTREAM_ANON_KEY,
    });
    expect(getConfig(base).supabase.upstream).toBeNull();
    const off = supabaseService();
    const response = await off.request("GET", `${FACE}/rest/v1/todos`, {
      headers: { apikey: PUBLISHABLE_KEY },
    });
    expect(response.status).toBe(404);
  });

  it.each([
    // Threat: tokens signed with nothing, or with a key anyone could guess.
    [{ AUTH_SUPABASE_UPSTREAM_URL: "https://abcd.supabase.co" }, /needs AUTH_SUPABASE_UPSTREAM_JWT_SECRET/],
    [
      { AUTH_SUPABASE_UPSTREAM_URL: "https://abcd.supabase.co", AUTH_SUPABASE_UPSTREAM_JWT_SECRET: "short" },
      /at least 32 characters/,
    ],
    [{ AUTH_SUPABASE_UPSTREAM_JWT_SECRET: UPSTREAM_JWT_SECRET }, /need AUTH_SUPABASE_UPSTREAM_URL/],
    // Threat: users' signed tokens sent in clear, or to the service itself, or inside its network.
    [
      {
        AUTH_SUPABASE_UPSTREAM_URL: "http://abcd.supabase.co",
        AUTH_SUPABASE_UPSTREAM_JWT_SECRET: UPSTREAM_JWT_SECRET,
      },
      /AUTH_SUPABASE_UPSTREAM_URL: not https/,
    ],
    [
      {
        AUTH_SUPABASE_UPSTREAM_URL: "https://10.0.0.7",
        AUTH_SUPABASE_UPSTREAM_JWT_SECRET: UPSTREAM_JWT_SECRET,
      },
      /an IP address/,
    ],
    [
      {
        AUTH_OUTBOUND_ALLOW_LOCAL: "true",
        AUTH_SUPABASE_UPSTREAM_URL: "http://localhost:8787",
        AUTH_SUPABASE_UPSTREAM_JWT_SECRET: UPSTREAM_JWT_SECRET,
      },
      /AUTH_SUPABASE_UPSTREAM_URL: a host of this service/,
    ],
  ])("%o is refused at start-up", (settings, message) => {
    expect(() => getConfig({ ...base, ...settings })).toThrow(message);
  });
});

describe("a forwarded call with the face's token at a cold isolate whose signing keys cannot be read", () => {
  // Threat: a database blip answered 401 `no_authorization` ("not a session token of this service"), which an app
  // reads as a dead session, where GoTrue's 503 belongs.
  it("GoTrue's 503, not 401; the call once D1 is back", async () => {
    const upstream = {
      OUTBOUND: undefined,
      AUTH_OUTBOUND_ALLOW_LOCAL: "true",
      AUTH_SUPABASE_UPSTREAM_URL: UPSTREAM,
      AUTH_SUPABASE_UPSTREAM_JWT_SECRET: UPSTREAM_JWT_SECRET,
      AUTH_SUPABASE_UPSTREAM_ANON_KEY: UPSTREAM_ANON_KEY,
    };
    const { data } = await supabaseClient(supabaseService(upstream)).auth.signUp({
      email: uniqueEmail("fwd-keys"),
      password: "correct horse battery",
    });
    const token = data.session!.access_token;
    const { binding, fault } = failingD1(env.DB, { match: /signing_keys/ });
    const cold = supabaseService({ ...upstream, DB: binding });
    const call = () =>
      cold.request("GET", `${FACE}/rest/v1/todos`, {
        headers: { apikey: PUBLISHABLE_KEY, authorization: `Bearer ${token}` },
      });
    const failed = await call();
    const text = await failed.text();
    expect(failed.status, text).toBe(503);
    expect(Number(failed.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(fault.failures).toBeGreaterThan(0);
    fault.heal();
    expect((await call()).status).toBe(200);
  });
});
