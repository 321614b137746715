// The account center's profile section (contract §13): display name and locale, under the rules every other way of
// setting them follows. Threats: markup in a display name reaching pages and mails (the sign-up rule refuses it);
// a locale outside AUTH_LOCALE_ALLOWED_LOCALES; a bad value answered with a 500 instead of a clear 400.
import { describe, expect, it } from "vitest";
import { ACCOUNT, accountPage, accountService, location, PAGE_STEPS, signedIn } from "./support";

const svc = accountService({ AUTH_LOCALE_ALLOWED_LOCALES: "en,fr" });

describe("the profile section", { timeout: PAGE_STEPS }, () => {
  it("saves the display name and the locale; the API and the page's language follow", async () => {
    const { browser, session } = await signedIn(svc);
    const page = await accountPage(browser);
    expect(page).toContain('<option value="fr">');
    const saved = await browser.post(`${ACCOUNT}/profile`, { displayName: "Ada Lovelace", locale: "fr" });
    expect(saved.status).toBe(303);
    expect(location(saved).hash).toBe("#profile");
    const user = (await (await svc.get("/user", session.accessToken)).json()) as Record<string, unknown>;
    expect(user).toMatchObject({ displayName: "Ada Lovelace", locale: "fr" });
    // The user's locale is now French: so is the page (no ui_locales, no Accept-Language).
    const html = await accountPage(browser, "?notice=profile-saved");
    expect(html).toContain('<html lang="fr">');
    expect(html).toContain("Votre profil est enregistré.");
    expect(html).toContain('value="Ada Lovelace"');
  });

  it("refuses markup in the display name with a 400 in the section, and saves nothing", async () => {
    const { browser, session } = await signedIn(svc);
    const refused = await browser.post(`${ACCOUNT}/profile`, {
      displayName: "<script>x</script>",
      locale: "en",
    });
    expect(refused.status).toBe(400);
    const html = await refused.text();
    expect(html).toContain("Use up to 32 characters");
    expect(html).not.toContain("<script>x</script>");
    const tooLong = await browser.post(`${ACCOUNT}/profile`, { displayName: "a".repeat(40), locale: "en" });
    expect(tooLong.status).toBe(400);
    const user = (await (await svc.get("/user", session.accessToken)).json()) as Record<string, unknown>;
    expect(user.displayName).toBe(session.user.displayName);
  });

  it("refuses a locale outside AUTH_LOCALE_ALLOWED_LOCALES", async () => {
    const { browser, session } = await signedIn(svc);
    const refused = await browser.post(`${ACCOUNT}/profile`, { displayName: "Ada", locale: "de" });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("Choose one of the languages in the list.");
    const user = (await (await svc.get("/user", session.accessToken)).json()) as Record<string, unknown>;
    expect(user.locale).toBe("en");
  });
});
