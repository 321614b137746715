// The outside parts of protection by default (contract §13) failing: the JTI ledger that makes a hosted sign-in's
// completion single use, the KV that holds its request, D1 under the session list and its revocation, and D1 under the
// console's brand. The threat named above each test is what it keeps out.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { NO_VERIFICATION, PASSWORD, service, signUp } from "../helpers";
import { Browser } from "../oauth2/page-browser";
import { location } from "../oauth2/support";
import { failingKv, failingNamespace, failingShards } from "../support/faults";
import { accountOf, expectFaultPage, expectUnavailable } from "./support";

const APP = "http://localhost:3000";

/** A session of the user's (password sign-in). */
async function signIn(svc: ReturnType<typeof service>, email: string) {
  const answer = await svc.post("/signin/email-password", { email, password: PASSWORD });
  expect(answer.status).toBe(200);
  return (
    (await answer.json()) as {
      session: { accessToken: string; refreshToken: string; refreshTokenId: string };
    }
  ).session;
}
const NO_VERIFY = { AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "false" };

/** `GET /signin` for the app, then the page's sign-in post; the answer of the page's next step. */
async function hostedSignIn(browser: Browser, email: string) {
  const started = await browser.get(`/signin?redirectTo=${encodeURIComponent(APP)}`);
  expect(started.status).toBe(303);
  const requestId = location(started).searchParams.get("request_id")!;
  const posted = await browser.post("/oauth2/interaction/sign-in", {
    request_id: requestId,
    email,
    password: PASSWORD,
  });
  return { requestId, posted };
}

describe("the hosted pages' completion with its ledger failing", { timeout: 20_000 }, () => {
  // Threat: a completion minting a session without being recorded (replayable), or recorded without a session and
  // the person stuck. Before the claim: nothing spent, nothing minted, the same request completes on retry. After it
  // (a reset mid-call): nothing minted, and the request stays spent: a replay mints nothing either.
  it.each(["before", "after"] as const)(
    "%s the claim: a 503, no app session; then as the claim says",
    async (when) => {
      const { user } = await signUp(service(NO_VERIFY));
      const { binding, fault } = failingNamespace(env.JTI_LEDGERS, { match: /^claim$/, when, times: 1 });
      const svc = service({ ...NO_VERIFY, JTI_LEDGERS: binding });
      const browser = new Browser(svc);
      const before = (await accountOf(user.email)).sessions;
      const { requestId, posted } = await hostedSignIn(browser, user.email);
      // The page's sign-in worked (its own session), its way back to the app could not be recorded.
      const back = posted.status === 303 ? await browser.get(location(posted).toString()) : posted;
      expect(fault.failures).toBe(1);
      expect(back.status).toBe(503);
      expect(back.headers.get("location")).toBeNull();
      // One session: the page's own. None for the app.
      expect((await accountOf(user.email)).sessions).toBe(before + 1);
      const retry = await browser.get(`/oauth2/interaction?request_id=${requestId}`);
      if (when === "before") {
        expect(retry.status).toBe(303);
        expect(location(retry).searchParams.get("refreshToken")).toMatch(/^[0-9a-f-]{36}$/);
        expect((await accountOf(user.email)).sessions).toBe(before + 2);
      } else {
        expect(retry.headers.get("location") ?? "").not.toContain("refreshToken");
        expect((await accountOf(user.email)).sessions).toBe(before + 1);
      }
    },
  );

  // Threat: a request the browser is sent to but that was never saved (a page that says nothing useful, or a 500).
  // `GET /signin` is a page: its fault is the 503 page (faults/pages.test.ts), never a redirect.
  it("KV failing when /signin saves the request: a 503 page, no page to go to; the retry works", async () => {
    const { binding } = failingKv(env.OAUTH2_REQUESTS, { match: /^put$/, times: 1 });
    const svc = service({ ...NO_VERIFY, OAUTH2_REQUESTS: binding });
    const browser = new Browser(svc);
    const failed = await browser.get(`/signin?redirectTo=${encodeURIComponent(APP)}`);
    expect(failed.headers.get("location")).toBeNull();
    await expectFaultPage(failed, "The service cannot answer right now. Try again shortly.");
    const retry = await browser.get(`/signin?redirectTo=${encodeURIComponent(APP)}`);
    expect(retry.status).toBe(303);
  });
});

describe("the session list with D1 failing", () => {
  // Threat: a revocation reported done (204) while the session lives on, or a 500 with a stack.
  it("listing and revoking answer 503; the other session lives on, and the retry ends it", async () => {
    const svc = service(NO_VERIFICATION);
    const { user } = await signUp(svc);
    const mine = await signIn(svc, user.email);
    const other = await signIn(svc, user.email);
    const { bindings } = failingShards(env, { match: /sessions/i });
    const broken = service({ ...NO_VERIFICATION, ...bindings });
    const auth = { authorization: `Bearer ${mine.accessToken}` };
    await expectUnavailable(await broken.request("GET", "/user/sessions", { headers: auth }));
    await expectUnavailable(
      await broken.request("DELETE", `/user/sessions/${other.refreshTokenId}`, { headers: auth }),
    );
    expect((await svc.post("/token", { refreshToken: other.refreshToken })).status).toBe(200);
    const token = (await signIn(svc, user.email)).accessToken;
    const listed = await svc.request("GET", "/user/sessions", {
      headers: { authorization: `Bearer ${token}` },
    });
    const ids = ((await listed.json()) as { items: { id: string }[] }).items.map((item) => item.id);
    const ended = await svc.request("DELETE", `/user/sessions/${other.refreshTokenId}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(ids).toContain(other.refreshTokenId);
    expect(ended.status).toBe(204);
  });
});

describe("the brand with D1 failing", () => {
  // Threat: every sign-in page down because a setting could not be read. The pages show the environment's brand.
  it("the sign-in page still renders, with the configured brand", async () => {
    const { bindings } = failingShards(env, { match: /service_settings/ });
    const svc = service({ ...NO_VERIFY, AUTH_BRAND_NAME: "Configured Brand", ...bindings });
    const browser = new Browser(svc);
    const started = await browser.get(`/signin?redirectTo=${encodeURIComponent(APP)}`);
    const page = await browser.get(location(started).toString());
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Configured Brand");
  });
});
