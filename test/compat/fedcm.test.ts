// FedCM in a real browser (W3C Federated Credential Management), both sides, in Debian's Chromium (headless,
// playwright-core), the DevTools FedCm domain answering the browser's own prompt:
// - as the identity provider: a relying party's page on another site (localhost, where the service is 127.0.0.1)
//   calls navigator.credentials.get({identity}) from its button while nobody is signed in here; the browser opens
//   the config file's login_url in a pop-up, the person signs in there, the page it ends on closes the pop-up
//   (IdentityProvider.close()), the prompt picks the account, and the token it hands the page is an authorization
//   code the relying party redeems with its PKCE verifier at /oauth2/token;
// - as a relying party: the hosted sign-in page offers Google's One Tap against the fake Google
//   (test/compat/fake-google-fedcm.ts, met as localhost), and the ID token the prompt hands it signs the person in.
// No switch is needed: every origin is loopback, which Chromium counts as secure, and it keeps Secure, SameSite=None
// cookies on http. Every refusal is in test/fedcm/.
import { createHash, randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createRemoteJWKSet, jwtVerify } from "jose";
import type { BrowserContext, Page } from "playwright-core";
import { describe, expect, inject, it } from "vitest";
import { FULL_CHROMIUM as CHROMIUM, canRun, launch } from "./chromium";
import { authUrl, PASSWORD, verifiedUser } from "./client";
import { registerClient } from "./relying-party";

const runs = canRun(CHROMIUM);

