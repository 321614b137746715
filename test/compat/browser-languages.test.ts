// Every page a person sees, in each of the six languages (contract §13), in Chromium: the browser's language is the
// context's locale (its Accept-Language), and every page must answer in it (`<html lang>`), pass axe with no serious or
// critical violation at 1280 and at 390 px, and fit 390 px without sideways scrolling (long German words must wrap).
// Threats: a page that speaks English to a Japanese reader (a string left out of the catalogue, a page that never asks
// for the language), and a translation that breaks the layout or the contrast. PAGES_SCREENSHOTS=<dir> keeps a
// screenshot of each page at 390 px per language, `<dir>/<language>/<page>.png`.
import { mkdirSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import * as oidc from "openid-client";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { totpCode, totpStep } from "../../src/auth/mfa/totp";
import { CATALOGUES } from "../../src/browser/text";
import { expectAccessible, expectNoSidewaysScroll } from "./axe";
import { HEADLESS_SHELL as CHROMIUM, canRun, launch } from "./chromium";
import { authUrl, followLink, latestMail, mailedLink, PASSWORD, REDIRECT, uniqueEmail } from "./client";
import { authorizationRequest, discover, registerClient } from "./relying-party";

const runs = canRun(CHROMIUM);
const screenshots = process.env.PAGES_SCREENSHOTS;
const adminSecret = inject("adminSecret");
/**
 * The languages driven in Chromium with axe: English (the shape), German (the longest words, the layout's test) and
 * Japanese (another script). The other three are checked without a browser, below: the same templates with other
 * words, so what can differ is the language and an untranslated sentence, both of which are in the HTML.
 */
const LANGUAGES = ["en", "de", "ja"] as const;
const WITHOUT_BROWSER = ["fr", "es", "pt"] as const;

/** Turns TOTP on for the user (contract §3.2), so a sign-in asks for the code: the MFA page. */
async function turnOnTotp(accessToken: string): Promise<void> {
  const headers = { authorization: `Bearer ${accessToken}`, "content-type": "application/json" };
  const generated = await fetch(`${authUrl}/mfa/totp/generate`, { headers });
  const secret = decodeBase32IgnorePadding(((await generated.json()) as { totpSecret: string }).totpSecret);
  const activated = await fetch(`${authUrl}/user/mfa`, {
    method: "POST",
    headers,
    body: JSON.stringify({ code: totpCode(secret, totpStep(Date.now())), activeMfaType: "totp" }),
  });
  expect(activated.status).toBe(200);
}

/**
 * A person whose account speaks `language` (its `locale`): the pages that know who is signed in speak the user's
 * language before the browser's (contract §13), so the user's must be the one under test.
 */
async function verifiedUserIn(language: string): Promise<{ email: string }> {
  const email = uniqueEmail(`lang-${language}`);
  const signedUp = await fetch(`${authUrl}/signup/email-password`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password: PASSWORD, options: { redirectTo: REDIRECT, locale: language } }),
  });
  expect(signedUp.status).toBe(200);
  await followLink(await mailedLink(email));
  return { email };
}

/**
 * A person of `language` with TOTP on: the MFA step knows who signs in, so it speaks the user's language before the
 * browser's (the user's `locale`, as the account center does), and the user's must be the one under test.
 */
