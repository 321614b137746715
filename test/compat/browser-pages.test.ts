// The pages people see, in Chromium (Debian's, headless): the sign-in page's ways in (create an account, forgot
// password with Turnstile's widget slot, continue with GitHub, keyboard only), then every page checked with axe-core
// at 1280 and 390 px wide, with no sideways scrolling at 390: those of signing in and the console, then those of
// step-up, the account choice, incremental consent and logout (contract §12), each reached the way a relying party
// leads a person there. PAGES_SCREENSHOTS=<dir> keeps a screenshot of each.
import { mkdirSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import * as oidc from "openid-client";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { totpCode, totpStep } from "../../src/auth/mfa/totp";
import { expectAccessible, expectNoSidewaysScroll } from "./axe";
import { HEADLESS_SHELL as CHROMIUM, canRun, launch } from "./chromium";
import {
  authUrl,
  mailedLink,
  PASSWORD,
  serverUrl,
  turnstileToken,
  uniqueEmail,
  verifiedUser,
} from "./client";
import type { PageGlobals } from "./page-globals";
import { authorizationRequest, discover, pendingRequestOf, registerClient } from "./relying-party";
import { addVirtualAuthenticator } from "./virtual-authenticator";

const runs = canRun(CHROMIUM);
const screenshots = process.env.PAGES_SCREENSHOTS;
const fakeProviders = inject("fakeProviders");

/**
 * The relying party: a loopback server where the browser comes back with a code (and after logout), and its
 * openid-client setup. `request` builds an authorization request with its checks, for the code exchange.
 */
async function relyingParty() {
  const app = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/html" });
    response.end("<!doctype html><html lang=en><title>Acme Notes</title><main>back at the app</main></html>");
  });
  await new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve));
  const appOrigin = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  const redirectUri = `${appOrigin}/callback`;
  const postLogoutRedirectUri = `${appOrigin}/signed-out`;
  const registered = await registerClient({
    clientName: "Acme Notes",
    redirectUris: [redirectUri],
    postLogoutRedirectUris: [postLogoutRedirectUri],
    scopes: ["openid", "profile", "email", "offline_access"],
  });
  const config = await discover(registered, oidc.ClientSecretBasic(registered.clientSecret));
  const request = (scope = "openid email profile", extra: Record<string, string> = {}) =>
    authorizationRequest(config, redirectUri, scope, extra);
  const start = async () => (await request()).url.toString();
  return {
    app,
    appOrigin,
    redirectUri,
    postLogoutRedirectUri,
    clientId: registered.clientId,
    config,
    request,
    start,
  };
}

async function shoot(page: Page, name: string) {
  if (!screenshots) return;
  mkdirSync(screenshots, { recursive: true });
  await page.screenshot({ path: join(screenshots, `${name}.png`), fullPage: true });
}

/**
 * The user turns TOTP on in their app (contract §3.2: `GET /mfa/totp/generate`, then `POST /user/mfa` with a code);
 * the code their authenticator app shows next (a code is accepted once), for the page.
 */
async function turnOnTotp(accessToken: string): Promise<string> {
  const headers = { authorization: `Bearer ${accessToken}`, "content-type": "application/json" };
  const generated = await fetch(`${authUrl}/mfa/totp/generate`, { headers });
  expect(generated.status).toBe(200);
  const secret = decodeBase32IgnorePadding(((await generated.json()) as { totpSecret: string }).totpSecret);
  const step = totpStep(Date.now());
  const activated = await fetch(`${authUrl}/user/mfa`, {
    method: "POST",
    headers,
    body: JSON.stringify({ code: totpCode(secret, step), activeMfaType: "totp" }),
  });
  expect(activated.status).toBe(200);
  return totpCode(secret, step + 1n);
}

/**
 * The user adds a passkey in their app: the API of the page's origin (the WebAuthn RP's), with the virtual
 * authenticator of the page's context. The test's tsconfig has no DOM types, so the browser-side code is a string.
 */
