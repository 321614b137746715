import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { NO_VERIFICATION, SERVER, service, signUp } from "../helpers";
import { failingShards } from "../support/faults";

const svc = service(NO_VERIFICATION);
const SECRET = String(env.AUTH_ADMIN_SECRET);
const BASE = "/admin/console";
const ORIGIN = new URL(SERVER).origin;

const form = (values: Record<string, string>) => new URLSearchParams(values).toString();
const postForm = (path: string, values: Record<string, string>, headers: Record<string, string> = {}) =>
  svc.request("POST", `${BASE}${path}`, {
    body: form(values),
    headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN, ...headers },
  });

async function signIn(): Promise<string> {
  const response = await postForm("/login", { secret: SECRET });
  expect(response.status).toBe(303);
  const cookie = response.headers.get("set-cookie")!;
  expect(cookie).toMatch(/admin_console=/);
  expect(cookie).toMatch(/HttpOnly/i);
  expect(cookie).toMatch(/Secure/i);
  expect(cookie).toMatch(/SameSite=Strict/i);
  expect(cookie).toMatch(/Path=\/auth\/v1\/admin\/console/);
  expect(cookie).not.toContain(SECRET);
  expect(cookie).not.toMatch(/Max-Age|Expires/i);
  return cookie.split(";")[0]!;
}

const csrfOf = (page: string) => /name="csrf" value="([^"]+)"/.exec(page)![1]!;

