// The built-in page for people who cannot sign in yet: create an account, reset a forgotten password, have the
// confirmation mail sent again, and the page's languages. Every mailed link comes back to the page, in the browser
// that asked (login CSRF is covered for links in login-page.test.ts; the same binding applies here).
import { env } from "cloudflare:test";
import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import { describe, expect, it } from "vitest";
import { totpCode, totpStep } from "../../src/auth/mfa/totp";
import { mailbox, PASSWORD, service, signUp, uniqueEmail, verifyPath } from "../helpers";
import { HOOK_URL, newSecret } from "../hooks/support";
import { FAKE_PROVIDERS } from "../providers/support";
import { failingFetcher } from "../support/faults";
import { Browser } from "./page-browser";
import { authorize, location, newClient, provider, requestIdOf } from "./support";

const VERIFYING = { AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "true" };

async function startAt(
  browser: Browser,
  params: Record<string, string> = {},
  headers?: Record<string, string>,
) {
  const client = await newClient(browser.svc);
  const response = await authorize(browser.svc, client, params);
  const requestId = await requestIdOf(response);
  const pageUrl = location(response).toString();
  const page = await browser.svc.request("GET", pageUrl.replace(/^.*\/auth\/v1/, ""), { headers });
  return { requestId, page, pageUrl };
}

/** Follows a mailed link through /verify to the page, in `browser`. */
async function followMail(browser: Browser, to: string) {
  const [mail] = await mailbox(browser.svc, to);
  expect(mail, `a mail to ${to}`).toBeDefined();
  const verified = await browser.svc.request("GET", verifyPath(mail!));
  const landing = location(verified);
  expect(landing.pathname).toBe("/auth/v1/oauth2/interaction");
  return browser.get(landing.toString());
}

describe("creating an account on the page", () => {
  it("links to sign-up and reset from the sign-in form; no sign-up link when sign-up is off", async () => {
    const { page } = await startAt(new Browser(provider()));
    const text = await page.text();
    expect(text).toMatch(/href="[^"]*view=sign-up"/);
    expect(text).toMatch(/href="[^"]*view=reset"/);
    const closed = await (await startAt(new Browser(provider({ AUTH_DISABLE_SIGNUP: "true" })))).page.text();
    expect(closed).not.toContain("view=sign-up");
  });

  it("without verification required: the new account is signed in and the request goes on to consent", async () => {
    const browser = new Browser(provider());
    const { requestId } = await startAt(browser);
    const email = uniqueEmail("page-signup");
    const created = await browser.post("/oauth2/interaction/sign-up", {
      request_id: requestId,
      email,
      password: PASSWORD,
      displayName: "Mary Jackson",
    });
    expect(created.status).toBe(303);
    expect(browser.signedIn).toBe(true);
    const consent = await browser.get(location(created).toString());
    expect(await consent.text()).toContain(email);
  });

  it("with verification required: the confirmation link comes back to the page, signed in, in this browser only", async () => {
    const svc = provider(VERIFYING);
    const browser = new Browser(svc);
    const { requestId } = await startAt(browser);
    const email = uniqueEmail("page-verify");
    const created = await browser.post("/oauth2/interaction/sign-up", {
      request_id: requestId,
      email,
      password: PASSWORD,
    });
    expect(created.status).toBe(200);
    expect(await created.text()).toContain("to confirm the address");
    expect(browser.signedIn).toBe(false);
    // Another browser opening the link signs no one in (the link is bound to the browser that asked).
    const [mail] = await mailbox(svc, email);
    const landing = location(await svc.request("GET", verifyPath(mail!)));
    const stranger = await new Browser(svc).get(landing.toString());
    expect(await stranger.text()).toContain("asked for in another browser");
    const landed = await followMailAgain(browser, landing);
    expect(landed.status).toBe(303);
    expect(browser.signedIn).toBe(true);
  });

  it("says why a sign-up is refused: a taken address, a short password, sign-up switched off", async () => {
    const svc = provider();
    const browser = new Browser(svc);
    const { requestId } = await startAt(browser);
    const taken = uniqueEmail("page-taken");
    await signUp(service({ AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "false" }), taken);
    const inUse = await browser.post("/oauth2/interaction/sign-up", {
      request_id: requestId,
      email: taken,
      password: PASSWORD,
    });
    expect(inUse.status).toBe(400);
    expect(await inUse.text()).toContain("exists already");
    const short = await browser.post("/oauth2/interaction/sign-up", {
      request_id: requestId,
      email: uniqueEmail("page-short"),
      password: "short",
    });
    expect(short.status).toBe(400);
    expect(await short.text()).toContain("too short");
    const off = new Browser(provider({ AUTH_DISABLE_SIGNUP: "true" }));
    const { requestId: offId } = await startAt(off);
    const refused = await off.post("/oauth2/interaction/sign-up", {
      request_id: offId,
      email: uniqueEmail("page-off"),
      password: PASSWORD,
    });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain("cannot be created");
  });
});

