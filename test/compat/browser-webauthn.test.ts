// End to end in a real browser: Chromium from Debian (headless, driven by playwright-core over CDP) with a virtual
// authenticator registers a security key and signs in against `wrangler dev`, from a small page this test serves.
// The page is what an app would do: fetch the options, call navigator.credentials, post the credential back.
import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { authUrl, followLink, mailedLink, REDIRECT, uniqueEmail } from "./client";
import { addVirtualAuthenticator } from "./virtual-authenticator";

const CHROMIUM = "/usr/bin/chromium";
const pagePort = inject("pagePort");

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>WebAuthn test app</title></head><body>
<script>
  const AUTH = ${JSON.stringify(authUrl)};
  async function post(path, body) {
    const response = await fetch(AUTH + path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const json = await response.json();
    if (!response.ok) throw new Error(path + ": " + JSON.stringify(json));
    return json;
  }
  window.signUpWithKey = async (email) => {
    const options = await post("/signup/webauthn", { email, options: { redirectTo: ${JSON.stringify(REDIRECT)} } });
    const credential = await navigator.credentials.create({
      publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options),
    });
    return post("/signup/webauthn/verify", { credential: credential.toJSON(), nickname: "virtual key" });
  };
  window.signInWithKey = async (email) => {
    const options = await post("/signin/webauthn", email ? { email } : {});
    const credential = await navigator.credentials.get({
      publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options),
    });
    return post("/signin/webauthn/verify", { credential: credential.toJSON() });
  };
</script></body></html>`;

/** What the page's script defines on its global object (run in the browser by `page.evaluate`). */
interface TestPage {
  signUpWithKey(email: string): Promise<unknown>;
  signInWithKey(email?: string): Promise<unknown>;
}

interface SessionAnswer {
  session: { accessToken: string; user: { id: string; email: string } } | null;
}

// Without Debian's Chromium (`apt-get install chromium`) the test is skipped on a developer's machine; in CI, which
// installs it (.ci/run), it always runs, so a missing browser fails loudly instead of passing silently.
const runs = existsSync(CHROMIUM) || process.env.CI === "true";

describe.skipIf(!runs)("WebAuthn in Chromium with a virtual authenticator", () => {
  let server: Server;

  beforeAll(async () => {
    server = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      response.end(PAGE);
    });
    await new Promise<void>((resolve) => server.listen(pagePort, "127.0.0.1", resolve));
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  // Chromium with a virtual authenticator through three ceremonies: ~3.3 s on a quiet machine, 8.6 s on a busy one.
  it("registers a passkey, verifies the email, and signs in with and without the email", async () => {
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
    try {
      const context = await browser.newContext();
      const page = await context.newPage();
      const { cdp, authenticatorId } = await addVirtualAuthenticator(context, page);
      // localhost is a secure context, so WebAuthn runs over plain HTTP here.
      await page.goto(`http://localhost:${pagePort}/`);

      const email = uniqueEmail("browser");
      const signedUp = await page.evaluate(
        (address) => (globalThis as unknown as TestPage).signUpWithKey(address),
        email,
      );
      // Email verification is on: the account exists, the session waits for the mailed link.
      expect((signedUp as SessionAnswer).session).toBeNull();
      const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
      expect(credentials).toHaveLength(1);
      expect(credentials[0]!.isResidentCredential).toBe(true);
      await followLink(await mailedLink(email));

      const withEmail = (await page.evaluate(
        (address) => (globalThis as unknown as TestPage).signInWithKey(address),
        email,
      )) as SessionAnswer;
      expect(withEmail.session?.user.email).toBe(email);
      const discoverable = (await page.evaluate(() =>
        (globalThis as unknown as TestPage).signInWithKey(),
      )) as SessionAnswer;
      expect(discoverable.session?.user.id).toBe(withEmail.session?.user.id);

      // The authenticator's counter moved with each assertion; the service stored it.
      const after = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
      expect(after.credentials[0]!.signCount).toBeGreaterThanOrEqual(2);
    } finally {
      await browser.close();
    }
  }, 60_000);
});