async function totpUserIn(language: string): Promise<string> {
  const { email } = await verifiedUserIn(language);
  const signedIn = await fetch(`${authUrl}/signin/email-password`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  const { session } = (await signedIn.json()) as { session: { accessToken: string } };
  await turnOnTotp(session.accessToken);
  return email;
}

/** A `connect` start URL (signInProviderURL with an access token of `email`'s): the page asks before it links. */
async function connectUrl(email: string): Promise<string> {
  const signedIn = await fetch(`${authUrl}/signin/email-password`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  const { session } = (await signedIn.json()) as { session: { accessToken: string } };
  return `${authUrl}/signin/provider/github?${new URLSearchParams({ redirectTo: REDIRECT, connect: session.accessToken })}`;
}

/** An organization owned by `ownerEmail` that invites someone: the invitation page's link. */
async function invitationLink(ownerEmail: string): Promise<string> {
  const headers = { "x-hasura-admin-secret": adminSecret, "content-type": "application/json" };
  const found = await fetch(`${authUrl}/admin/users?q=${encodeURIComponent(ownerEmail)}`, { headers });
  const ownerUserId = ((await found.json()) as { items: { id: string }[] }).items[0]!.id;
  const created = await fetch(`${authUrl}/admin/orgs`, {
    method: "POST",
    headers,
    body: JSON.stringify({ name: "Acme Robotics", ownerUserId }),
  });
  const orgId = ((await created.json()) as { id: string }).id;
  const invitee = uniqueEmail("lang-invited");
  await fetch(`${authUrl}/admin/orgs/${orgId}/invitations`, {
    method: "POST",
    headers,
    body: JSON.stringify({ email: invitee, role: "member" }),
  });
  return /(http\S+\/oauth2\/invitation\?ticket=\S+)/.exec((await latestMail(invitee)).text)![1]!;
}

// The languages run side by side, each in its own browser context (its own cookies): the suite waits on Chromium
// and the server far more than it computes.
describe.skipIf(!runs).concurrent("every page in English, German and Japanese, in Chromium", () => {
  let browser: Browser;
  let app: ReturnType<typeof createServer>;
  let rp: { clientId: string; start: (extra?: Record<string, string>) => Promise<string> };
  beforeAll(async () => {
    browser = await launch(CHROMIUM);
    app = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "text/html" });
      response.end(
        "<!doctype html><html lang=en><title>Acme Notes</title><main>back at the app</main></html>",
      );
    });
    await new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve));
    const redirectUri = `http://127.0.0.1:${(app.address() as AddressInfo).port}/callback`;
    const registered = await registerClient({
      clientName: "Acme Notes",
      redirectUris: [redirectUri],
      scopes: ["openid", "profile", "email", "offline_access"],
    });
    const config = await discover(registered, oidc.ClientSecretBasic(registered.clientSecret));
    rp = {
      clientId: registered.clientId,
      start: async (extra = {}) =>
        (await authorizationRequest(config, redirectUri, "openid email profile", extra)).url.toString(),
    };
  });
  afterAll(async () => {
    await browser?.close();
    app?.close();
  });

  it.each(LANGUAGES)(
    "%s: every page speaks it, passes axe (English at 1280 and 390 px, the others at 390) and fits 390 px",
    async (language) => {
      const { email } = await verifiedUserIn(language);
      const totpEmail = await totpUserIn(language);
      const invitation = await invitationLink(email);
      const context = await browser.newContext({
        viewport: { width: 1280, height: 900 },
        bypassCSP: true,
        locale: language,
      });
      const page = await context.newPage();
      // Each step takes well under a second; 20 s is for a machine running the workers files beside (scripts/test.mjs).
      page.setDefaultTimeout(20_000);
      const seen: string[] = [];
      /**
       * The page as it is: in the language, accessible, fitting 390 px; its screenshot at 390. Axe runs at both
       * widths in English and at 390 px in the others: what a language can break (its `lang`, a label or a name left
       * empty by its catalogue, a longer word that pushes the layout) shows at either width, and the narrow layout is
       * where its longer words press; what only the 1280 px layout can break is the template's, the same in every
       * language, which English checks. Each axe run is about a second of Chromium on the 2-core machine.
       */
      const check = async (name: string) => {
        seen.push(name);
        expect(await page.getAttribute("html", "lang"), `${name} in ${language}`).toBe(language);
        if (language === "en") await expectAccessible(page, `${name} (${language}) at 1280px`);
        await page.setViewportSize({ width: 390, height: 900 });
        await expectAccessible(page, `${name} (${language}) at 390px`);
        await expectNoSidewaysScroll(page, `${name} (${language})`);
        if (screenshots) {
          mkdirSync(join(screenshots, language), { recursive: true });
          await page.screenshot({ path: join(screenshots, language, `${name}.png`), fullPage: true });
        }
        await page.setViewportSize({ width: 1280, height: 900 });
      };
      const submit = (field: string) => page.click(`form:has(${field}) button[type=submit]`);

      await signedOutPages(page, check, submit);
      // The question before a provider is linked from a URL (src/providers/ask-first.ts): the browser's language.
      await page.goto(await connectUrl(email));
      await page.waitForSelector("#ask-continue");
      await check("link-question");

      // The sign-in page of an OAuth2 request, its views, and what its forms lead to.
      await page.goto(await rp.start());
      const signInUrl = page.url();
      await check("sign-in");
      await page.goto(`${signInUrl}&view=sign-up`);
      await check("sign-up");
      await page.fill("#email", uniqueEmail(`lang-signup-${language}`));
      await page.fill("#new-password", PASSWORD);
      // The form's answer is a page with an h1 like the form's own: wait for the page the POST loads, or the next goto
      // races the navigation still in flight (a 10 s timeout once, on a busy machine).
      const loaded = page.waitForEvent("load");
      await submit("#new-password");
      await loaded;
      await check("sign-up-sent");
      await page.goto(`${signInUrl}&view=reset`);
      await check("reset");
      await page.goto(signInUrl);
      await page.fill("#email", totpEmail);
      await page.fill("#password", PASSWORD);
      await submit("#password");
      await page.waitForSelector("#otp");
      await check("mfa");
      await page.goto(signInUrl);
      await page.fill("#email", email);
      await page.fill("#password", "not the password");
      await submit("#password");
      await page.waitForSelector(".error");
      await check("sign-in-error");
      await page.fill("#password", PASSWORD);
      await submit("#password");
      await page.waitForSelector("ul.scopes");
      await check("consent");

      // Signed in on the pages: what a relying party or a device leads to, and logout.
      await page.goto(await rp.start({ prompt: "select_account" }));
      await page.waitForSelector("main form");
      await check("select-account");
      await page.goto(await rp.start({ prompt: "login" }));
      await page.waitForSelector("#reauth-password");
      await check("reauth");
      await page.goto(`${authUrl}/oauth2/device`);
      await page.waitForSelector("#user_code");
      await check("device");
      await page.goto(invitation);
      await page.waitForSelector("button[value=allow]");
      await check("invitation");
      await signedInPages(page, check, submit);
      await page.goto(`${authUrl}/oauth2/logout?client_id=${rp.clientId}`);
      await page.waitForSelector("#logout-confirm");
      await check("logout-confirm");
      await page.click("#logout-confirm");
      await page.waitForSelector("main h1");
      await check("logged-out");
      expect(seen.length).toBeGreaterThanOrEqual(15);
      await context.close();
    },
    180_000,
  );
});