/** The landing URL again, in `browser` (the mail was read once already). */
const followMailAgain = (browser: Browser, landing: URL) => browser.get(landing.toString());

describe("a forgotten password on the page", () => {
  it("the reset link comes back to the page, which asks for the new password and goes on with the request", async () => {
    const svc = provider();
    const email = uniqueEmail("page-reset");
    await signUp(service({ AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "false" }), email);
    const browser = new Browser(svc);
    const { requestId } = await startAt(browser);
    const view = await browser.get(`/oauth2/interaction?request_id=${requestId}&view=reset`);
    expect(await view.text()).toContain("Reset your password");
    const sent = await browser.post("/oauth2/interaction/reset", { request_id: requestId, email });
    expect(sent.status).toBe(200);
    const sentText = await sent.text();
    // The same answer for an address without an account.
    const nobody = uniqueEmail("nobody");
    const unknown = await browser.post("/oauth2/interaction/reset", { request_id: requestId, email: nobody });
    const unnonced = (text: string) => text.replace(/nonce="[^"]+"/g, "");
    expect(unnonced((await unknown.text()).replace(nobody, email))).toBe(unnonced(sentText));
    const landed = await followMail(browser, email);
    expect(landed.status).toBe(200);
    expect(await landed.text()).toContain("Choose a new password");
    expect(browser.signedIn).toBe(true);
    const tooShort = await browser.post("/oauth2/interaction/new-password", {
      request_id: requestId,
      password: "short",
    });
    expect(tooShort.status).toBe(400);
    const saved = await browser.post("/oauth2/interaction/new-password", {
      request_id: requestId,
      password: "a new and longer passphrase",
    });
    expect(saved.status).toBe(303);
    const signIn = (password: string) => svc.post("/signin/email-password", { email, password });
    expect((await signIn("a new and longer passphrase")).status).toBe(200);
    expect((await signIn(PASSWORD)).status).toBe(401);
  });

  // Threat: an older page session (a shared computer) setting a password without knowing the current one.
  it("the new-password form needs a reset that just landed: without a page session it is refused", async () => {
    const browser = new Browser(provider());
    const { requestId } = await startAt(browser);
    const refused = await browser.post("/oauth2/interaction/new-password", {
      request_id: requestId,
      password: "whatever it is 123",
    });
    expect(refused.status).toBe(401);
    expect(await refused.text()).toContain("no longer valid");
  });
});

describe("an unverified address on the page", () => {
  it("says so and offers to send the confirmation mail again, which comes back to the page", async () => {
    const svc = provider(VERIFYING);
    const email = uniqueEmail("page-unverified");
    await service(VERIFYING).post("/signup/email-password", { email, password: PASSWORD });
    const browser = new Browser(svc);
    const { requestId } = await startAt(browser);
    const refused = await browser.post("/oauth2/interaction/sign-in", {
      request_id: requestId,
      email,
      password: PASSWORD,
    });
    expect(refused.status).toBe(401);
    const text = await refused.text();
    expect(text).toContain("Confirm your email address first");
    expect(text).toContain("/oauth2/interaction/resend-verification");
    const before = (await mailbox(svc, email)).length;
    const resent = await browser.post("/oauth2/interaction/resend-verification", {
      request_id: requestId,
      email,
    });
    expect(resent.status).toBe(200);
    const mails = await mailbox(svc, email);
    expect(mails.length).toBe(before + 1);
    const landing = location(await svc.request("GET", verifyPath(mails[0]!)));
    expect(landing.searchParams.get("browser")).toBeTruthy();
    expect((await browser.get(landing.toString())).status).toBe(303);
    expect(browser.signedIn).toBe(true);
  });
});

