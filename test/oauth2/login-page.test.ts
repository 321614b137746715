// The built-in login and consent page through HTTP (the browser test in test/compat drives it in Chromium).
// Threats: login CSRF and forced consent from another site (the Origin check, SameSite cookie), clickjacking
// (frame-ancestors), script injection through the client's name (escaping, no script allowed by the CSP), silent
// authorization without a session or without consent (prompt=none), and an old sign-in passed off as fresh (max_age).
import { env } from "cloudflare:test";
import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import { describe, expect, it } from "vitest";
import { totpCode, totpStep } from "../../src/auth/mfa/totp";
import {
  auditTypesOf,
  expectError,
  mailbox,
  PASSWORD,
  SERVER,
  signUp,
  uniqueEmail,
  verifyPath,
} from "../helpers";
import { HOOK_URL, newSecret } from "../hooks/support";
import { failingFetcher } from "../support/faults";
import { userD1 } from "../support/shards";
import { Browser, signIn } from "./page-browser";
import { authorize, form, ISSUER, location, newClient, provider, REDIRECT_URI, requestIdOf } from "./support";

const svc = provider();

async function startAt(browser: Browser, client: Awaited<ReturnType<typeof newClient>>, params = {}) {
  const response = await authorize(browser.svc, client, params);
  const requestId = await requestIdOf(response);
  return { requestId, page: await browser.get(location(response).toString()) };
}

