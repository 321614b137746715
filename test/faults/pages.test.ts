// A raw platform fault (D1 down: not an AppError, src/errors.ts `platformFault`) under a person's page: the built-in
// pages, the account center, the admin console. Threat: a person who opened a page, or posted its form, shown the
// API's JSON (`{"status":503,"error":"service-unavailable",…}`) or a bare 500: no words they can read, nothing that
// says to try again, no reference for a report, and a page without its CSP. The API beside the pages keeps its JSON.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { NO_VERIFICATION, PASSWORD, SERVER, service, signUp, type TestService } from "../helpers";
import { Browser } from "../oauth2/page-browser";
import { ADMIN, authorize, form, newClient, provider, requestIdOf } from "../oauth2/support";
import { type Fault, failingNamespace, failingShards } from "../support/faults";
import { expectFaultPage, expectUnavailable } from "./support";

const UNAVAILABLE_EN = "The service cannot answer right now. Try again shortly.";
const UNAVAILABLE_DE = "Der Dienst kann gerade nicht antworten. Versuchen Sie es gleich noch einmal.";
const INTERNAL_EN = "The service could not complete this request. Try again later.";

const ONE_DATABASE = { AUTH_D1_SHARDS: "DB" };
const TWO_SHARDS = {};

/**
 * The same deployment with D1 failing as `error` says (the platform's own by default). One database by default, so
 * the binding's raw error reaches the app's error handler; with the default shards, the shard routing's 503
 * (`UnavailableError`, the slot map unread) comes first.
 */
function withD1Down(
  overrides: Record<string, unknown>,
  error?: () => Error,
  shards: Record<string, string> = ONE_DATABASE,
) {
  const { bindings, fault } = failingShards({ ...env, ...shards }, error ? { error } : {});
  return { svc: service({ ...overrides, ...shards, ...bindings }), fault };
}

/** A browser on `svc` holding `browser`'s cookies: the same person, now meeting the fault. */
function sameBrowserOn(svc: TestService, browser: Browser): Browser {
  const moved = new Browser(svc);
  for (const [name, value] of browser.jar) moved.jar.set(name, value);
  return moved;
}

/** A user, and a browser signed in to the built-in pages as them, on the healthy deployment. */
async function signedInBrowser(svc: TestService) {
  const { user } = await signUp(svc);
  const client = await newClient(svc);
  const browser = new Browser(svc);
  const requestId = await requestIdOf(await authorize(svc, client));
  const posted = await browser.post("/oauth2/interaction/sign-in", {
    request_id: requestId,
    email: user.email,
    password: PASSWORD,
  });
  expect(posted.status).toBe(303);
  expect(browser.signedIn).toBe(true);
  return { browser, client, user };
}

describe("a fault under the built-in pages", { timeout: 30_000 }, () => {
  const healthy = provider(NO_VERIFICATION);

  // Threat: the sign-in page a person opened answered with the API's JSON when D1 could not read their session.
  it("a page GET is a 503 page in the page's language, with Retry-After, the request id and the CSP", async () => {
    const { browser, client } = await signedInBrowser(healthy);
    const requestId = await requestIdOf(await authorize(healthy, client, { prompt: "consent" }));
    const { svc, fault } = withD1Down({ ...NO_VERIFICATION, AUTH_OAUTH2_PROVIDER_ENABLED: "true" });
    const faulty = sameBrowserOn(svc, browser);
    await expectFaultPage(await faulty.get(`/oauth2/interaction?request_id=${requestId}`), UNAVAILABLE_EN);
    expect(fault.failures).toBeGreaterThan(0);
    // The page's language: the browser's, as every page's.
    const german = await svc.request("GET", `/oauth2/interaction?request_id=${requestId}`, {
      headers: { cookie: faulty.cookie, "accept-language": "de-DE,de;q=0.9" },
    });
    const html = await expectFaultPage(german, UNAVAILABLE_DE);
    expect(html).toContain('<html lang="de">');
  });

  // Threat: a person's sign-in post answered with the API's JSON when D1 could not look their account up.
  it("a form POST is a 503 page, not the API's JSON", async () => {
    const { user } = await signUp(healthy);
    const client = await newClient(healthy);
    const requestId = await requestIdOf(await authorize(healthy, client));
    const { svc } = withD1Down({ ...NO_VERIFICATION, AUTH_OAUTH2_PROVIDER_ENABLED: "true" });
    const posted = await new Browser(svc).post("/oauth2/interaction/sign-in", {
      request_id: requestId,
      email: user.email,
      password: PASSWORD,
    });
    await expectFaultPage(posted, UNAVAILABLE_EN);
  });

  // Threat: a failure that is no platform fault (a 500) shown to a person as the API's JSON.
  it("a 500 is a page too: its own words, the request id, no Retry-After", async () => {
    const { browser, client } = await signedInBrowser(healthy);
    const requestId = await requestIdOf(await authorize(healthy, client, { prompt: "consent" }));
    const { svc } = withD1Down(
      { ...NO_VERIFICATION, AUTH_OAUTH2_PROVIDER_ENABLED: "true" },
      () => new Error("SQLITE_ERROR: no such column: nope"),
    );
    const answer = await sameBrowserOn(svc, browser).get(`/oauth2/interaction?request_id=${requestId}`);
    await expectFaultPage(answer, INTERNAL_EN, 500);
  });
});