describe("the page's languages", () => {
  it("speaks the browser's language (French, German), else English", async () => {
    const french = await (
      await startAt(new Browser(provider()), {}, { "accept-language": "fr-CH, fr;q=0.9, en;q=0.8" })
    ).page.text();
    expect(french).toContain('<html lang="fr">');
    expect(french).toContain("Mot de passe oublié");
    const german = await (
      await startAt(new Browser(provider()), {}, { "accept-language": "de" })
    ).page.text();
    expect(german).toContain("Passwort vergessen?");
    // Languages the service does not ship (ja and es are shipped since issue 34: test/i18n/page-languages.test.ts).
    const other = await (
      await startAt(new Browser(provider()), {}, { "accept-language": "ko, it;q=0.5" })
    ).page.text();
    expect(other).toContain('<html lang="en">');
  });

  it("ui_locales of the authorization request wins over the browser's language", async () => {
    const { page } = await startAt(
      new Browser(provider()),
      { ui_locales: "de fr" },
      { "accept-language": "fr" },
    );
    expect(await page.text()).toContain('<html lang="de">');
  });
});

describe("Turnstile on the page", () => {
  const GUARDED = {
    AUTH_TURNSTILE_SECRET: "turnstile-secret",
    AUTH_TURNSTILE_VERIFY_URL: "https://turnstile.fake/siteverify",
    AUTH_TURNSTILE_ENDPOINTS: "signup,signin",
  };

  it("shows the widget in the guarded forms only with a site key, and allows Cloudflare's origin only then", async () => {
    const svc = provider({ ...GUARDED, AUTH_TURNSTILE_SITE_KEY: "0x4AAAAAAAtestsitekey" });
    const browser = new Browser(svc);
    const { requestId, page } = await startAt(browser);
    expect(await page.text()).toContain('data-sitekey="0x4AAAAAAAtestsitekey" data-action="signin"');
    const csp = page.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'nonce-");
    expect(csp).toContain("https://challenges.cloudflare.com");
    expect(csp).toMatch(/frame-src https:\/\/challenges\.cloudflare\.com/);
    const signUpView = await browser.get(`/oauth2/interaction?request_id=${requestId}&view=sign-up`);
    expect(await signUpView.text()).toContain('data-action="signup"');
    const reset = await browser.get(`/oauth2/interaction?request_id=${requestId}&view=reset`);
    expect(await reset.text()).not.toContain("cf-turnstile");
    expect(reset.headers.get("content-security-policy")).not.toContain("challenges.cloudflare.com");
  });

  it("a guarded page form needs the widget's token, checked like the API's header", async () => {
    const svc = provider({ ...GUARDED, AUTH_TURNSTILE_SITE_KEY: "0x4AAAAAAAtestsitekey" });
    const browser = new Browser(svc);
    const { requestId } = await startAt(browser);
    const email = uniqueEmail("page-turnstile");
    const missing = await browser.post("/oauth2/interaction/sign-up", {
      request_id: requestId,
      email,
      password: PASSWORD,
    });
    expect(missing.status).toBe(400);
    expect(await missing.text()).toContain("Confirm that you are a person");
    const wrongAction = await browser.post("/oauth2/interaction/sign-up", {
      request_id: requestId,
      email,
      password: PASSWORD,
      "cf-turnstile-response": `pass:localhost:signin:${crypto.randomUUID()}`,
    });
    expect(wrongAction.status).toBe(403);
    const created = await browser.post("/oauth2/interaction/sign-up", {
      request_id: requestId,
      email,
      password: PASSWORD,
      "cf-turnstile-response": `pass:localhost:signup:${crypto.randomUUID()}`,
    });
    expect(created.status).toBe(303);
  });
});