describe("the built-in login and consent page", () => {
  it("signs in, asks for consent in plain words, and sends the browser back with a code", async () => {
    const client = await newClient(svc, { clientName: `<script>alert(1)</script> Notes` });
    const { user } = await signUp(svc);
    const browser = new Browser(svc);
    const { requestId, page } = await startAt(browser, client, { scope: "openid email offline_access" });
    expect(page.status).toBe(200);
    const csp = page.headers.get("content-security-policy")!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("script-src");
    const signInHtml = await page.text();
    expect(signInHtml).toContain('name="password"');
    expect(signInHtml).toContain("&lt;script&gt;alert(1)&lt;/script&gt; Notes");
    expect(signInHtml).not.toContain("<script>");

    const consent = await signIn(browser, requestId, user.email);
    expect(browser.signedIn).toBe(true);
    const consentHtml = await consent.text();
    expect(consentHtml).toContain("See your email address");
    expect(consentHtml).toContain("Stay connected when you are not using it");
    expect(consent.headers.get("content-security-policy")).toContain(
      "form-action 'self' https://rp.example.com",
    );

    const allowed = await browser.post("/oauth2/interaction/consent", {
      request_id: requestId,
      decision: "allow",
    });
    expect(allowed.status).toBe(303);
    const back = location(allowed);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT_URI);
    expect(back.searchParams.get("code")).toMatch(/^oac_/);
    expect(back.searchParams.get("state")).toBe("st-1");
    expect(back.searchParams.get("iss")).toBe(ISSUER);
    expect(await auditTypesOf(user.id)).toEqual(
      expect.arrayContaining(["signup", "signin.success", "oauth2.consent"]),
    );

    // Consent is remembered: the next request of the same client and scopes goes straight back.
    const { page: next } = await startAt(browser, client, { scope: "openid email" });
    expect(next.status).toBe(303);
    expect(location(next).searchParams.get("code")).toMatch(/^oac_/);
    // A new scope is asked about; prompt=consent asks again.
    expect((await startAt(browser, client, { scope: "openid profile" })).page.status).toBe(200);
    expect(
      await (await startAt(browser, client, { scope: "openid email", prompt: "consent" })).page.text(),
    ).toContain("decision");
  });

  it("asks a user with TOTP for the second factor before the consent screen", async () => {
    const mfa = provider({ AUTH_MFA_ENABLED: "true" });
    const client = await newClient(mfa);
    const session = await signUp(mfa);
    const { totpSecret } = (await (await mfa.get("/mfa/totp/generate", session.accessToken)).json()) as {
      totpSecret: string;
    };
    const secret = decodeBase32IgnorePadding(totpSecret);
    const code = () => totpCode(secret, totpStep(Date.now()));
    await mfa.post("/user/mfa", { code: code(), activeMfaType: "totp" }, session.accessToken);
    await userD1(session.user.id)
      .prepare("UPDATE users SET totp_last_step = NULL WHERE id = ?")
      .bind(session.user.id)
      .run();

    const browser = new Browser(mfa);
    const { requestId } = await startAt(browser, client);
    const first = await browser.post("/oauth2/interaction/sign-in", {
      request_id: requestId,
      email: session.user.email,
      password: PASSWORD,
    });
    expect(first.status).toBe(200);
    expect(browser.cookie).toBe("");
    const ticket = /name="ticket" value="([^"]+)"/.exec(await first.text())?.[1];
    expect(ticket).toMatch(/^mfaTotp:/);
    const wrong = await browser.post("/oauth2/interaction/mfa", {
      request_id: requestId,
      ticket: ticket!,
      otp: "000000",
    });
    expect(wrong.status).toBe(401);
    expect(browser.cookie).toBe("");
    const right = await browser.post("/oauth2/interaction/mfa", {
      request_id: requestId,
      ticket: ticket!,
      otp: code(),
    });
    expect(right.status).toBe(303);
    expect(browser.signedIn).toBe(true);
    expect(await (await browser.get(location(right).toString())).text()).toContain("decision");
  });

  // Issue 42: the account center spoke the user's language, the TOTP step of the same person's sign-in the browser's
  // (here: none, so English). Once the first factor has named the user, their `locale` is the page's language.
  it("asks for the TOTP code in the user's own language (locale), without Accept-Language", async () => {
    const mfa = provider({ AUTH_MFA_ENABLED: "true" });
    const client = await newClient(mfa);
    const session = await signUp(mfa, uniqueEmail("de"), { locale: "de" });
    expect(session.user.locale).toBe("de");
    const { totpSecret } = (await (await mfa.get("/mfa/totp/generate", session.accessToken)).json()) as {
      totpSecret: string;
    };
    const secret = decodeBase32IgnorePadding(totpSecret);
    await mfa.post(
      "/user/mfa",
      { code: totpCode(secret, totpStep(Date.now())), activeMfaType: "totp" },
      session.accessToken,
    );

    const browser = new Browser(mfa);
    const { requestId, page } = await startAt(browser, client);
    // Nobody is known yet: the sign-in form is in the default language.
    expect(await page.text()).toContain('lang="en"');
    const first = await browser.post("/oauth2/interaction/sign-in", {
      request_id: requestId,
      email: session.user.email,
      password: PASSWORD,
    });
    const step = await first.text();
    expect(first.status).toBe(200);
    expect(step).toContain('lang="de"');
    expect(step).toContain("Bestätigung in zwei Schritten");
    expect(step).not.toContain("Two-step verification");
    // A wrong code: the same step again, still in German, its error too.
    const ticket = /name="ticket" value="([^"]+)"/.exec(step)?.[1];
    const wrong = await browser.post("/oauth2/interaction/mfa", {
      request_id: requestId,
      ticket: ticket!,
      otp: "000000",
    });
    expect(wrong.status).toBe(401);
    const again = await wrong.text();
    expect(again).toContain('lang="de"');
    expect(again).toContain("Bestätigung in zwei Schritten");
    expect(again).toContain("Dieser Code stimmt nicht.");
  });

  it("signs in with a magic link that comes back to the page, when magic links are on", async () => {
    const links = provider({ AUTH_EMAIL_PASSWORDLESS_ENABLED: "true" });
    const client = await newClient(links);
    const email = uniqueEmail("link");
    const browser = new Browser(links);
    const { requestId, page } = await startAt(browser, client);
    expect(await page.text()).toContain("Email me a link");
    const sent = await browser.post("/oauth2/interaction/email-link", { request_id: requestId, email });
    expect(sent.status).toBe(200);
    expect(await sent.text()).toContain("Check your email");
    const [mail] = await mailbox(links, email);
    const verified = await links.request("GET", verifyPath(mail!));
    const landing = location(verified);
    expect(landing.pathname).toBe("/auth/v1/oauth2/interaction");
    expect(landing.searchParams.get("refreshToken")).toBeTruthy();
    const landed = await browser.get(landing.toString());
    expect(landed.status).toBe(303);
    expect(location(landed).searchParams.has("refreshToken")).toBe(false);
    expect(browser.signedIn).toBe(true);
    const consent = await browser.get(location(landed).toString());
    expect(await consent.text()).toContain(email);
    // The link's token was spent on the page: the same landing again signs no one in.
    const again = new Browser(links);
    for (const [name, value] of browser.jar) if (name !== "oauth2_session") again.jar.set(name, value);
    expect((await again.get(landing.toString())).status).toBe(401);
    expect(again.signedIn).toBe(false);
  });

  it("login CSRF: the landing of someone's magic link opened in another browser sets no cookie, shows the form and spends nothing", async () => {
    // Threat: an attacker asks the page for a link to their own address and sends the victim the landing URL; the
    // victim's browser would be signed in to the page as the attacker for 30 days (and prompt=none would complete
    // every OAuth2 sign-in there for the attacker's account).
    const links = provider({ AUTH_EMAIL_PASSWORDLESS_ENABLED: "true" });
    const client = await newClient(links);
    const attackerEmail = uniqueEmail("attacker");
    const attacker = new Browser(links);
    const { requestId } = await startAt(attacker, client);
    await attacker.post("/oauth2/interaction/email-link", { request_id: requestId, email: attackerEmail });
    expect(attacker.jar.has("oauth2-link")).toBe(true);
    const [mail] = await mailbox(links, attackerEmail);
    const landing = location(await links.request("GET", verifyPath(mail!)));
    expect(landing.searchParams.get("refreshToken")).toBeTruthy();

    const victim = new Browser(links);
    const shown = await victim.get(landing.toString());
    expect(shown.status).toBe(400);
    expect(await shown.text()).toContain("asked for in another browser");
    expect(victim.cookie).toBe("");
    // A browser with a link cookie of its own (it asked for a link for another request) is no better.
    const otherAsker = new Browser(links);
    const { requestId: otherRequest } = await startAt(otherAsker, client);
    await otherAsker.post("/oauth2/interaction/email-link", {
      request_id: otherRequest,
      email: uniqueEmail(),
    });
    expect((await otherAsker.get(landing.toString())).status).toBe(400);
    expect(otherAsker.signedIn).toBe(false);
    // The token in the URL was not spent: the browser that asked still lands.
    const own = await attacker.get(landing.toString());
    expect(own.status).toBe(303);
    expect(attacker.signedIn).toBe(true);
  });

  it("keeps the page off the allow-list: a link aimed at it through the API, or a forged signature, is refused", async () => {
    const page = `${SERVER}/auth/v1/oauth2/interaction?request_id=x`;
    const links = provider({ AUTH_EMAIL_PASSWORDLESS_ENABLED: "true" });
    const asked = { email: uniqueEmail(), options: { redirectTo: page } };
    await expectError(await links.post("/signin/passwordless/email", asked), 400, "redirectTo-not-allowed");
    for (const forged of [
      `${page}&browser=${"0".repeat(64)}&own_mac=${"A".repeat(43)}`,
      `${page}&own_mac=`,
      `https://evil.example.com/auth/v1/oauth2/interaction?request_id=x&own_mac=${"A".repeat(43)}`,
    ]) {
      const verified = await links.request(
        "GET",
        `/verify?ticket=passwordlessEmail:${crypto.randomUUID()}&type=signinPasswordless&redirectTo=${encodeURIComponent(forged)}`,
      );
      const back = location(verified);
      expect(`${back.origin}${back.pathname}`).toBe("http://localhost:3000/");
      expect(back.searchParams.get("error")).toBe("redirectTo-not-allowed");
    }
  });

  it("sends denial back as access_denied", async () => {
    const client = await newClient(svc);
    const { user } = await signUp(svc);
    const browser = new Browser(svc);
    const { requestId } = await startAt(browser, client);
    await signIn(browser, requestId, user.email);
    const denied = await browser.post("/oauth2/interaction/consent", {
      request_id: requestId,
      decision: "deny",
    });
    expect(location(denied).searchParams.get("error")).toBe("access_denied");
  });

  it("answers prompt=none without a page: login_required, consent_required, or a code", async () => {
    const client = await newClient(svc);
    const { user } = await signUp(svc);
    const browser = new Browser(svc);
    const none = (params = {}) => authorize(svc, client, { prompt: "none", ...params }).then(location);
    expect((await none()).searchParams.get("error")).toBe("login_required");
    const withCookie = async () =>
      location(
        await svc.request(
          "GET",
          `/oauth2/authorize?${form({ client_id: client.clientId, redirect_uri: REDIRECT_URI, response_type: "code", scope: "openid email", prompt: "none", state: "s" })}`,
          { headers: { cookie: browser.cookie } },
        ),
      );
    const { requestId } = await startAt(browser, client, { scope: "openid email" });
    await signIn(browser, requestId, user.email);
    expect((await withCookie()).searchParams.get("error")).toBe("consent_required");
    await browser.post("/oauth2/interaction/consent", { request_id: requestId, decision: "allow" });
    const silent = await withCookie();
    expect(silent.searchParams.get("code")).toMatch(/^oac_/);
    expect(silent.searchParams.get("state")).toBe("s");
  });

  it("shows the sign-in form again for prompt=login and an exceeded max_age, and a wrong password says so", async () => {
    const client = await newClient(svc);
    const { user } = await signUp(svc);
    const browser = new Browser(svc);
    const { requestId } = await startAt(browser, client);
    await signIn(browser, requestId, user.email);
    await new Promise((resolve) => setTimeout(resolve, 5));
    for (const params of [{ prompt: "login" }, { max_age: "0" }]) {
      const { page } = await startAt(browser, client, params);
      expect(await page.text()).toContain('name="password"');
    }
    const { requestId: another } = await startAt(browser, client, { prompt: "login" });
    const wrong = await browser.post("/oauth2/interaction/sign-in", {
      request_id: another,
      email: user.email,
      password: "wrong password!",
    });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain("Wrong email or password.");
  });

  it("refuses form posts from another site and unknown requests", async () => {
    const client = await newClient(svc);
    const { user } = await signUp(svc);
    const browser = new Browser(svc);
    const { requestId } = await startAt(browser, client);
    const crossSite = await browser.post(
      "/oauth2/interaction/sign-in",
      { request_id: requestId, email: user.email, password: PASSWORD },
      { origin: "https://evil.example.com" },
    );
    expect(crossSite.status).toBe(403);
    expect(browser.cookie).toBe("");
    const noOrigin = await browser.post(
      "/oauth2/interaction/sign-in",
      { request_id: requestId, email: user.email, password: PASSWORD },
      {},
    );
    expect(noOrigin.status).toBe(403);
    expect((await browser.get("/oauth2/interaction?request_id=nope")).status).toBe(400);
    expect(
      (await browser.post("/oauth2/interaction/consent", { request_id: requestId, decision: "allow" }))
        .status,
    ).toBe(303);
  });
});

