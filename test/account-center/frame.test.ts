// The account center's frame (contract §13): who it serves, in which language, and which posts it takes.
// Threats: the page shown to a browser nobody signed in to; a cross-site form post (CSRF) changing the account of
// whoever is signed in here; a sign-out that leaves the session's refresh tokens working; script or framing allowed
// on a page that changes the account.
import { describe, expect, it } from "vitest";
import { service } from "../helpers";
import {
  ACCOUNT,
  ACCOUNT_URL,
  accountPage,
  accountService,
  Browser,
  location,
  PAGE_STEPS,
  refresh,
  signedIn,
} from "./support";

const svc = accountService();

describe("who the account center serves", { timeout: PAGE_STEPS }, () => {
  it("sends a browser that is not signed in to the hosted sign-in, which brings it back", async () => {
    const answer = await new Browser(svc).get(ACCOUNT);
    expect(answer.status).toBe(303);
    const target = location(answer);
    expect(target.pathname).toBe("/auth/v1/signin");
    expect(target.searchParams.get("redirectTo")).toBe(ACCOUNT_URL);
  });

  it("is served with the OAuth2 provider off (the default configuration) too", async () => {
    const answer = await new Browser(service()).get(ACCOUNT);
    expect(answer.status).toBe(303);
    expect(location(answer).pathname).toBe("/auth/v1/signin");
  });

  it("a forged or foreign cookie is nobody", async () => {
    const browser = new Browser(svc);
    browser.jar.set("oauth2_session", "eyJzaWQiOiJ4In0.bm90LWEtbWFj");
    expect((await browser.get(ACCOUNT)).status).toBe(303);
  });

  it("shows the signed-in person's sections, with a strict CSP and no framing", async () => {
    const { browser, email } = await signedIn(svc);
    const page = await browser.get(ACCOUNT);
    expect(page.status).toBe(200);
    const csp = page.headers.get("content-security-policy")!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("form-action 'self'");
    expect(page.headers.get("cache-control")).toBe("no-store");
    const html = await page.text();
    expect(html).toContain(email);
    for (const id of ["profile", "email", "password", "sessions", "delete"]) {
      expect(html).toContain(`id="${id}"`);
      expect(html).toContain(`href="#${id}"`);
    }
  });
});

describe("languages", { timeout: PAGE_STEPS }, () => {
  const HEADINGS: Record<string, string> = {
    en: "Your account",
    de: "Ihr Konto",
    fr: "Votre compte",
    es: "Tu cuenta",
    pt: "Sua conta",
    ja: "アカウント",
  };

  const multilingual = accountService({ AUTH_LOCALE_ALLOWED_LOCALES: "en,de,fr,es,pt,ja" });

  it.each(Object.entries(HEADINGS))(
    "renders in %s from the user's locale, with <html lang> and a translated heading",
    async (lang, heading) => {
      const { browser } = await signedIn(multilingual, { locale: lang });
      const html = await accountPage(browser);
      expect(html).toContain(`<html lang="${lang}">`);
      expect(html).toContain(`<h1 class="account-title">${heading}</h1>`);
    },
  );

  it("ui_locales in the query wins over the user's locale", async () => {
    const { browser } = await signedIn(svc);
    const html = await accountPage(browser, "?ui_locales=de");
    expect(html).toContain('<html lang="de">');
    expect(html).toContain("Ihr Konto");
  });
});

describe("form posts", { timeout: PAGE_STEPS }, () => {
  it("refuses a cross-site post (another Origin, or Sec-Fetch-Site cross-site) and changes nothing", async () => {
    const { browser } = await signedIn(svc);
    const foreign = await browser.post(
      `${ACCOUNT}/profile`,
      { displayName: "Mallory" },
      { origin: "https://evil.example" },
    );
    expect(foreign.status).toBe(403);
    const sibling = await browser.post(
      `${ACCOUNT}/profile`,
      { displayName: "Mallory" },
      { origin: "http://localhost:8787", "sec-fetch-site": "same-site" },
    );
    expect(sibling.status).toBe(403);
    const noOrigin = await browser.post(`${ACCOUNT}/profile`, { displayName: "Mallory" }, {});
    expect(noOrigin.status).toBe(403);
    expect(await accountPage(browser)).not.toContain("Mallory");
  });

  it("a post from a browser that is not signed in goes to the sign-in", async () => {
    const answer = await new Browser(svc).post(`${ACCOUNT}/profile`, { displayName: "Nobody" });
    expect(answer.status).toBe(303);
    expect(location(answer).pathname).toBe("/auth/v1/signin");
  });
});

describe("sign-out", { timeout: PAGE_STEPS }, () => {
  it("ends the browser's cookie and its session row", async () => {
    const { browser } = await signedIn(svc);
    const cookie = browser.jar.get("oauth2_session")!;
    const out = await browser.post(`${ACCOUNT}/sign-out`, {});
    expect(out.status).toBe(200);
    expect(browser.signedIn).toBe(false);
    // The cookie kept by someone else names a session that is gone.
    const replay = new Browser(svc);
    replay.jar.set("oauth2_session", cookie);
    expect((await replay.get(ACCOUNT)).status).toBe(303);
  });

  it("a cross-site post signs nobody out", async () => {
    const { browser } = await signedIn(svc);
    const forced = await browser.post(`${ACCOUNT}/sign-out`, {}, { origin: "https://evil.example" });
    expect(forced.status).toBe(403);
    expect((await browser.get(ACCOUNT)).status).toBe(200);
  });

  it("leaves the user's API sessions alone", async () => {
    const { browser, session } = await signedIn(svc);
    await browser.post(`${ACCOUNT}/sign-out`, {});
    expect((await refresh(svc, session.refreshToken)).status).toBe(200);
  });
});
