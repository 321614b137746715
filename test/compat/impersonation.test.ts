// Impersonation in a real browser (contract operators.md §1; Debian's Chromium, playwright-core): the operator's
// one-time link lands the app signed in as the user (as a provider sign-in lands, `?refreshToken=`), the account
// center shows the banner naming who acts (axe clean, no sideways scroll at 390 px), its change forms read-only under
// a line saying why, and a form posted there anyway (the disabling undone, as anyone can in the browser's tools) is
// refused with the reason. Threat: support acting as a user without it being visible where the user's account is
// managed, or changing the account through its pages.
import { createServer } from "node:http";
import { describe, expect, inject, it } from "vitest";
import { expectAccessible, expectNoSidewaysScroll } from "./axe";
import { HEADLESS_SHELL as CHROMIUM, canRun, launch } from "./chromium";
import { authUrl, PASSWORD, uniqueEmail } from "./client";
import type { PageGlobals } from "./page-globals";

const runs = canRun(CHROMIUM);
/** The app's origin on the redirect allow-list (wrangler-dev.ts): this file serves its landing while it runs. */
const APP = `http://127.0.0.1:${inject("appPort")}`;
const ADMIN = { "x-hasura-admin-secret": inject("adminSecret"), "content-type": "application/json" };

describe.skipIf(!runs)("impersonation in Chromium", () => {
  it("operators.md §1 (RFC 8693 §4.1 `act`): the link lands the app signed in; the account center names who acts and refuses a change", async () => {
    const created = await fetch(`${authUrl}/admin/users`, {
      method: "POST",
      headers: ADMIN,
      body: JSON.stringify({ email: uniqueEmail("imp"), password: PASSWORD, emailVerified: true }),
    });
    const userId = ((await created.json()) as { id: string }).id;
    const started = await fetch(`${authUrl}/admin/users/${userId}/impersonate`, {
      method: "POST",
      headers: ADMIN,
      body: JSON.stringify({ reason: "ticket 77", actor: "ana@support.example", redirectTo: `${APP}/after` }),
    });
    expect(started.status).toBe(200);
    const { url } = (await started.json()) as { url: string };

    // The app: it answers its landing so the browser stops there, where nhost-js would read the token.
    const app = createServer((_, response) => response.end("<!doctype html><title>App</title>"));
    await new Promise<void>((resolve) => app.listen(Number(inject("appPort")), "127.0.0.1", resolve));
    const browser = await launch(CHROMIUM);
    try {
      // axe is loaded into the page (axe.ts): the page's CSP is bypassed for it, as the console's axe checks do.
      const context = await browser.newContext({ viewport: { width: 390, height: 844 }, bypassCSP: true });
      const page = await context.newPage();
      await page.goto(url);
      const landed = new URL(page.url());
      expect(`${landed.origin}${landed.pathname}`).toBe(`${APP}/after`);
      expect(landed.searchParams.get("refreshToken")).toMatch(/^[0-9a-f-]{36}$/);

      await page.goto(`${authUrl}/account`);
      const banner = page.locator(".impersonation-banner");
      await expect.poll(() => banner.textContent()).toContain("ana@support.example is acting as this user");
      await expectAccessible(page, "account center under impersonation");
      await expectNoSidewaysScroll(page, "account center under impersonation");

      // Read-only: the forms are there to read, disabled, under one line saying why.
      const submit = page.locator('form[action$="/account/password"] button[type="submit"]');
      expect(await submit.isDisabled()).toBe(true);
      expect(await page.textContent(".read-only-note")).toContain("Read-only");
      // The disabling is the page's courtesy, not the guard: undone, the post is refused by the server.
      await page.evaluate(() => {
        const { document } = globalThis as unknown as PageGlobals;
        document.querySelector("fieldset.read-only")?.removeAttribute("disabled");
      });
      await page.fill('input[name="newPassword"]', "an entirely new password");
      const [answer] = await Promise.all([
        page.waitForResponse((response) => response.url().endsWith("/account/password")),
        page.locator('form[action$="/account/password"] button[type="submit"]').click(),
      ]);
      expect(answer.status()).toBe(403);
      expect(await answer.text()).toContain(
        "an impersonated session may not grant, approve, link or create anything",
      );
    } finally {
      await browser.close();
      await new Promise((resolve) => app.close(resolve));
    }
  });
});
