// FedCM's login pop-up (W3C FedCM, the config file's `login_url`; src/fedcm/login-popup.ts, docs/fedcm.md §1.5): the
// page the browser opens when it has nobody signed in to show, which must end the sign-in by closing itself with
// `IdentityProvider.close()` so the browser carries on with its prompt. The Chromium walk (the pop-up opened by a
// relying party's button, closing itself) is test/compat/fedcm.test.ts.
// Threats: a refresh token landing in the pop-up's URL (the way back is the account center's path, which mints
// none); an open redirect through the page (its way back is fixed, never taken from the request); a page telling the
// browser "logged in" for nobody (only a signed-in person gets Set-Login); a script the CSP does not vouch for.
import { describe, expect, it } from "vitest";
import { PASSWORD, signUp } from "../helpers";
import { Browser } from "../oauth2/page-browser";
import { ISSUER, location, provider } from "../oauth2/support";

const svc = provider();
const POPUP = `${ISSUER}/account/fedcm-login`;

describe("FedCM login pop-up (the config file's login_url)", () => {
  it("sends a signed-out person through the hosted sign-in and back to itself, then closes the pop-up, in their language", async () => {
    const config = await svc.request("GET", "/fedcm/config.json", {
      headers: { "sec-fetch-dest": "webidentity" },
    });
    expect(((await config.json()) as { login_url: string }).login_url).toBe(POPUP);

    // A person who reads French (their `locale`, which the pages put before the browser's Accept-Language).
    const { user } = await signUp(svc, undefined, { locale: "fr" });
    const browser = new Browser(svc);
    // Signed out: on to the hosted sign-in, with this page as the way back, whatever the URL carries.
    const signedOut = await browser.get(`${POPUP}?redirectTo=https://evil.example.net/`);
    expect(signedOut.status).toBe(303);
    expect(signedOut.headers.get("set-login")).toBeNull();
    const signIn = location(signedOut);
    expect(`${signIn.origin}${signIn.pathname}`).toBe(`${ISSUER}/signin`);
    expect(signIn.searchParams.get("redirectTo")).toBe(POPUP);
    const requestId = location(await browser.get(signIn.toString())).searchParams.get("request_id")!;
    const signedIn = await browser.post("/oauth2/interaction/sign-in", {
      request_id: requestId,
      email: user.email,
      password: PASSWORD,
    });
    expect(signedIn.headers.get("set-login")).toBe("logged-in");
    // Back to the pop-up's page as it is, through the page's next step: no refresh token minted for it.
    expect(location(await browser.get(location(signedIn).toString())).toString()).toBe(POPUP);

    // Signed in: the page says who, tells the browser again, and its one script (the CSP's nonce) closes the pop-up.
    const landing = await browser.get(POPUP);
    expect(landing.status).toBe(200);
    expect(landing.headers.get("set-login")).toBe("logged-in");
    const html = await landing.text();
    const nonce = /script-src 'nonce-([^']+)'/.exec(
      landing.headers.get("content-security-policy") ?? "",
    )?.[1];
    expect(nonce).toBeTruthy();
    expect(html).toContain(`<script nonce="${nonce}">`);
    expect(html).toContain("provider.close()");
    expect(html).toContain(user.email);
    expect(html).toContain('<html lang="fr">');
    expect(html).toContain("<h1>Vous êtes connecté</h1>");
    expect(html).toContain("Connecté en tant que");
  });
});