describe("continuing with an external provider on the page (identity brokering)", () => {
  it("the provider's way back lands on the page in this browser and goes on with the request", async () => {
    const svc = provider(FAKE_PROVIDERS);
    const browser = new Browser(svc);
    const { requestId, page } = await startAt(browser);
    expect(await page.text()).toContain("Continue with GitHub");
    // Browsers hold a form post's whole redirect chain to form-action: the provider's origin must be in it.
    expect(page.headers.get("content-security-policy")).toMatch(
      /form-action 'self'[^;]* https:\/\/github\.fake/,
    );
    const toProvider = await browser.post("/oauth2/interaction/provider", {
      request_id: requestId,
      provider: "github",
    });
    expect(toProvider.status).toBe(303);
    const start = location(toProvider);
    expect(start.pathname).toBe("/auth/v1/signin/provider/github");
    const atProvider = location(await browser.get(start.toString()));
    const email = uniqueEmail("broker");
    for (const [name, value] of Object.entries({
      fake_id: String(Math.floor(Math.random() * 1e9)),
      fake_email: email,
      fake_verified: "true",
    }))
      atProvider.searchParams.set(name, value);
    const callback = location(await env.OUTBOUND!.fetch(atProvider.toString(), { redirect: "manual" }));
    const back = location(await browser.get(callback.toString()));
    expect(back.pathname).toBe("/auth/v1/oauth2/interaction");
    // Threat (login CSRF): the way back opened in another browser signs no one in.
    const stranger = new Browser(svc);
    expect(await (await stranger.get(back.toString())).text()).toContain("asked for in another browser");
    const landed = await browser.get(back.toString());
    expect(landed.status).toBe(303);
    expect(browser.signedIn).toBe(true);
    const consent = await browser.get(location(landed).toString());
    expect(await consent.text()).toContain(email);
  });

  it("an unknown or disabled provider posts back to the page; a provider's refusal shows on it", async () => {
    const svc = provider(FAKE_PROVIDERS);
    const browser = new Browser(svc);
    const { requestId } = await startAt(browser);
    const unknown = await browser.post("/oauth2/interaction/provider", {
      request_id: requestId,
      provider: "myspace",
    });
    expect(location(unknown).pathname).toBe("/auth/v1/oauth2/interaction");
    const start = location(
      await browser.post("/oauth2/interaction/provider", { request_id: requestId, provider: "github" }),
    );
    const atProvider = location(await browser.get(start.toString()));
    atProvider.searchParams.set("fake_deny", "1");
    const callback = location(await env.OUTBOUND!.fetch(atProvider.toString(), { redirect: "manual" }));
    const back = location(await browser.get(callback.toString()));
    const page = await browser.get(back.toString());
    expect(await page.text()).toContain("Signing in with that provider did not work");
    expect(browser.signedIn).toBe(false);
  });
});

describe("what the page says when it refuses", () => {
  it("a disabled account says so (and offers no way around it)", async () => {
    const svc = provider();
    const session = await signUp(svc);
    const disabled = await svc.request("PATCH", `/admin/users/${session.user.id}`, {
      json: { disabled: true },
      headers: { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) },
    });
    expect(disabled.status).toBe(200);
    const browser = new Browser(svc);
    const { requestId } = await startAt(browser);
    const refused = await browser.post("/oauth2/interaction/sign-in", {
      request_id: requestId,
      email: session.user.email,
      password: PASSWORD,
    });
    expect(refused.status).toBe(401);
    const text = await refused.text();
    expect(text).toContain("This account is disabled.");
    expect(text).not.toContain("resend-verification");
    expect(browser.signedIn).toBe(false);
  });

  // A sign-up and up to eight sign-ins, each an argon2id hash: ~0.5 s on a quiet machine, 1.2 s on a busy one.
  it("the second-factor guess cap: the code form again, with how long to wait", async () => {
    const mfa = provider({ AUTH_MFA_ENABLED: "true" });
    const session = await signUp(mfa);
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
    const { requestId } = await startAt(browser);
    let status = 0;
    let text = "";
    for (let attempt = 0; attempt < 8 && status !== 429; attempt++) {
      const signedIn = await browser.post("/oauth2/interaction/sign-in", {
        request_id: requestId,
        email: session.user.email,
        password: PASSWORD,
      });
      const ticket = /name="ticket" value="([^"]+)"/.exec(await signedIn.text())![1]!;
      const answer = await browser.post("/oauth2/interaction/mfa", {
        request_id: requestId,
        ticket,
        otp: "000000",
      });
      status = answer.status;
      text = await answer.text();
    }
    expect(status).toBe(429);
    expect(text).toMatch(/Too many wrong codes\. Try again in \d+ seconds\./);
    expect(text).toContain('name="otp"');
  }, 15_000);

  it("passkeys: the email field offers them as autofill (conditional mediation), started on its first focus", async () => {
    const { page } = await startAt(new Browser(provider({ AUTH_WEBAUTHN_ENABLED: "true" })));
    const text = await page.text();
    expect(text).toContain('autocomplete="username webauthn"');
    expect(text).toContain('signIn("conditional")');
    expect(text).toMatch(/addEventListener\(\s*"focus"/);
  });
});