/** The relying party's page: a document on another site than the service, with the button its script listens to. */
async function relyingPartyPage() {
  const server = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/html" });
    response.end("<!doctype html><title>Acme Notes</title><button id=signin>Sign in</button>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, origin: `http://localhost:${(server.address() as AddressInfo).port}` };
}

/**
 * The browser's prompts on `page`, as "type: emails", each answered by picking the first account, once `ready()` has
 * settled (a person's pick comes after whatever else they were doing; the DevTools' comes at once).
 */
async function answerPrompts(
  context: BrowserContext,
  page: Page,
  ready = async (): Promise<unknown> => undefined,
) {
  const devtools = await context.newCDPSession(page);
  const shown: string[] = [];
  devtools.on("FedCm.dialogShown", (dialog) => {
    shown.push(`${dialog.dialogType}: ${dialog.accounts.map((account) => account.email).join(",")}`);
    if (dialog.dialogType === "AccountChooser") {
      // `ready()` failing is the test's own failure, reported where it is awaited.
      void ready().then(
        () => devtools.send("FedCm.selectAccount", { dialogId: dialog.dialogId, accountIndex: 0 }),
        () => {},
      );
    }
  });
  await devtools.send("FedCm.enable", { disableRejectionDelay: true });
  return shown;
}

const cookieOf = async (context: BrowserContext, name: string) =>
  (await context.cookies()).find((cookie) => cookie.name === name);

describe.skipIf(!runs)("FedCM in Chromium", () => {
  // The pop-up's sign-in, the prompt, the exchange: 5 s measured alone on the 2 cores (20 s beside other runs).
  it("signs a person in to a relying party through the browser's own prompt, its login pop-up closing itself (§ Identity assertion endpoint, § Accounts endpoint, IdentityProvider.close())", async () => {
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
    const browser = await launch(CHROMIUM);
    try {
      const context = await browser.newContext();
      context.setDefaultTimeout(15_000);
      const page = await context.newPage();
      await page.goto(origin);
      // Chromium shows its prompt as soon as the sign-in in the pop-up answers Set-Login: logged-in (it fetches the
      // accounts again then), while the pop-up is still on its way to login_url's page (the passkey offer's page
      // comes between). A prompt answered at once ends the request before that page calls IdentityProvider.close(),
      // which then has nothing to close (so the pop-up stays); a person picks their account after the pop-up went.
      // So the prompt is answered once the pop-up has closed, and only IdentityProvider.close() can close it.
      let popupClosed: Promise<unknown> | undefined;
      const shown = await answerPrompts(context, page, async () => popupClosed);
      const verifier = randomBytes(32).toString("base64url");
      const challenge = createHash("sha256").update(verifier).digest("base64url");
      const nonce = randomBytes(16).toString("base64url");
      // The button mode (`mode: "active"`), which needs the click's user activation: nobody is signed in here, so the
      // browser opens login_url in a pop-up instead of a prompt.
      await page.evaluate(
        (ask) => {
          // Runs in the page (no DOM types in this project): the one call it makes, on the button's click.
          const scope = globalThis as unknown as {
            document: { getElementById(id: string): { onclick: () => void } };
            navigator: { credentials: { get(options: unknown): Promise<{ token: string }> } };
            signedIn?: Promise<string>;
          };
          scope.document.getElementById("signin").onclick = () => {
            scope.signedIn = scope.navigator.credentials
              .get({
                identity: {
                  mode: "active",
                  providers: [
                    {
                      configURL: ask.configURL,
                      clientId: ask.clientId,
                      params: {
                        nonce: ask.nonce,
                        code_challenge: ask.challenge,
                        code_challenge_method: "S256",
                      },
                    },
                  ],
                },
              })
              .then((credential) => credential.token);
          };
        },
        { configURL: `${authUrl}/fedcm/config.json`, clientId: client.clientId, nonce, challenge },
      );
      const [popup] = await Promise.all([context.waitForEvent("page"), page.click("#signin")]);
      popupClosed = popup.waitForEvent("close");
      // The hosted sign-in in the pop-up answers Set-Login: logged-in and leaves the SameSite=None twin for the
      // FedCM endpoints; the page it ends on (after the passkey offer's page) closes the pop-up by itself.
      await popup.fill("#email", user.email);
      await popup.fill("#password", PASSWORD);
      await Promise.all([popupClosed, popup.click("button[type=submit]")]);
      expect(await cookieOf(context, "fedcm_session")).toMatchObject({
        path: "/auth/v1/fedcm",
        sameSite: "None",
        secure: true,
        httpOnly: true,
      });
      const token = await page.evaluate(
        () => (globalThis as unknown as { signedIn: Promise<string> }).signedIn,
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

  // Threat: Google's outage (its config file answering 500) breaking the hosted sign-in; then One Tap itself. 4 s
  // measured alone on the 2 cores.
  it("offers Google's One Tap on the hosted sign-in page, whose token signs the person Google names in; Google down, the form stays", async () => {
    const google = `${inject("fakeProviders").replace("127.0.0.1", "localhost")}/oidc.fake/gsi`;
    const setGoogle = (status: number) =>
      fetch(`${google}/__status`, { method: "POST", body: String(status) });
    const configFetches = async () => (await (await fetch(`${google}/__config-fetches`)).json()) as number;
    const email = `one-tap-${randomBytes(4).toString("hex")}@example.com`;
    const browser = await launch(CHROMIUM);
    try {
      const context = await browser.newContext();
      // The app the hosted pages send the person back to (AUTH_CLIENT_URL), answered here.
      await context.route("http://localhost:3000/**", (route) => route.fulfill({ body: "the app" }));
      context.setDefaultTimeout(15_000);
      const page = await context.newPage();
      // Signed in at Google: its cookie for its FedCM endpoints, and Set-Login: logged-in for its origin.
      await page.goto(`${google}/__signin?sub=g-${randomBytes(6).toString("hex")}&email=${email}&name=Ada`);
      const shown = await answerPrompts(context, page);

      await setGoogle(500);
      try {
        const before = await configFetches();
        await page.goto(`${authUrl}/signin`);
        await expect.poll(configFetches).toBeGreaterThan(before);
        // The prompt failed: the page is where it was, its form usable.
        await page.fill("#email", email);
        expect(page.url()).toContain("/oauth2/interaction");
        expect(shown).toEqual([]);
      } finally {
        await setGoogle(200);
      }

      await page.goto(`${authUrl}/signin`);
      await page.waitForURL(/^http:\/\/localhost:3000\//);
      expect(shown).toEqual([`AccountChooser: ${email}`]);
      expect(await cookieOf(context, "oauth2_session")).toBeDefined();
      // The app's session is the person Google's token names: made for them at this first sign-in.
      const refreshToken = new URL(page.url()).searchParams.get("refreshToken");
      const session = await fetch(`${authUrl}/token`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ refreshToken }),
      });
      expect(session.status).toBe(200);
      expect(((await session.json()) as { user: { email: string } }).user.email).toBe(email);
    } finally {
      await browser.close();
    }
  });
});