describe("the same fault on the API", { timeout: 30_000 }, () => {
  // Threat: the page's answer leaking onto the API mounted at the same prefix (a sub-app's middleware at "/" reaches
  // every path under it): an app's client reading HTML where the contract promises JSON.
  it("answers the API's JSON 503, before and after the pages' mount, as before", async () => {
    const healthy = provider(NO_VERIFICATION);
    const { user, refreshToken } = await signUp(healthy).then((session) => ({
      user: session.user,
      refreshToken: session.refreshToken,
    }));
    const { svc } = withD1Down({ ...NO_VERIFICATION, AUTH_OAUTH2_PROVIDER_ENABLED: "true" });
    // Core auth, mounted before the pages.
    await expectUnavailable(
      await svc.post("/signin/email-password", { email: user.email, password: PASSWORD }),
    );
    await expectUnavailable(await svc.post("/token", { refreshToken }));
    // The admin API, mounted after them; and a browser's Accept header changes nothing.
    await expectUnavailable(
      await svc.request("GET", "/admin/users", { headers: { ...ADMIN, accept: "text/html" } }),
    );
  });

  // Threat: the page's own script (the passkey upgrade, src/pages/passkey-upgrade.ts) handed HTML where it reads JSON.
  it("the JSON routes a page's script calls keep the JSON 503", async () => {
    const { browser } = await signedInBrowser(provider(NO_VERIFICATION));
    const { svc } = withD1Down({ ...NO_VERIFICATION, AUTH_OAUTH2_PROVIDER_ENABLED: "true" });
    const answer = await svc.request("POST", "/oauth2/interaction/passkey-upgrade", {
      headers: { cookie: browser.cookie, "sec-fetch-site": "same-origin" },
    });
    await expectUnavailable(answer);
  });
});

describe("a fault under the account center", { timeout: 30_000 }, () => {
  // Threat: the account page, or its form's post, answered with the API's JSON when D1 could not read the session
  // (the binding's raw error, or the shard routing's 503).
  it.each([
    ["one database", ONE_DATABASE],
    ["two shards", TWO_SHARDS],
  ])("%s: its page and its form post are 503 pages", async (_, shards) => {
    const healthy = provider(NO_VERIFICATION);
    const { browser } = await signedInBrowser(healthy);
    const { svc } = withD1Down(
      { ...NO_VERIFICATION, AUTH_OAUTH2_PROVIDER_ENABLED: "true" },
      undefined,
      shards,
    );
    const faulty = sameBrowserOn(svc, browser);
    await expectFaultPage(await faulty.get("/account"), UNAVAILABLE_EN);
    await expectFaultPage(await faulty.post("/account/profile", { displayName: "Ada" }), UNAVAILABLE_EN);
  });
});

describe("a fault under the admin console", () => {
  // Threat: the console's sign-in (outside its pages' own error page) answered with the API's JSON when D1 could not
  // store the console session.
  it("its sign-in post is a 503 page", async () => {
    const { svc } = withD1Down(NO_VERIFICATION);
    const answer = await svc.request("POST", "/admin/console/login", {
      body: form({ secret: String(env.AUTH_ADMIN_SECRET) }),
      headers: { "content-type": "application/x-www-form-urlencoded", origin: new URL(SERVER).origin },
    });
    await expectFaultPage(answer, UNAVAILABLE_EN);
    expect(answer.headers.get("set-cookie")).toBeNull();
  });
});

describe("a fault under the development inbox", () => {
  // Threat: the developer who opened the inbox (or one of its mails) in a browser shown the API's JSON when D1 could
  // not read the mailbox; the mailbox's JSON beside it (`GET /dev/mailbox`, which tests and scripts read) keeps it.
  it("the inbox and a mail are 503 pages; the JSON mailbox keeps its JSON", async () => {
    const { svc, fault } = withD1Down({});
    await expectFaultPage(await svc.get("/dev/inbox"), UNAVAILABLE_EN);
    await expectFaultPage(await svc.get("/dev/inbox/1"), UNAVAILABLE_EN);
    expect(fault.failures).toBeGreaterThan(0);
    await expectUnavailable(await svc.get("/dev/mailbox?to=someone%40example.com"));
  });
});

