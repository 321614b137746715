// The built-in login and consent page in a real browser: Debian's Chromium (headless, playwright-core) signs a
// person in, shows the consent screen, and returns to the relying party with a code that openid-client exchanges.
// The relying party is a small loopback server of the test (a loopback http redirect URI is allowed, RFC 8252 §7.3).
import { mkdirSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import * as oidc from "openid-client";
import type { Browser, Page } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { HEADLESS_SHELL as CHROMIUM, canRun, launch } from "./chromium";
import { PASSWORD, serverUrl, verifiedUser } from "./client";
import { authorizationRequest, discover, registerClient } from "./relying-party";
import { addVirtualAuthenticator } from "./virtual-authenticator";

// Where screenshots of the page go when asked (OAUTH2_SCREENSHOTS=<dir>), for a person to look at.
const screenshots = process.env.OAUTH2_SCREENSHOTS;

const runs = canRun(CHROMIUM);

async function relyingParty(redirectUri: string) {
  const registered = await registerClient({
    clientName: "Acme Notes",
    redirectUris: [redirectUri],
    scopes: ["openid", "profile", "email", "offline_access", "graphql"],
  });
  return discover(registered, oidc.ClientSecretBasic(registered.clientSecret));
}

/** The relying party's own web server on loopback: where the browser comes back with a code or an error. */
async function appServer() {
  const app = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/html" });
    response.end("<!doctype html><title>Acme Notes</title>back at the app");
  });
  await new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve));
  const redirectUri = `http://127.0.0.1:${(app.address() as AddressInfo).port}/callback`;
  return { app, redirectUri, backAtApp: (url: URL) => url.toString().startsWith(redirectUri) };
}

async function shoot(page: Page, name: string) {
  if (!screenshots) return;
  mkdirSync(screenshots, { recursive: true });
  await page.screenshot({ path: join(screenshots, `${name}.png`), fullPage: true });
}

describe.skipIf(!runs)("the built-in OAuth2 login and consent page in Chromium", () => {
  // One Chromium for the file, started by its first test (a launch is seconds on a busy machine); each test opens
  // contexts of its own in it, as separate as separate browsers are for cookies and storage.
  let chromiumStarted: Promise<Browser> | undefined;
  const chromiumOfThisFile = () => {
    chromiumStarted ??= launch(CHROMIUM);
    return chromiumStarted;
  };
  afterAll(async () => {
    await (await chromiumStarted)?.close();
  });

  // Chromium through sign-in, consent and two silent requests: ~8 s on a quiet machine, 11 s on a busy one.
  it("signs in, consents, returns with a code; then prompt=none comes back silently, and without a session says login_required", async () => {
    const { app, redirectUri: REDIRECT_URI, backAtApp } = await appServer();
    const config = await relyingParty(REDIRECT_URI);
    const user = await verifiedUser("page");
    const browser = await chromiumOfThisFile();
    try {
      const context = await browser.newContext();
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      const blocked: string[] = [];
      page.on("console", (message) => {
        if (/Content Security Policy/i.test(message.text())) blocked.push(message.text());
      });

      const { url, checks } = await authorizationRequest(
        config,
        REDIRECT_URI,
        "openid email profile offline_access",
      );
      await page.goto(url.toString());
      await expect(page.getByRole("heading", { name: "Sign in" }).isVisible()).resolves.toBe(true);
      expect(await page.textContent("main")).toContain("Acme Notes");
      await shoot(page, "1-sign-in");
      await page.fill("#email", user.email);
      await page.fill("#password", "not the password");
      await page.click("button[type=submit]");
      expect(await page.textContent(".error")).toContain("Wrong email or password.");
      await page.fill("#password", PASSWORD);
      await page.click("button[type=submit]");

      await page.waitForSelector("ul.scopes");
      const scopes = await page.locator("ul.scopes li").allTextContents();
      expect(scopes).toEqual([
        "Know who you are (your account id)",
        "See your email address",
        "See your name, picture and language",
        "Stay connected when you are not using it",
      ]);
      expect(await page.textContent(".who")).toContain(user.email);
      await shoot(page, "2-consent");
      await page.click("button[value=allow]");
      await page.waitForURL(backAtApp);
      expect(blocked).toEqual([]);

      const tokens = await oidc.authorizationCodeGrant(config, new URL(page.url()), {
        ...checks,
        idTokenExpected: true,
      });
      expect(tokens.claims()?.email).toBe(user.email);

      // Signed in and consented: prompt=none completes without showing anything.
      const silentRequest = await authorizationRequest(config, REDIRECT_URI, "openid email", {
        prompt: "none",
      });
      const silent = silentRequest.url;
      await page.goto(silent.toString());
      await page.waitForURL(backAtApp);
      expect(new URL(page.url()).searchParams.get("code")).toMatch(/^oac_/);

      // A browser without that session gets login_required back, and no page.
      const fresh = await browser.newContext();
      const other = await fresh.newPage();
      await other.goto(silent.toString());
      await other.waitForURL(backAtApp);
      const answer = new URL(other.url()).searchParams;
      expect(answer.get("error")).toBe("login_required");
      expect(answer.get("state")).toBe(silentRequest.checks.expectedState);
    } finally {
      // The browser stays for the next test; this test's contexts (cookies, pages) go.
      for (const context of browser.contexts()) await context.close();
      app.close();
    }
  }, 60_000);

  // Chromium with a virtual authenticator, registration then sign-in: ~4 s on a quiet machine, 8.5 s on a busy one.
  it("signs in with a passkey from the page's own script, under a strict CSP", async () => {
    const { app, redirectUri: REDIRECT_URI, backAtApp } = await appServer();
    const config = await relyingParty(REDIRECT_URI);
    const user = await verifiedUser("passkey");
    const { url, checks } = await authorizationRequest(config, REDIRECT_URI, "openid email");
    const toPage = await fetch(url, { redirect: "manual" });
    const requestId = new URL(toPage.headers.get("location")!).searchParams.get("request_id")!;
    // WebAuthn needs a host name for its RP ID (localhost here), not 127.0.0.1: the page is opened under that name.
    const origin = `http://localhost:${new URL(serverUrl).port}`;
    const browser = await chromiumOfThisFile();
    try {
      const context = await browser.newContext();
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      await addVirtualAuthenticator(context, page);
      await page.goto(`${origin}/auth/v1/oauth2/interaction?request_id=${requestId}`);
      // The user added a passkey earlier, in their app; here the same API is called from this origin.
      // The test's tsconfig has no DOM types, so the browser-side code is a string.
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
      })(${JSON.stringify(user.accessToken)})`);
      expect(added).toMatchObject({ nickname: "laptop" });

      await page.click("#passkey");
      await page.waitForSelector("ul.scopes");
      expect(await page.textContent(".who")).toContain(user.email);
      await shoot(page, "3-after-passkey");
      await page.click("button[value=allow]");
      await page.waitForURL(backAtApp);
      const tokens = await oidc.authorizationCodeGrant(config, new URL(page.url()), checks);
      expect(tokens.access_token).toBeTruthy();
    } finally {
      // The browser stays for the next test; this test's contexts (cookies, pages) go.
      for (const context of browser.contexts()) await context.close();
      app.close();
    }
  }, 60_000);
});