/**
 * The same deployment with one of the app's hooks unreachable (every call fails as the platform's fetch does), and a
 * browser there holding `browser`'s cookies: what it posts meets the hook's 503 `service-unavailable`
 * (src/hooks/call.ts), as the API answers it.
 */
function withHookDown(browser: Browser, hook: "CUSTOM_ACCESS_TOKEN" | "SEND_EMAIL", bindings = {}) {
  const { binding, fault } = failingFetcher(env.OUTBOUND!, { match: new RegExp(HOOK_URL[hook]) });
  const down = provider({
    ...bindings,
    [`AUTH_HOOK_${hook}_URL`]: HOOK_URL[hook],
    [`AUTH_HOOK_${hook}_SECRET`]: newSecret(),
    OUTBOUND: binding,
  });
  const faulty = new Browser(down);
  for (const [name, value] of browser.jar) faulty.jar.set(name, value);
  return { faulty, fault };
}

/** The form shown again for a fault: 503, `Retry-After`, the one message says to try again shortly; still the form. */
async function expectUnavailableForm(answer: Response, form: string) {
  const html = await answer.text();
  expect(answer.status).toBe(503);
  const shown = [...html.matchAll(/<div class="error" role="alert">([^<]*)<\/div>/g)].map((m) => m[1]);
  expect(shown).toEqual(["The service cannot answer right now. Try again shortly."]);
  expect(Number(answer.headers.get("retry-after"))).toBeGreaterThan(0);
  expect(html).not.toMatch(/hook|Network connection lost|Sign-in failed|\bat \S+:\d+/);
  expect(html).toContain(`action="/auth/v1/oauth2/interaction/${form}"`);
  expect(answer.headers.get("content-security-policy")).toMatch(/default-src 'none'/);
}