describe("the admin console over HTTP", () => {
  it("shows the sign-in form without a session, refuses a wrong secret, and signs in with the right one", async () => {
    const anonymous = await svc.get(BASE);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("content-security-policy")).toMatch(/default-src 'none'/);
    expect(await anonymous.text()).toContain('name="secret"');
    expect((await postForm("/login", { secret: "wrong" })).status).toBe(401);
    // A cross-site login post is refused even with the right secret.
    expect((await postForm("/login", { secret: SECRET }, { origin: "https://evil.example" })).status).toBe(
      401,
    );
    const cookie = await signIn();
    // The console lands on its Overview (issue 34): sign-in goes there, and so does the root.
    const landing = await postForm("/login", { secret: SECRET });
    expect(landing.headers.get("location")).toBe(`/auth/v1${BASE}/overview`);
    const root = await svc.request("GET", BASE, { headers: { cookie } });
    expect(root.status).toBe(200);
    expect(root.headers.get("cache-control")).toBe("no-store");
    const rootPage = await root.text();
    expect(rootPage).toContain("<h1>Overview</h1>");
    expect(rootPage.indexOf(">Overview</a>")).toBeLessThan(rootPage.indexOf(">Users</a>"));
    // The users list lives at /users; the root's old address with filters still finds it.
    const users = await svc.request("GET", `${BASE}/users`, { headers: { cookie } });
    expect(await users.text()).toContain("<h1>Users</h1>");
    const old = await svc.request("GET", `${BASE}?search=ada&status=disabled`, { headers: { cookie } });
    expect(old.status).toBe(303);
    expect(old.headers.get("location")).toBe(`/auth/v1${BASE}/users?search=ada&status=disabled`);
  });

  // Threat: a page on another site makes the operator's browser post an action (CSRF).
  it("runs an action only with the session's CSRF token from the console's own origin", async () => {
    const cookie = await signIn();
    const { user, refreshToken } = await signUp(svc);
    const detail = await (
      await svc.request("GET", `${BASE}/users/${user.id}`, { headers: { cookie } })
    ).text();
    expect(detail).toContain(user.email);
    const csrf = csrfOf(detail);
    expect((await postForm(`/users/${user.id}/disable`, { csrf: "forged" }, { cookie })).status).toBe(403);
    expect(
      (await postForm(`/users/${user.id}/disable`, { csrf }, { cookie, origin: "https://evil.example" }))
        .status,
    ).toBe(403);
    expect((await postForm(`/users/${user.id}/disable`, { csrf })).status).toBe(403);
    const disabled = await postForm(`/users/${user.id}/disable`, { csrf }, { cookie });
    expect(disabled.status).toBe(303);
    expect((await svc.post("/token", { refreshToken })).status).toBe(401);
    const after = await (
      await svc.request("GET", `${BASE}/users/${user.id}?done=disabled`, { headers: { cookie } })
    ).text();
    expect(after).toContain("every session and OAuth2 grant has ended");
    const events = await svc.request("GET", `/admin/audit?userId=${user.id}&type=admin.user.disable`, {
      headers: { "x-hasura-admin-secret": SECRET },
    });
    expect(((await events.json()) as { items: unknown[] }).items).toHaveLength(1);
  });

  it("answers actions on users that cannot exist like the API does (a 404 page), and searches of any allowed length", async () => {
    const cookie = await signIn();
    const csrf = csrfOf(await (await svc.request("GET", BASE, { headers: { cookie } })).text());
    for (const id of ["a%00b", "not-a-uuid", crypto.randomUUID(), "..%2F", "%E2%80%AE"]) {
      for (const path of [
        `/users/${id}/sessions/revoke`,
        `/users/${crypto.randomUUID()}/sessions/${id}/revoke`,
      ]) {
        const answer = await postForm(path, { csrf }, { cookie });
        expect(answer.status, path).toBe(404);
        expect(answer.headers.get("content-type"), path).toMatch(/text\/html/);
        expect(answer.headers.get("location"), path).toBeNull();
      }
    }
    for (const length of [48, 49, 100, 254]) {
      const page = await svc.request("GET", `${BASE}/users?search=${"q".repeat(length)}`, {
        headers: { cookie },
      });
      expect(page.status, `search of ${length}`).toBe(200);
      expect(await page.text()).toContain("No user matches");
    }
  });

  // Threat: a console cookie copied from an operator's browser stays good for eight hours whatever the operator does.
  it("ends sessions on the server: sign-out, and ending another session from the list, make those cookies useless", async () => {
    const first = await signIn();
    const second = await signIn();
    const list = await (await svc.request("GET", `${BASE}/sessions`, { headers: { cookie: first } })).text();
    expect(list).toContain("this one");
    const csrf = csrfOf(list);
    const ends = [...list.matchAll(/action="[^"]*\/sessions\/([0-9a-f-]{36})\/end"/g)].map((m) => m[1]!);
    expect(ends.length).toBeGreaterThanOrEqual(1);
    // End every session but the first one's: the second cookie no longer opens the console.
    expect((await postForm("/sessions/end-others", { csrf }, { cookie: first })).status).toBe(303);
    expect((await svc.request("GET", BASE, { headers: { cookie: second } })).status).toBe(401);
    expect((await svc.request("GET", BASE, { headers: { cookie: first } })).status).toBe(200);
    // Signing out ends the session on the server: the same cookie, replayed, is refused.
    expect((await postForm("/logout", { csrf }, { cookie: first })).status).toBe(303);
    expect((await svc.request("GET", BASE, { headers: { cookie: first } })).status).toBe(401);
    // And one session can be ended by another.
    const third = await signIn();
    const fourth = await signIn();
    const page = await (await svc.request("GET", `${BASE}/sessions`, { headers: { cookie: third } })).text();
    const fourthId = fourth.split("=")[1]!.split(".")[0]!;
    expect(
      (await postForm(`/sessions/${fourthId}/end`, { csrf: csrfOf(page) }, { cookie: third })).status,
    ).toBe(303);
    expect((await svc.request("GET", BASE, { headers: { cookie: fourth } })).status).toBe(401);
  });

  it("answers a fault with a page naming the request, not the API's JSON", async () => {
    const cookie = await signIn();
    const failing = {
      prepare: () => ({ bind: () => failing.prepare(), all: () => Promise.reject(new Error("D1 is down")) }),
    };
    const broken = service({
      ...NO_VERIFICATION,
      DB: new Proxy(env.DB, {
        get: (db, name) => (name === "prepare" ? failing.prepare : Reflect.get(db, name)),
      }),
    });
    const answer = await broken.request("GET", BASE, { headers: { cookie } });
    expect(answer.status).toBe(500);
    expect(answer.headers.get("content-type")).toMatch(/text\/html/);
    const requestId = answer.headers.get("x-request-id")!;
    expect(await answer.text()).toContain(`request ${requestId}`);
  });

  it("answers 404 when the deployment has no admin secret, and a console page for an unknown user", async () => {
    const unset = service({ AUTH_ADMIN_SECRET: undefined });
    expect((await unset.get(BASE)).status).toBe(404);
    const cookie = await signIn();
    const missing = await svc.request("GET", `${BASE}/users/${crypto.randomUUID()}`, { headers: { cookie } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-type")).toMatch(/text\/html/);
  });

  // Threat: guessing the admin secret through the sign-in form.
  it("counts sign-in attempts in the BRUTE_FORCE bucket per address", async () => {
    let counted = 0;
    const limited = service({
      AUTH_RATE_LIMIT_ENABLE: "true",
      BRUTE_FORCE_LIMITER: { limit: async () => ({ success: ++counted <= 2 }) },
    });
    const attempt = () =>
      limited.request("POST", `${BASE}/login`, {
        body: form({ secret: "guess" }),
        headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN },
      });
    expect((await attempt()).status).toBe(401);
    expect((await attempt()).status).toBe(401);
    expect((await attempt()).status).toBe(429);
  });
});

/**
 * A console page answering a fault: its status (`Retry-After` on a 503, none on a 500), the console's own page (its
 * frame, its CSP, never cached), the request id to find the log line, nothing of the fault's internals. Returns the id.
 */
async function expectConsoleFault(answer: Response, status: 500 | 503, words: string): Promise<string> {
  const page = await answer.text();
  expect(answer.status, page.slice(0, 300)).toBe(status);
  if (status === 503) expect(Number(answer.headers.get("retry-after"))).toBeGreaterThan(0);
  else expect(answer.headers.get("retry-after")).toBeNull();
  expect(answer.headers.get("content-type")).toMatch(/^text\/html/);
  expect(answer.headers.get("cache-control")).toBe("no-store");
  expect(answer.headers.get("content-security-policy")).toMatch(/default-src 'none'.*frame-ancestors 'none'/);
  expect(page).toContain("<title>Problem · Admin console</title>");
  const requestId = answer.headers.get("x-request-id")!;
  expect(page).toContain(`<p class="error" role="alert">${words.replace("{id}", requestId)}</p>`);
  expect(page).not.toMatch(/D1_ERROR|SQLITE|Network connection lost|service-unavailable|\bat \S+:\d+/);
  return requestId;
}

/**
 * What the error lines of a request logged (`what`): a fault's, as the API's error handler writes it (src/http/refusal.ts
 * `settleRefusal`, the error's code), beside whatever the request's background work logged.
 */
const loggedFor = (logged: { mock: { calls: unknown[][] } }, requestId: string) =>
  logged.mock.calls
    .map((call) => String(call[0]))
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { requestId?: string; what?: string })
    .filter((line) => line.requestId === requestId)
    .map((line) => line.what);

