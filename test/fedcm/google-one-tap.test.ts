// FedCM as a relying party (docs/fedcm.md): Google's One Tap on the hosted sign-in page, through the browser's own
// prompt, with the fake Google of the provider tests (test/fakes/outbound.js) standing in for Google's ID tokens.
// Threats: a script that trusts what the prompt hands it (the token goes through the native ID-token sign-in and
// its checks, nonce included), a page that lets its script reach anywhere (CSP connect-src: this origin and Google's
// FedCM config only), One Tap offered for a client whose tokens the service would refuse (audience).
import { describe, expect, it } from "vitest";
import { PASSWORD, signUp } from "../helpers";
import { Browser } from "../oauth2/page-browser";
import { location, requestIdOf } from "../oauth2/support";
import { mintIdToken, withProviders } from "../providers/support";

const ONE_TAP = {
  AUTH_PROVIDER_GOOGLE_AUDIENCE: "google-client",
  AUTH_FEDCM_GOOGLE_CONFIG_URL: "https://oidc.fake/gsi/fedcm.json",
};
const svc = withProviders(ONE_TAP);

/** The hosted sign-in page as a browser first opens it. */
async function signInPage(browser: Browser) {
  const started = await browser.get("/signin");
  const page = await browser.get(location(started).toString());
  expect(page.status).toBe(200);
  return { page, html: await page.text(), requestId: await requestIdOf(started) };
}

describe("Google's One Tap on the hosted sign-in page (FedCM relying party)", () => {
  it("offers the prompt with Google's web client, and signs the person in through the ID-token sign-in", async () => {
    const browser = new Browser(svc);
    const { page, html, requestId } = await signInPage(browser);
    // The script asks the browser for Google's account with the web client's id, allowed to reach only the config.
    expect(html).toContain('configURL: "https://oidc.fake/gsi/fedcm.json", clientId: "google-client"');
    expect(html).toContain('id="passkey-session"');
    expect(page.headers.get("content-security-policy")).toMatch(
      /connect-src 'self' https:\/\/oidc\.fake(;|$)/,
    );

    // What the script does with the prompt's token: the API's ID-token sign-in with its nonce, then the page's form.
    const email = `one-tap-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const nonce = crypto.randomUUID();
    const idToken = await mintIdToken({
      sub: `g-${crypto.randomUUID()}`,
      email,
      email_verified: true,
      aud: "google-client",
      nonce,
    });
    // A token carrying another nonce than the page's is refused (a token from another sign-in replayed here).
    const replayed = await svc.post("/signin/idtoken", { provider: "google", idToken, nonce: "another" });
    expect(replayed.status).toBe(401);
    const answer = await svc.post("/signin/idtoken", { provider: "google", idToken, nonce });
    expect(answer.status).toBe(200);
    const { session } = (await answer.json()) as { session: { refreshToken: string } };
    const landed = await browser.post("/oauth2/interaction/session", {
      request_id: requestId,
      refresh_token: session.refreshToken,
    });
    expect(landed.status).toBe(303);
    expect(browser.signedIn).toBe(true);
    expect(landed.headers.get("set-login")).toBe("logged-in");
  });

  // Threat: a third party's outage breaking sign-in. The server never reads Google's config file (the browser does),
  // so the page is the same whether Google answers or not, and its script gives up silently on any failure, leaving
  // the form as it was (the Chromium walk, test/compat/fedcm.test.ts, has Google's config file answer 500).
  it("serves the page and signs in by its form whatever Google answers: the server never asks Google, the script fails quietly", async () => {
    const down = withProviders({
      ...ONE_TAP,
      AUTH_FEDCM_GOOGLE_CONFIG_URL: "https://google-down.fake/gsi/fedcm.json",
    });
    const { user } = await signUp(down);
    const browser = new Browser(down);
    const { html, requestId } = await signInPage(browser);
    expect(html).toContain('configURL: "https://google-down.fake/gsi/fedcm.json"');
    expect(html).toMatch(/\.catch\(\(\) => \{\}\)/);
    const signedIn = await browser.post("/oauth2/interaction/sign-in", {
      request_id: requestId,
      email: user.email,
      password: PASSWORD,
    });
    expect(signedIn.status).toBe(303);
    expect(browser.signedIn).toBe(true);
  });

  it("stays off when switched off, and when Google's web client is not an accepted audience", async () => {
    for (const overrides of [
      { ...ONE_TAP, AUTH_FEDCM_GOOGLE_ONE_TAP: "false" },
      { ...ONE_TAP, AUTH_PROVIDER_GOOGLE_AUDIENCE: "ios-client" },
      { AUTH_FEDCM_GOOGLE_CONFIG_URL: ONE_TAP.AUTH_FEDCM_GOOGLE_CONFIG_URL },
    ]) {
      const { page, html } = await signInPage(new Browser(withProviders(overrides)));
      expect(html).not.toContain("fedcm.json");
      expect(page.headers.get("content-security-policy")).not.toMatch(/connect-src[^;]*oidc\.fake/);
    }
  });
});
