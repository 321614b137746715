// FedCM in a real browser (W3C Federated Credential Management): Debian's Chromium (headless, playwright-core) signs
// a person in at the hosted pages, then a relying party's page on another site (localhost, where the service is
// 127.0.0.1) calls navigator.credentials.get({identity}); the DevTools FedCm domain picks the account in the
// browser's own prompt, and the token it hands the page is an authorization code the relying party redeems with its
// PKCE verifier at /oauth2/token. No switch is needed: both origins are loopback, which Chromium counts as secure,
// and it keeps the Secure, SameSite=None session twin on http://127.0.0.1. Every refusal is in test/fedcm/.
import { createHash, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { chromium } from "playwright-core";
import { describe, expect, it } from "vitest";
import { authUrl, PASSWORD, verifiedUser } from "./client";
import { registerClient } from "./relying-party";

const CHROMIUM = "/usr/bin/chromium";
const runs = existsSync(CHROMIUM) || process.env.CI === "true";

/** The relying party's page: an empty document on another site than the service, where its script runs. */
async function relyingPartyPage() {
  const server = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/html" });
    response.end("<!doctype html><title>Acme Notes</title><p>Acme Notes</p>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, origin: `http://localhost:${(server.address() as AddressInfo).port}` };
}

describe.skipIf(!runs)("FedCM in Chromium", () => {
  // Sign-in at the hosted pages, the prompt, the exchange: 8 s measured with other sessions on the 2 cores.
  it("signs a person in to a relying party through the browser's own prompt (§ Identity assertion endpoint, § Accounts endpoint)", async () => {
    const { server, origin } = await relyingPartyPage();
    const client = await registerClient({
      clientName: "Acme Notes",
      redirectUris: [`${origin}/callback`],
      tokenEndpointAuthMethod: "none",
      fedcmOrigins: [origin],
      policyUri: "https://rp.example.com/privacy",
      tosUri: "https://rp.example.com/terms",
    });
    const user = await verifiedUser("fedcm");
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
    try {
      const context = await browser.newContext();
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);

      // The hosted sign-in answers Set-Login: logged-in and leaves the SameSite=None twin for the FedCM endpoints.
      await page.goto(`${authUrl}/signin`);
      await page.fill("#email", user.email);
      await page.fill("#password", PASSWORD);
      await page.click("button[type=submit]");
      // The sign-in's answer sets it, whatever page follows (the passkey offer's "Continue" page, then the app).
      await expect
        .poll(async () => (await context.cookies()).find((cookie) => cookie.name === "fedcm_session"), {
          timeout: 15_000,
        })
        .toMatchObject({ path: "/auth/v1/fedcm", sameSite: "None", secure: true, httpOnly: true });

      await page.goto(origin);
      const devtools = await context.newCDPSession(page);
      const shown: string[] = [];
      devtools.on("FedCm.dialogShown", (dialog) => {
        shown.push(`${dialog.dialogType}: ${dialog.accounts.map((account) => account.email).join(",")}`);
        void devtools.send("FedCm.selectAccount", { dialogId: dialog.dialogId, accountIndex: 0 });
      });
      await devtools.send("FedCm.enable", { disableRejectionDelay: true });
      const verifier = randomBytes(32).toString("base64url");
      const challenge = createHash("sha256").update(verifier).digest("base64url");
      const nonce = randomBytes(16).toString("base64url");
      const token = await page.evaluate(
        async (ask) => {
          // Runs in the page (no DOM types in this project): the one call it makes.
          const { navigator } = globalThis as unknown as {
            navigator: { credentials: { get(options: unknown): Promise<{ token: string }> } };
          };
          const credential = await navigator.credentials.get({
            identity: {
              providers: [
                {
                  configURL: ask.configURL,
                  clientId: ask.clientId,
                  params: { nonce: ask.nonce, code_challenge: ask.challenge, code_challenge_method: "S256" },
                },
              ],
            },
          });
          return credential.token;
        },
        { configURL: `${authUrl}/fedcm/config.json`, clientId: client.clientId, nonce, challenge },
      );
      expect(shown).toEqual([`AccountChooser: ${user.email}`]);
      expect(token).toMatch(/^oac_/);

      // The relying party's server redeems it as any code, with its verifier and no redirect URI.
      const answer = await fetch(`${authUrl}/oauth2/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "authorization_code",
          code: token,
          client_id: client.clientId,
          code_verifier: verifier,
        }),
      });
      expect(answer.status).toBe(200);
      const { id_token: idToken } = (await answer.json()) as { id_token: string };
      const { payload } = await jwtVerify(idToken, createRemoteJWKSet(new URL(`${authUrl}/oauth2/jwks`)), {
        issuer: authUrl,
        audience: client.clientId,
      });
      expect(payload).toMatchObject({ email: user.email, nonce });
    } finally {
      await browser.close();
      server.close();
    }
  });
});
