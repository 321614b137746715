// What every form of the security sections shares (contract §13): a cross-site post changes nothing (CSRF), a browser
// that is not signed in is sent to the sign-in, and the sections speak the page's language. Each test names the threat
// or rule it covers.
import { describe, expect, it } from "vitest";
import { SECURITY_STYLE } from "../../src/account-center/security";
import { CATALOGUES, LANGUAGES } from "../../src/browser/text";
import { SERVER, service } from "../helpers";
import { Browser } from "../oauth2/page-browser";
import { location } from "../oauth2/support";
import { accountPage, hiddenValues, SECURITY_ON, signedInBrowser } from "./security-support";

const svc = service(SECURITY_ON);

/** Every form post of the sections, with fields that would do something if the checks let them through. */
const POSTS: [string, Record<string, string>][] = [
  ["/account/security/totp/start", {}],
  ["/account/security/totp/confirm", { code: "123456" }],
  ["/account/security/totp/disable", { code: "123456" }],
  ["/account/security/recovery-codes", { code: "123456" }],
  ["/account/security/passkeys/add", {}],
  ["/account/security/passkeys/verify", { credential: "{}" }],
  ["/account/security/passkeys/remove", { id: "x" }],
  ["/account/security/tokens/create", { name: "forged-token", days: "365" }],
  ["/account/security/tokens/revoke", { id: "x" }],
  ["/account/security/providers/link", { provider: "github" }],
  ["/account/security/providers/unlink", { id: "x" }],
  ["/account/security/organizations/leave", { id: "x" }],
];

describe("the security sections' forms", { timeout: 30_000 }, () => {
  it("threat: a post from another site (or a same-site sibling) changes nothing: 403, before any check of its own", async () => {
    const { browser } = await signedInBrowser(svc, "cross-site");
    for (const [path, fields] of POSTS) {
      const crossSite = await browser.post(path, fields, { origin: "https://evil.example" });
      expect(crossSite.status, path).toBe(403);
      const sibling = await browser.post(path, fields, { origin: SERVER, "sec-fetch-site": "same-site" });
      expect(sibling.status, path).toBe(403);
      const noOrigin = await browser.post(path, fields, {});
      expect(noOrigin.status, path).toBe(403);
    }
    // Nothing was made: no token, no TOTP secret set up (the section still offers to set it up).
    const page = await accountPage(browser);
    expect(hiddenValues(page, "/auth/v1/account/security/tokens/revoke")).toHaveLength(0);
    expect(page).not.toContain("forged-token");
    expect(page).toContain('action="/auth/v1/account/security/totp/start"');
  });

  it("rule: a browser that is not signed in is sent to the hosted sign-in, and nothing runs", async () => {
    const stranger = new Browser(svc);
    for (const [path, fields] of POSTS) {
      const answer = await stranger.post(path, fields);
      expect(answer.status, path).toBe(303);
      expect(location(answer).pathname, path).toBe("/auth/v1/signin");
    }
  });

  it("rule: the sections speak the page's language, in each of the six", async () => {
    const { browser } = await signedInBrowser(svc, "languages");
    for (const lang of LANGUAGES) {
      const response = await browser.get(`/account?ui_locales=${lang}`);
      expect(response.status, lang).toBe(200);
      const html = await response.text();
      const w = CATALOGUES[lang].accountSecurity;
      expect(html, lang).toContain(`<html lang="${lang}"`);
      // The sections' CSS arrives whole (the page escapes what it writes into <style>: it must need no escaping).
      expect(html, lang).toContain(SECURITY_STYLE);
      for (const title of [
        w.twoStep.title,
        w.passkeys.title,
        w.tokens.title,
        w.providers.title,
        w.organizations.title,
      ]) {
        expect(html, `${lang}: ${title}`).toContain(`<h2>${title}</h2>`);
      }
    }
  });
});