describe("a fault under the page's sign-in", () => {
  // Threat: a right password checked while a part of the platform failed (the app's CUSTOM_ACCESS_TOKEN hook, asked
  // once the password was found right), answered as a refused one: no Retry-After and the API's English message, or
  // "Sign-in failed." under AUTH_CONCEAL_ERRORS: the person doubts a right password, tries others, and spends their
  // lockout count.
  it.each([
    ["shown", "false"],
    ["concealed", "true"],
  ])(
    "errors %s: a fault after a right password is a 503 with Retry-After that says to try again; the retry signs in",
    async (_, conceal) => {
      const healthy = provider({ AUTH_CONCEAL_ERRORS: conceal });
      const client = await newClient(healthy);
      const { user } = await signUp(healthy);
      const browser = new Browser(healthy);
      const { requestId } = await startAt(browser, client);
      const { faulty, fault } = withHookDown(browser, "CUSTOM_ACCESS_TOKEN", {
        AUTH_CONCEAL_ERRORS: conceal,
      });
      const failed = await faulty.post("/oauth2/interaction/sign-in", {
        request_id: requestId,
        email: user.email,
        password: PASSWORD,
      });
      expect(fault.failures).toBe(1);
      await expectUnavailableForm(failed, "sign-in");
      expect(faulty.signedIn).toBe(false);
      await signIn(browser, requestId, user.email);
      expect(browser.signedIn).toBe(true);
    },
  );

  // Threat: a magic link that could not be mailed (the app's SEND_EMAIL hook unreachable) answered "Check your email":
  // the person waits for a mail that never comes, with nothing saying to try again.
  it("a link that could not be mailed is a 503 with Retry-After that says to try again, not 'check your email'", async () => {
    const LINKS = { AUTH_EMAIL_PASSWORDLESS_ENABLED: "true" };
    const links = provider(LINKS);
    const client = await newClient(links);
    const email = uniqueEmail("link-fault");
    const browser = new Browser(links);
    const { requestId } = await startAt(browser, client);
    const { faulty, fault } = withHookDown(browser, "SEND_EMAIL", LINKS);
    const failed = await faulty.post("/oauth2/interaction/email-link", { request_id: requestId, email });
    expect(fault.failures).toBe(1);
    await expectUnavailableForm(failed, "email-link");
    expect(await mailbox(links, email)).toEqual([]);
    const sent = await browser.post("/oauth2/interaction/email-link", { request_id: requestId, email });
    expect(sent.status).toBe(200);
    expect(await sent.text()).toContain("Check your email");
    expect(await mailbox(links, email)).toHaveLength(1);
  });
});