/** A browser on `svc` holding `browser`'s cookies: the same person's next post, on a deployment where a part fails. */
function sameBrowserOn(browser: Browser, svc: ReturnType<typeof provider>) {
  const faulty = new Browser(svc);
  for (const [name, value] of browser.jar) faulty.jar.set(name, value);
  return faulty;
}

/** The form shown again for a fault: 503, `Retry-After`, the one message says to try again; still the form. */
async function expectUnavailableForm(answer: Response, form: string, words: string) {
  const html = await answer.text();
  expect(answer.status).toBe(503);
  const shown = [...html.matchAll(/<div class="error" role="alert">([^<]*)<\/div>/g)].map((m) => m[1]);
  expect(shown).toEqual([words]);
  expect(Number(answer.headers.get("retry-after"))).toBeGreaterThan(0);
  expect(html).not.toMatch(/hook|siteverify|Network connection lost|\bat \S+:\d+/);
  expect(html).toContain(`action="/auth/v1/oauth2/interaction/${form}"`);
  expect(answer.headers.get("content-security-policy")).toMatch(/default-src 'none'/);
}

describe("a fault under the page's account forms", () => {
  // Threat: a sign-up met by a fault (the app's BEFORE_USER_CREATED hook unreachable: 503 `service-unavailable`,
  // src/hooks/call.ts) answered with the API's English message whatever the page's language, and no Retry-After: the
  // person reads it as a refusal of their address or password, and gives up or changes them.
  it("a sign-up under a fault is a 503 with Retry-After that says to try again; the retry creates the account", async () => {
    const healthy = provider();
    const browser = new Browser(healthy);
    const { requestId } = await startAt(browser);
    const email = uniqueEmail("page-signup-fault");
    const { binding, fault } = failingFetcher(env.OUTBOUND!, { match: /before-user-created/ });
    const down = provider({
      AUTH_HOOK_BEFORE_USER_CREATED_URL: HOOK_URL.BEFORE_USER_CREATED,
      AUTH_HOOK_BEFORE_USER_CREATED_SECRET: newSecret(),
      OUTBOUND: binding,
    });
    const failed = await sameBrowserOn(browser, down).post("/oauth2/interaction/sign-up", {
      request_id: requestId,
      email,
      password: PASSWORD,
    });
    expect(fault.failures).toBe(1);
    await expectUnavailableForm(failed, "sign-up", "The service cannot answer right now. Try again shortly.");
    const created = await browser.post("/oauth2/interaction/sign-up", {
      request_id: requestId,
      email,
      password: PASSWORD,
    });
    expect(created.status).toBe(303);
    expect(browser.signedIn).toBe(true);
  });

  // Threat: a reset asked for while Turnstile's siteverify cannot be reached, answered without Retry-After: nothing
  // tells the person (or a client) when to try again, and no "sent" page may claim a mail that was never asked for.
  it("a reset under a fault is a 503 with Retry-After, the form again; the retry sends the link", async () => {
    const healthy = provider();
    const email = uniqueEmail("page-reset-fault");
    await signUp(service({ AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "false" }), email);
    const browser = new Browser(healthy);
    const { requestId } = await startAt(browser);
    const down = provider({
      AUTH_TURNSTILE_SECRET: "turnstile-secret",
      AUTH_TURNSTILE_SITE_KEY: "0x4AAAAAAAtestsitekey",
      AUTH_TURNSTILE_VERIFY_URL: "https://turnstile.fake/down/siteverify",
      AUTH_TURNSTILE_ENDPOINTS: "password-reset",
    });
    const failed = await sameBrowserOn(browser, down).post("/oauth2/interaction/reset", {
      request_id: requestId,
      email,
      "cf-turnstile-response": `pass:localhost:password-reset:${crypto.randomUUID()}`,
    });
    // Turnstile's own words: it was the check that could not be done, not the reset.
    const words = "The check that you are a person cannot be done right now. Try again in a moment.";
    await expectUnavailableForm(failed, "reset", words);
    expect(await mailbox(healthy, email)).toEqual([]);
    const sent = await browser.post("/oauth2/interaction/reset", { request_id: requestId, email });
    expect(sent.status).toBe(200);
    expect(await sent.text()).toContain("Check your email");
  });
});