describe("a fault under the pages a link opens", { timeout: 30_000 }, () => {
  const ORIGIN = new URL(SERVER).origin;
  const OAUTH2 = { ...NO_VERIFICATION, AUTH_OAUTH2_PROVIDER_ENABLED: "true" };
  /** A ticket shaped as the lockout mail's (`<userId>.<64 hex>`): the page reads it, the object redeems it. */
  const UNLOCK_TICKET = `${crypto.randomUUID()}.${"ab".repeat(32)}`;
  const broken = () => Promise.reject(new Error("Durable Object reset because its code was updated"));
  const formPost = (svc: TestService, path: string, fields: Record<string, string>) =>
    svc.request("POST", path, {
      body: form(fields),
      headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN },
    });

  /** Each page, its deployment with the page's first call to the platform failing, and the person's request. */
  const pages: [
    string,
    () => { svc: TestService; fault?: Fault },
    (svc: TestService) => Promise<Response>,
  ][] = [
    [
      "POST /unlock (the mailed link's button), its rate limit's count failing",
      () => ({
        svc: service({
          ...NO_VERIFICATION,
          AUTH_RATE_LIMIT_ENABLE: "true",
          BRUTE_FORCE_LIMITER: { limit: broken },
        }),
      }),
      (svc) => formPost(svc, "/unlock", { ticket: UNLOCK_TICKET }),
    ],
    [
      "GET /impersonation/land (the support's one-time link), D1 failing",
      () => withD1Down({ ...NO_VERIFICATION, AUTH_IMPERSONATION_ENABLED: "true" }),
      (svc) => svc.get(`/impersonation/land?ticket=${"a".repeat(43)}`),
    ],
    [
      "GET /oauth2/logout (RP-initiated logout), D1 failing",
      () => withD1Down(OAUTH2),
      (svc) => svc.get("/oauth2/logout?client_id=oc_unknown"),
    ],
    [
      "POST /oauth2/logout, D1 failing",
      () => withD1Down(OAUTH2),
      (svc) => formPost(svc, "/oauth2/logout", { client_id: "oc_unknown" }),
    ],
    [
      "POST /oauth2/logout/confirm (its question's button), D1 failing",
      () => withD1Down(OAUTH2),
      (svc) => formPost(svc, "/oauth2/logout/confirm", { client_id: "oc_unknown" }),
    ],
  ];

  // Threat: a person who followed a link from a mail, from the support, or from an app signing them out, shown the
  // API's JSON (`{"status":503,"error":"service-unavailable",…}`) when the platform failed: no words they can read,
  // nothing that says to try again, no way back. The page's fault is the pages' fault page.
  it.each(pages)("%s: a 503 page, not the API's JSON", async (_, deployment, open) => {
    const { svc, fault } = deployment();
    await expectFaultPage(await open(svc), UNAVAILABLE_EN);
    if (fault) expect(fault.failures).toBeGreaterThan(0);
  });

  // Threat: the fault page in a language the person does not read; or a failure that is no platform fault (a 500)
  // still shown as the API's JSON on the unlock page's post.
  it("in the page's language; a 500 is the fault page too", async () => {
    const { svc } = withD1Down(OAUTH2);
    const german = await svc.request("GET", "/oauth2/logout?client_id=oc_unknown", {
      headers: { "accept-language": "de-DE,de;q=0.9" },
    });
    expect(await expectFaultPage(german, UNAVAILABLE_DE)).toContain('<html lang="de">');
    const lockouts = failingNamespace(env.SIGN_IN_LOCKOUTS as DurableObjectNamespace, {
      error: () => new Error("a bug, not the platform"),
    });
    const failed = service({ ...NO_VERIFICATION, SIGN_IN_LOCKOUTS: lockouts.binding });
    await expectFaultPage(await formPost(failed, "/unlock", { ticket: UNLOCK_TICKET }), INTERNAL_EN, 500);
    expect(lockouts.fault.failures).toBe(1);
  });

  // Threat: the fault page taking over answers that are no fault: a link that does not hold keeps its own answer, and
  // the unlock question, whose one read (the user's language) is let go, is still asked with D1 down.
  it("their own answers stay: a spent link, a link that does not hold, the unlock question with D1 down", async () => {
    const healthy = service({ ...OAUTH2, AUTH_IMPERSONATION_ENABLED: "true" });
    const spent = await healthy.get(`/impersonation/land?ticket=${"a".repeat(43)}`);
    expect(spent.status).toBe(302);
    expect(new URL(spent.headers.get("location")!).searchParams.get("error")).toBe("invalid-ticket");
    const unknownClient = await healthy.get("/oauth2/logout?client_id=oc_unknown");
    expect(unknownClient.status).toBe(400);
    expect(unknownClient.headers.get("content-type")).toMatch(/^text\/html/);
    const { svc, fault } = withD1Down(NO_VERIFICATION);
    const question = await svc.get(`/unlock?ticket=${UNLOCK_TICKET}`);
    expect(question.status).toBe(200);
    expect(await question.text()).toContain(`<input type="hidden" name="ticket" value="${UNLOCK_TICKET}">`);
    expect(fault.failures).toBeGreaterThan(0);
  });
});
