// Provider sign-in in a real browser (Debian's Chromium, headless): the flow is bound to the browser that started it
// by a SameSite=Lax cookie. A GitHub-like GET callback, the same callback opened in another browser (login CSRF), and
// Apple's form_post, which arrives as a cross-site POST (the fake Apple is served as localhost, the service as
// 127.0.0.1: two sites) and carries no Lax cookie until the service passes it on to its GET callback.
import type { Browser, Page, Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { HEADLESS_SHELL as CHROMIUM, canRun, launch } from "./chromium";
import { authUrl, client, REDIRECT, uniqueEmail, verifiedUser } from "./client";

const runs = canRun(CHROMIUM);
const fakeProviders = inject("fakeProviders");
const CALLBACK = (provider: string) => `${authUrl}/signin/provider/${provider}/callback`;
/** Where the service sends a browser whose callback it refuses (AUTH_CLIENT_URL, not running in the tests). */
const CLIENT_URL = "http://localhost:3000/";

/** Who the person at the provider is next (the browser reaches the provider through a redirect the test cannot edit). */
async function nextPersonAtProvider(person: Record<string, string>): Promise<void> {
  await fetch(`${fakeProviders}/__next-person`, { method: "POST", body: JSON.stringify(person) });
}

/**
 * Opens `url` and returns the URL the browser is sent to that starts with `prefix`. The app is not running, so the
 * navigation itself fails there; the request shows where the service sent the browser.
 */
async function landing(page: Page, prefix: string, go: () => Promise<unknown>): Promise<URL> {
  const reached = page.waitForRequest((request) => request.url().startsWith(prefix));
  await go().catch(() => {});
  return new URL((await reached).url());
}

async function newBrowserProfile(browser: Browser) {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  return { context, page };
}

describe.skipIf(!runs)("provider sign-in in Chromium, bound to the browser that started it", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launch(CHROMIUM);
  });
  afterAll(async () => browser?.close());

  it("connect: the page asks, naming the account; Continue links GitHub, which then signs in to that account", async () => {
    const { email, accessToken } = await verifiedUser("gh-link");
    const nhost = client();
    const { context, page } = await newBrowserProfile(browser);
    await page.goto(
      `${authUrl}/signin/provider/github?${new URLSearchParams({ redirectTo: REDIRECT, connect: accessToken })}`,
    );
    // Threat: link CSRF (src/providers/ask-first.ts). Nothing went to the provider yet; the page names the account.
    expect(await page.textContent("h1")).toBe("Link your GitHub account?");
    expect(await page.textContent("#ask-account")).toBe(email);
    if (process.env.PAGES_SCREENSHOTS) {
      await page.screenshot({ path: `${process.env.PAGES_SCREENSHOTS}/link-question.png`, fullPage: true });
    }
    const githubId = String(Date.now());
    await nextPersonAtProvider({ fake_id: githubId, fake_email: uniqueEmail("gh-linked") });
    const back = await landing(page, REDIRECT, () => page.click("#ask-continue"));
    expect(back.searchParams.get("error")).toBeNull();
    expect(back.searchParams.has("refreshToken")).toBe(false);
    await context.close();
    // The linked identity signs in to the account it was linked to.
    await nextPersonAtProvider({ fake_id: githubId, fake_email: uniqueEmail("gh-linked") });
    const other = await newBrowserProfile(browser);
    const signedIn = await landing(other.page, REDIRECT, () =>
      other.page.goto(nhost.auth.signInProviderURL("github", { redirectTo: REDIRECT })),
    );
    const { body: session } = await nhost.auth.refreshToken({
      refreshToken: signedIn.searchParams.get("refreshToken")!,
    });
    expect(session.user?.email).toBe(email);
    await other.context.close();
  });

  it("GitHub: signInProviderURL → provider → app with a refreshToken the real client exchanges", async () => {
    const email = uniqueEmail("gh-browser");
    await nextPersonAtProvider({ fake_id: String(Date.now()), fake_email: email });
    const { context, page } = await newBrowserProfile(browser);
    const nhost = client();
    const back = await landing(page, REDIRECT, () =>
      page.goto(nhost.auth.signInProviderURL("github", { redirectTo: REDIRECT })),
    );
    expect(back.searchParams.get("error")).toBeNull();
    const { body: session } = await nhost.auth.refreshToken({
      refreshToken: back.searchParams.get("refreshToken")!,
    });
    expect(session.user?.email).toBe(email);
    await context.close();
  });

  // Two Chromium profiles through the provider and back: ~4 s on a quiet machine, 8.6 s on a busy one.
  it("login CSRF: an attacker's callback URL opened in a victim's browser signs nobody in; the attacker's own browser still completes it", async () => {
    // The attacker signs in at the provider in their own browser and stops at the link back to the service.
    await nextPersonAtProvider({
      fake_id: String(Date.now() + 1),
      fake_email: uniqueEmail("attacker"),
      fake_confirm: "1",
    });
    const attacker = await newBrowserProfile(browser);
    await attacker.page.goto(client().auth.signInProviderURL("github", { redirectTo: REDIRECT }));
    const callback = (await attacker.page.getAttribute("#continue", "href"))!;
    expect(callback.startsWith(CALLBACK("github"))).toBe(true);

    const victim = await newBrowserProfile(browser);
    const landed = await landing(victim.page, CLIENT_URL, () => victim.page.goto(callback));
    expect(landed.searchParams.get("error")).toBe("invalid-state");
    expect(landed.searchParams.has("refreshToken")).toBe(false);

    const own = await landing(attacker.page, REDIRECT, () => attacker.page.click("#continue"));
    expect(own.searchParams.get("refreshToken")).toBeTruthy();
    await Promise.all([attacker.context.close(), victim.context.close()]);
  }, 60_000);

  // Chromium through the fake Apple and a cross-site form post: ~2.4 s on a quiet machine, 9.2 s on a busy one.
  it("Apple: the cross-site form post is passed on to the GET callback, which carries the binding cookie and signs in", async () => {
    const email = uniqueEmail("apple-browser");
    await nextPersonAtProvider({ fake_id: `apple-${Date.now()}`, fake_email: email });
    const { context, page } = await newBrowserProfile(browser);
    const toCallback: Request[] = [];
    page.on("request", (request) => {
      if (request.url().startsWith(CALLBACK("apple"))) toCallback.push(request);
    });
    const nhost = client();
    await page.goto(nhost.auth.signInProviderURL("apple", { redirectTo: REDIRECT }));
    // At Apple (localhost: another site than the service's 127.0.0.1) the person continues; the form posts cross-site.
    expect(new URL(page.url()).hostname).toBe("localhost");
    const back = await landing(page, REDIRECT, () => page.click("button[type=submit]"));
    expect(back.searchParams.get("error")).toBeNull();
    const { body: session } = await nhost.auth.refreshToken({
      refreshToken: back.searchParams.get("refreshToken")!,
    });
    expect(session.user).toMatchObject({ email, displayName: "Ada Lovelace" });

    // What the browser sent: the cross-site POST without the binding cookie, then the GET with it.
    expect(toCallback.map((request) => request.method())).toEqual(["POST", "GET"]);
    expect((await toCallback[0]!.allHeaders()).cookie ?? "").not.toContain("provider-flow=");
    expect((await toCallback[1]!.allHeaders()).cookie ?? "").toContain("provider-flow=");
    await context.close();
  }, 60_000);
});