const UNAVAILABLE = "The service cannot answer right now (request {id}); try again shortly.";
const INTERNAL = "Something went wrong (request {id}); the log has the details.";

describe("a fault under the console's pages", () => {
  /** The console as `svc` runs it, with D1 (every shard) failing as `plan` says: a platform fault by default. */
  const withD1Down = (plan: Parameters<typeof failingShards>[1] = {}) => {
    const { bindings, fault } = failingShards({ ...env }, plan);
    return { broken: service({ ...NO_VERIFICATION, ...bindings }), fault };
  };

  // Threat: D1 down (a binding failing for now) shown to the operator as an English 500 with no Retry-After, as if the
  // console were broken for good: nothing says to retry, and the log files it as the console's, not as the fault it is.
  it("D1 down: a page and an action are 503 console pages with Retry-After and the request id, logged as a fault", async () => {
    const cookie = await signIn();
    const csrf = csrfOf(await (await svc.request("GET", `${BASE}/users`, { headers: { cookie } })).text());
    const { broken, fault } = withD1Down();
    const logged = vi.spyOn(console, "error");
    try {
      const shownPage = await broken.request("GET", `${BASE}/users`, { headers: { cookie } });
      const pageRequest = await expectConsoleFault(shownPage, 503, UNAVAILABLE);
      const posted = await broken.request("POST", `${BASE}/logout`, {
        body: form({ csrf }),
        headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN, cookie },
      });
      const actionRequest = await expectConsoleFault(posted, 503, UNAVAILABLE);
      expect(fault.failures).toBeGreaterThan(0);
      for (const requestId of [pageRequest, actionRequest]) {
        expect(loggedFor(logged, requestId)).toContain("service-unavailable");
        expect(loggedFor(logged, requestId)).not.toContain("console");
      }
    } finally {
      logged.mockRestore();
    }
  });

  // Threat: the same fault met by the page's own query (the session read worked) answered as a 500 without Retry-After.
  it("D1 failing under the page's own query (the session read fine) is the same 503 page", async () => {
    const cookie = await signIn();
    const { broken, fault } = withD1Down({ match: /from "users"/i });
    const answer = await broken.request("GET", `${BASE}/users`, { headers: { cookie } });
    await expectConsoleFault(answer, 503, UNAVAILABLE);
    expect(fault.failures).toBeGreaterThan(0);
  });

  // Threat: a failure a retry would meet again (a bug, a missing migration) shown as "try again shortly" with a
  // Retry-After, so the operator waits for what will not heal; it stays a 500, logged as the API logs a 500.
  it("an error that is no platform fault stays a 500 page, without Retry-After, logged as a fault", async () => {
    const cookie = await signIn();
    const { broken } = withD1Down({ error: () => new Error("SQLITE_ERROR: no such column: nope") });
    const logged = vi.spyOn(console, "error");
    try {
      const answer = await broken.request("GET", `${BASE}/users`, { headers: { cookie } });
      const requestId = await expectConsoleFault(answer, 500, INTERNAL);
      expect(loggedFor(logged, requestId)).toContain("internal-server-error");
      expect(loggedFor(logged, requestId)).not.toContain("console");
    } finally {
      logged.mockRestore();
    }
  });

  // Threat: the fault's handling changing a refusal: an unknown user must stay the console's 404 page with its
  // message, a refused action its 403, neither with Retry-After.
  it("a refusal is as before: the 404 page with its message, the refused action's 403, no Retry-After", async () => {
    const cookie = await signIn();
    const missing = await svc.request("GET", `${BASE}/users/${crypto.randomUUID()}`, { headers: { cookie } });
    const page = await missing.text();
    expect(missing.status).toBe(404);
    expect(missing.headers.get("retry-after")).toBeNull();
    expect(page).toContain("<title>Problem · Admin console</title>");
    expect(page).toMatch(
      /<p class="error" role="alert">[^<]+<\/p><p><a href="[^"]+\/users">← Users<\/a><\/p>/,
    );
    expect(page).not.toContain("request ");
    const refused = await postForm("/logout", { csrf: "forged" }, { cookie });
    expect(refused.status).toBe(403);
    expect(refused.headers.get("retry-after")).toBeNull();
  });
});