async function addPasskey(page: Page, accessToken: string): Promise<void> {
  const added = await page.evaluate(`(async (token) => {
    const call = async (path, body) => {
      const response = await fetch("/auth/v1" + path, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer " + token },
        body: JSON.stringify(body),
      });
      return response.json();
    };
    const options = await call("/user/webauthn/add", {});
    const credential = await navigator.credentials.create({
      publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options),
    });
    return call("/user/webauthn/verify", { credential: credential.toJSON(), nickname: "laptop" });
  })(${JSON.stringify(accessToken)})`);
  expect(added).toMatchObject({ nickname: "laptop" });
}

const ACR_MFA = "urn:edge-auth:acr:mfa";
const ACR_PHR = "urn:edge-auth:acr:phr";

describe.skipIf(!runs)("the sign-in page's ways in, in Chromium", () => {
  let browser: Browser;
  let rp: Awaited<ReturnType<typeof relyingParty>>;
  beforeAll(async () => {
    browser = await launch(CHROMIUM);
    rp = await relyingParty();
  });
  afterAll(async () => {
    await browser?.close();
    rp?.app.close();
  });

  async function freshPage(width = 1280) {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    const blocked: string[] = [];
    page.on("console", (message) => {
      if (/Content Security Policy/i.test(message.text())) blocked.push(message.text());
    });
    return { context, page, blocked };
  }

  /** Allows on the consent screen and returns the code the app received. */
  async function allowAndReturn(page: Page): Promise<URL> {
    await page.waitForSelector("ul.scopes");
    await page.click("button[value=allow]");
    await page.waitForURL((url) => url.toString().startsWith(rp.redirectUri));
    const back = new URL(page.url());
    expect(back.searchParams.get("code")).toBeTruthy();
    return back;
  }

  it("creates an account: the confirmation link opened in the same browser comes back signed in, then consent and the app", async () => {
    const { context, page, blocked } = await freshPage();
    await page.goto(await rp.start());
    await page.click("text=Create an account");
    await page.waitForSelector("h1:has-text('Create an account')");
    const email = uniqueEmail("page-signup");
    await page.fill("#email", email);
    await page.fill("#display-name", "Dorothy Vaughan");
    await page.fill("#new-password", PASSWORD);
    await page.click("button:has-text('Create account')");
    await page.waitForSelector("text=to confirm the address");
    await shoot(page, "sign-up-sent");
    await page.goto((await mailedLink(email)).toString());
    await allowAndReturn(page);
    expect(blocked).toEqual([]);
    await context.close();
  });

  it("resets a forgotten password through Turnstile's widget slot, then chooses the new password on the page", async () => {
    const { email } = await verifiedUser("page-reset");
    const { context, page, blocked } = await freshPage();
    await page.goto(await rp.start());
    await page.click("text=Forgot your password?");
    await page.waitForSelector("h1:has-text('Reset your password')");
    // The widget's slot, for the endpoint's action; Cloudflare's script cannot load offline, so the token the widget
    // would put into the form is put there by the test.
    expect(await page.getAttribute(".cf-turnstile", "data-action")).toBe("password-reset");
    await page.fill("#email", email);
    await page.evaluate((token) => {
      const { document } = globalThis as unknown as PageGlobals;
      const input = document.createElement("input");
      input.type = "hidden";
      input.name = "cf-turnstile-response";
      input.value = token;
      document.querySelector("form")!.append(input);
    }, turnstileToken("password-reset"));
    await page.click("button:has-text('Send the link')");
    await page.waitForSelector("h1:has-text('Check your email')");
    await page.goto((await mailedLink(email)).toString());
    await page.waitForSelector("h1:has-text('Choose a new password')");
    await shoot(page, "new-password");
    await page.fill("#new-password", "an entirely new passphrase");
    await page.click("button:has-text('Save and continue')");
    await allowAndReturn(page);
    const signIn = await fetch(`${authUrl}/signin/email-password`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password: "an entirely new passphrase" }),
    });
    expect(signIn.status).toBe(200);
    // Cloudflare's script was refused by nothing but the network: the CSP allowed its origin on this page.
    expect(blocked).toEqual([]);
    await context.close();
  });

  it("continues with GitHub: the provider's way back lands on the page in this browser, then consent and the app", async () => {
    const email = uniqueEmail("page-github");
    await fetch(`${fakeProviders}/__next-person`, {
      method: "POST",
      body: JSON.stringify({ fake_id: String(Date.now()), fake_email: email }),
    });
    const { context, page } = await freshPage();
    await page.goto(await rp.start());
    await page.click("button:has-text('Continue with GitHub')");
    await allowAndReturn(page);
    await context.close();
  });

  it("works with the keyboard alone: Tab through the sign-in form, Enter to sign in, Tab to Allow", async () => {
    const { email } = await verifiedUser("page-keyboard");
    const { context, page } = await freshPage();
    await page.goto(await rp.start());
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).document.activeElement?.id)).toBe(
      "email",
    );
    await page.keyboard.type(email);
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).document.activeElement?.id)).toBe(
      "password",
    );
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press("Tab");
    expect(
      await page.evaluate(() => (globalThis as unknown as PageGlobals).document.activeElement?.textContent),
    ).toBe("Sign in");
    await page.keyboard.press("Enter");
    await page.waitForSelector("ul.scopes");
    // Deny, then Allow: the consent form's buttons in reading order.
    for (
      let i = 0;
      i < 5 &&
      (await page.evaluate(
        () => (globalThis as unknown as PageGlobals).document.activeElement?.textContent,
      )) !== "Allow";
      i++
    ) {
      await page.keyboard.press("Tab");
    }
    expect(
      await page.evaluate(() => (globalThis as unknown as PageGlobals).document.activeElement?.textContent),
    ).toBe("Allow");
    await page.keyboard.press("Enter");
    await page.waitForURL((url) => url.toString().startsWith(rp.redirectUri));
    await context.close();
  });

  // The pages of signing in, in every language, are checked by browser-languages.test.ts; these are the operator's.
  // This test and the next run at once (each in contexts of its own, with users of its own): most of either is axe
  // and Chromium drawing, which a second core shares.
  it.concurrent("the console and the reference pass axe (no serious or critical violation) at 1280 and 390 px, and fit 390 px without sideways scrolling", async () => {
    const { email } = await verifiedUser("page-axe");
    const adminSecret = inject("adminSecret");
    for (const width of [1280, 390]) {
      const context = await browser.newContext({ viewport: { width, height: 900 }, bypassCSP: true });
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      const check = async (name: string) => {
        await shoot(page, `${name}-${width}`);
        await expectAccessible(page, `${name} at ${width}px`);
        if (width === 390) await expectNoSidewaysScroll(page, name);
      };
      await page.goto(`${authUrl}/admin/console`);
      await check("console-sign-in");
      await page.fill("#secret", adminSecret);
      await page.click("button[type=submit]");
      await page.waitForSelector("h1:has-text('Overview')");
      await check("console-overview");
      await page.goto(`${authUrl}/admin/console/users`);
      await page.waitForSelector("h1:has-text('Users')");
      await check("console-users");
      await page.click(`a:has-text('${email}')`);
      await page.waitForSelector("h2:has-text('Edit')");
      await check("console-user");
      for (const [path, name] of [
        ["/clients", "console-clients"],
        ["/storage", "console-storage"],
        ["/storage/default", "console-bucket"],
        ["/audit", "console-audit"],
        ["/keys", "console-keys"],
        ["/brand", "console-brand"],
      ]) {
        await page.goto(`${authUrl}/admin/console${path}`);
        await check(name!);
      }
      // The whole reference fits 390 px; axe reads the operations of one search, each opened. On the whole page axe
      // took 21 s at 1280 px and 7.5 s at 390 (walking every operation of the API), most of a minute of Chromium,
      // while the operations' contents sat in closed <details>, which axe passes over as hidden: one search's few
      // operations, opened, are the same template with its contents checked too.
      await page.goto(`${authUrl}/reference`);
      if (width === 390) await expectNoSidewaysScroll(page, "reference");
      await page.goto(`${authUrl}/reference?q=${encodeURIComponent("email-password")}`);
      expect(await page.locator("details.operation").count()).toBeGreaterThanOrEqual(2);
      await page.evaluate(() => {
        const { document } = globalThis as unknown as PageGlobals;
        for (const details of document.querySelectorAll("details")) details.setAttribute("open", "");
      });
      await check("reference-opened");
      await context.close();
    }
  }, 120_000);

  // The account choice, the password re-authentication, the logout question (English and German) and the signed-out
  // page are also pages of browser-languages.test.ts, which checks them in the same state (a password-only user) with
  // the same axe at both widths and the 390 px fit, in three languages and with `<html lang>`: they are checked there
  // only; this test still goes through them and asserts what they do.
  it.concurrent("the pages of step-up, account choice, incremental consent and logout pass axe at 1280 and 390 px, fit 390 px, in English and French", async () => {
    // WebAuthn needs a host name for its RP ID (localhost), not 127.0.0.1: the page is opened under that name, and
    // its forms post to whichever origin served it. The relying party's request goes through the authorization
    // endpoint as usual; the browser follows it to the page.
    const origin = `http://localhost:${new URL(serverUrl).port}`;
    const pageFor = async (request: { url: URL }) =>
      `${origin}/auth/v1/oauth2/interaction?request_id=${await pendingRequestOf(request.url)}`;
    const logoutUrl = (params: Record<string, string>) =>
      `${origin}/auth/v1/oauth2/logout?${new URLSearchParams(params)}`;
    for (const width of [1280, 390]) {
      const context = await browser.newContext({ viewport: { width, height: 900 }, bypassCSP: true });
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      await addVirtualAuthenticator(context, page);
      const check = async (name: string) => {
        await shoot(page, `${name}-${width}`);
        await expectAccessible(page, `${name} at ${width}px`);
        if (width === 390) await expectNoSidewaysScroll(page, name);
      };
      const backAtApp = async (path = "/callback") => {
        await page.waitForURL((url) => url.toString().startsWith(`${rp.appOrigin}${path}`));
        return new URL(page.url());
      };
      const lang = () => page.getAttribute("html", "lang");
      const user = await verifiedUser(`page-steps-${width}`);

      // Signed in on the page with the password, and "openid email" allowed.
      await page.goto(await pageFor(await rp.request("openid email")));
      await page.fill("#email", user.email);
      await page.fill("#password", PASSWORD);
      await page.click("button:has-text('Sign in')");
      await allowAndReturn(page);

      // Incremental consent: the client comes back with a wider scope; the new scopes are asked, the others apart.
      const wider = await rp.request("openid email profile offline_access");
      await page.goto(await pageFor(wider));
      await page.waitForSelector("details.granted");
      expect(await page.locator("ul.scopes").first().locator("li").allTextContents()).toEqual([
        "See your name, picture and language",
        "Stay connected when you are not using it",
      ]);
      await check("consent-incremental");
      const consented = await oidc.authorizationCodeGrant(rp.config, await allowAndReturn(page), {
        ...wider.checks,
        idTokenExpected: true,
      });
      const idToken = consented.id_token!;

      // prompt=select_account: the account signed in here, "Continue" or another account.
      await page.goto(await pageFor(await rp.request("openid email", { prompt: "select_account" })));
      await page.waitForSelector("h1:has-text('Choose an account')");
      expect(await page.textContent("main")).toContain(user.email);
      await page.click("button:has-text('Continue')");
      await backAtApp();

      // prompt=login: the same person confirms with their password (no passkey, no TOTP yet).
      await page.goto(await pageFor(await rp.request("openid email", { prompt: "login" })));
      await page.waitForSelector("#reauth-password");
      await page.fill("#reauth-password", PASSWORD);
      await page.click("button:has-text('Confirm')");
      await backAtApp();

      // A passkey asked of an account without one: the page says so, and going back tells the client why.
      await page.goto(await pageFor(await rp.request("openid email", { acr_values: ACR_PHR })));
      await page.waitForSelector("h1:has-text('A stronger sign-in is needed')");
      await check("cannot-meet");
      await page.click("button:has-text('Back to Acme Notes')");
      expect((await backAtApp()).searchParams.get("error")).toBe("unmet_authentication_requirements");

      // TOTP turned on in the app: acr mfa asks this password-only session for the code, and the ID token says mfa.
      const code = await turnOnTotp(user.accessToken);
      const mfa = await rp.request("openid email", { acr_values: ACR_MFA });
      await page.goto(await pageFor(mfa));
      await page.waitForSelector("#otp");
      await check("reauth-totp");
      await page.fill("#otp", code);
      await page.click("button:has-text('Verify')");
      const stepped = await oidc.authorizationCodeGrant(rp.config, await backAtApp(), {
        ...mfa.checks,
        idTokenExpected: true,
      });
      expect(stepped.claims()).toMatchObject({
        acr: ACR_MFA,
        amr: expect.arrayContaining(["pwd", "otp", "mfa"]),
      });

      // A passkey added in the app: acr phr asks for it, with the page's own script.
      await page.goto(`${origin}/auth/v1/oauth2/device`);
      await addPasskey(page, user.accessToken);
      await page.goto(await pageFor(await rp.request("openid email", { acr_values: ACR_PHR })));
      await page.waitForSelector("#reauth-passkey");
      await check("reauth-passkey");
      await page.click("#reauth-passkey");
      await backAtApp();

      // In French: max_age=0 asks for a sign-in made now, with a passkey or the password.
      await page.goto(await pageFor(await rp.request("openid email", { max_age: "0", ui_locales: "fr" })));
      await page.waitForSelector("#reauth-password");
      expect(await lang()).toBe("fr");
      await check("reauth-max-age-fr");
      await page.fill("#reauth-password", PASSWORD);
      await page.click("form:has(#reauth-password) button[type=submit]");
      await backAtApp();

      // Logout with a post_logout_redirect_uri the client never registered: a page, no redirect (open redirector).
      await page.goto(
        logoutUrl({ id_token_hint: idToken, post_logout_redirect_uri: "https://elsewhere.example/after" }),
      );
      await page.waitForSelector(".error");
      expect(new URL(page.url()).origin).toBe(origin);
      await check("logout-error");

      // Logout without a hint asks first (logout CSRF): in German, then in English, answered "Sign out".
      await page.goto(logoutUrl({ client_id: rp.clientId, ui_locales: "de" }));
      await page.waitForSelector("#logout-confirm");
      expect(await lang()).toBe("de");
      await page.goto(logoutUrl({ client_id: rp.clientId }));
      await page.waitForSelector("#logout-confirm");
      expect(await page.textContent("main")).toContain(user.email);
      await page.click("#logout-confirm");
      await page.waitForSelector("h1:has-text('You are signed out')");

      // Signed in again (with the passkey), then the relying party's logout with the new ID token: signed out at
      // once, back at the registered URI with `state`; the next silent request finds nobody signed in.
      const again = await rp.request("openid email");
      await page.goto(await pageFor(again));
      await page.click("#passkey");
      const signedIn = await oidc.authorizationCodeGrant(rp.config, await backAtApp(), {
        ...again.checks,
        idTokenExpected: true,
      });
      await page.goto(
        logoutUrl({
          id_token_hint: signedIn.id_token!,
          post_logout_redirect_uri: rp.postLogoutRedirectUri,
          state: "after-logout",
        }),
      );
      expect((await backAtApp("/signed-out")).searchParams.get("state")).toBe("after-logout");
      // prompt=none reads this browser's session: the authorization endpoint, opened under the page's name.
      const silent = (await rp.request("openid email", { prompt: "none" })).url;
      await page.goto(`${origin}${silent.pathname}${silent.search}`);
      expect((await backAtApp()).searchParams.get("error")).toBe("login_required");
      await context.close();
    }
  }, 180_000);

  // Contract §13: the brand set in the console shows on the sign-in page, its text colours derived for contrast. A
  // very light colour is the hard case (white text on it would fail): the page must still pass axe.
  it("the brand colour set in the console shows on the sign-in page, which stays accessible", async () => {
    const adminSecret = inject("adminSecret");
    const context = await browser.newContext({ viewport: { width: 390, height: 900 }, bypassCSP: true });
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    try {
      await page.goto(`${authUrl}/admin/console`);
      await page.fill("#secret", adminSecret);
      await page.click("button[type=submit]");
      await page.waitForSelector("h1:has-text('Overview')");
      await page.goto(`${authUrl}/admin/console/brand`);
      await page.fill("input[name=name]", "Acme Cloud");
      await page.fill("input[name=color]", "#ffeb3b");
      await page.click("form.edit button[type=submit]");
      await page.waitForSelector("text=Last saved here");
      const saved = await fetch(`${authUrl}/admin/brand`, {
        headers: { "x-hasura-admin-secret": adminSecret },
      });
      expect(await saved.json()).toMatchObject({ console: { name: "Acme Cloud", color: "#ffeb3b" } });
      // The page caches the brand for 30 s per isolate; `wrangler dev` runs one isolate, whose save cleared it.
      await page.goto(await rp.start());
      await page.waitForSelector("#password");
      const button = await page.evaluate(() => {
        const { document, getComputedStyle } = globalThis as unknown as PageGlobals & {
          document: { title: string };
          getComputedStyle: (element: unknown) => { backgroundColor: string; color: string };
        };
        const style = getComputedStyle(document.querySelector("button.primary"));
        return { background: style.backgroundColor, color: style.color, title: document.title };
      });
      expect(button.background).toBe("rgb(255, 235, 59)");
      // Black on yellow: white would be 1.2:1.
      expect(button.color).toBe("rgb(0, 0, 0)");
      expect(button.title).toContain("Acme Cloud");
      await shoot(page, "sign-in-branded-390");
      await expectAccessible(page, "the branded sign-in page");
    } finally {
      await fetch(`${authUrl}/admin/brand`, {
        method: "DELETE",
        headers: { "x-hasura-admin-secret": adminSecret },
      });
      await context.close();
    }
  });

  it("the console in Chromium: creates a user, edits their roles, exports the list as CSV, creates an OAuth2 client", async () => {
    const context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      acceptDownloads: true,
    });
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    const blocked: string[] = [];
    page.on("console", (message) => {
      if (/Content Security Policy/i.test(message.text())) blocked.push(message.text());
    });
    await page.goto(`${authUrl}/admin/console`);
    await page.fill("#secret", inject("adminSecret"));
    await page.click("button[type=submit]");
    await page.waitForSelector("h1:has-text('Overview')");
    await page.goto(`${authUrl}/admin/console/users`);
    const email = uniqueEmail("console-browser");
    await page.fill("form[action$='/users/create'] input[name=email]", email);
    await page.fill("form[action$='/users/create'] input[name=displayName]", "Christine Darden");
    await page.click("button:has-text('Create user')");
    await page.waitForSelector("text=The user is created.");
    await page.fill("input[name=roles]", "user, editor");
    await page.fill("input[name=defaultRole]", "editor");
    await page.click("form[action$='/edit'] button:has-text('Save')");
    await page.waitForSelector("text=The changes are saved.");
    expect(await page.textContent("main")).toContain("user, editor (default editor)");
    await page.goto(`${authUrl}/admin/console/users?search=${encodeURIComponent(email)}`);
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("text=Export CSV")]);
    const csv = await (await download.createReadStream()).toArray();
    expect(Buffer.concat(csv).toString()).toContain(`${email},,Christine Darden`);
    await page.goto(`${authUrl}/admin/console/clients`);
    await page.fill("input[name=clientName]", "Browser Notes");
    await page.fill("textarea[name=redirectUris]", "https://notes.example.com/cb");
    await page.click("button:has-text('Create client')");
    await page.waitForSelector("code.secret");
    expect(await page.textContent("code.secret")).toMatch(/^ocs_/);
    await shoot(page, "console-client-created");
    expect(blocked).toEqual([]);
    await context.close();
  });
});