type Check = (name: string) => Promise<void>;
type Submit = (field: string) => Promise<void>;

/** Pages with nobody signed in: a problem page, and the hosted pages of a first-party app (contract §13). */
async function signedOutPages(page: Page, check: Check, _submit: Submit): Promise<void> {
  await page.goto(`${authUrl}/oauth2/interaction?request_id=${"x".repeat(43)}`);
  await check("problem");
  const redirectTo = encodeURIComponent(REDIRECT);
  await page.goto(`${authUrl}/signin?redirectTo=${redirectTo}`);
  await page.waitForSelector("#password");
  await check("hosted-sign-in");
  await page.goto(`${authUrl}/signup?redirectTo=${redirectTo}`);
  await page.waitForSelector("#new-password");
  await check("hosted-sign-up");
  await page.goto(`${authUrl}/reset?redirectTo=${redirectTo}`);
  await page.waitForSelector("#email");
  await check("hosted-reset");
}

/**
 * Pages of a signed-in person: the account center (contract §13), the two-step set-up it leads to, an access token
 * shown once; and the lockout mail's link page (here with a link that is not one).
 */
async function signedInPages(page: Page, check: Check, submit: Submit): Promise<void> {
  await page.goto(`${authUrl}/account`);
  await page.waitForSelector("main h1");
  await check("account");
  await page.click("form[action$='/security/totp/start'] button[type=submit]");
  await page.waitForSelector("form[action$='/security/totp/confirm']");
  await check("account-totp-set-up");
  await page.goto(`${authUrl}/account`);
  await page.fill("#token-name", "Build server");
  await submit("#token-name");
  await page.waitForSelector("main h1");
  await check("account-token-shown");
  await page.goto(`${authUrl}/unlock?ticket=not-a-ticket`);
  await check("unlock-link-broken");
}

/** Every sentence of a catalogue (its strings, nested), by key path. */
function sentences(value: unknown, path = ""): [string, string][] {
  if (typeof value === "string") return [[path, value]];
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([key, inner]) => sentences(inner, path ? `${path}.${key}` : key));
}

/**
 * The English sentences a page in `language` must not show: those the language's catalogue words differently
 * (long enough not to be a brand or a word both share). HTML escapes as the pages do.
 */
function englishOnly(language: (typeof WITHOUT_BROWSER)[number]): string[] {
  const own = new Map(sentences(CATALOGUES[language]));
  return sentences(CATALOGUES.en)
    .filter(([path, text]) => text.length > 12 && !text.includes("<") && own.get(path) !== text)
    .map(([, text]) => text.replaceAll("&", "&amp;").replaceAll('"', "&quot;").replaceAll("'", "&#39;"));
}

// French, Spanish and Portuguese without a browser: each page a signed-out person reaches by a link, fetched with the
// browser's Accept-Language, answers in the language (`<html lang>`) and shows no English sentence its catalogue
// translates (a string left out of the catalogue, a page that never asks for the language). Axe and the 390 px layout
// are the templates', checked above in three languages; the signed-in pages' language: test/i18n/page-languages.test.ts
// and test/account-center/ (six languages each).
describe.concurrent("the signed-out pages in French, Spanish and Portuguese, without a browser", () => {
  const redirectTo = encodeURIComponent(REDIRECT);
  const PAGES = {
    problem: `/oauth2/interaction?request_id=${"x".repeat(43)}`,
    "hosted-sign-in": `/signin?redirectTo=${redirectTo}`,
    "hosted-sign-up": `/signup?redirectTo=${redirectTo}`,
    "hosted-reset": `/reset?redirectTo=${redirectTo}`,
    device: "/oauth2/device",
    "unlock-link-broken": "/unlock?ticket=not-a-ticket",
  };

  it.each(WITHOUT_BROWSER)("%s: every page speaks it, with no sentence left in English", async (language) => {
    const english = englishOnly(language);
    expect(english.length).toBeGreaterThan(50);
    for (const [name, path] of Object.entries(PAGES)) {
      const response = await fetch(`${authUrl}${path}`, { headers: { "accept-language": language } });
      const html = await response.text();
      expect(html, `${name} in ${language}`).toMatch(new RegExp(`<html lang="?${language}"?[ >]`));
      const untranslated = english.filter((sentence) => html.includes(sentence));
      expect(untranslated, `${name} in ${language}: English left in the page`).toEqual([]);
    }
  });
});
