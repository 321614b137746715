// The example app of examples/hosted-login, built with Vite as its README says and driven in Chromium against
// `wrangler dev`: the hosted sign-in round trip (contract §13) lands signed in with the refresh token gone from the
// address bar; a sign-up with the app's own form finishes through the mailed link; an uploaded picture shows in an
// <img> resized by the storage API through a presigned URL; sign-out ends the session at the service.
// Threats covered: a refresh token left in the address bar (history, bookmarks, copied links) or sent onwards in a
// Referer; a sign-out that only forgets the session in the browser (its refresh token must stop working at once).
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { basename, extname, join } from "node:path";
import { encode as encodePng } from "fast-png";
import type { Browser, Page } from "playwright-core";
import { build } from "vite";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { HEADLESS_SHELL as CHROMIUM, canRun, launch } from "./chromium";
import { authUrl, mailedLink, PASSWORD, serverUrl, uniqueEmail, verifiedUser } from "./client";

const runs = canRun(CHROMIUM);
/** The front-end tests' origin, among the compat server's CORS origins and allowed redirect URLs (wrangler-dev.ts). */
const appOrigin = `http://127.0.0.1:${inject("appPort")}`;
const HOME = `${appOrigin}/`;

/** Builds the example into `outDir` with the service's URLs, as `VITE_AUTH_URL=… npx vite build` would. */
async function buildExample(outDir: string) {
  await build({
    root: join(process.cwd(), "examples", "hosted-login"),
    // Only what this test gives: no vite.config or .env a developer may have left beside the example.
    configFile: false,
    envDir: false,
    logLevel: "silent",
    define: {
      "import.meta.env.VITE_AUTH_URL": JSON.stringify(authUrl),
      "import.meta.env.VITE_STORAGE_URL": JSON.stringify(`${serverUrl}/storage/v1`),
    },
    build: { outDir, emptyOutDir: true },
  });
}

const TYPES: Record<string, string> = {
  ".js": "text/javascript",
  ".css": "text/css",
  ".html": "text/html; charset=utf-8",
};

/** Every Referer the app's host received: what its access log would keep. */
const referers: string[] = [];

/** The built files, as any static host serves a single-page app: assets by name, index.html for every other path. */
function serveBuilt(outDir: string): Promise<Server> {
  const server = createServer((request, response) => {
    if (request.headers.referer) referers.push(request.headers.referer);
    const path = new URL(request.url ?? "/", appOrigin).pathname;
    const file = path.startsWith("/assets/")
      ? join(outDir, "assets", basename(path))
      : join(outDir, "index.html");
    if (!existsSync(file)) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
    response.end(readFileSync(file));
  });
  return new Promise((resolve) =>
    server.listen(Number(new URL(appOrigin).port), "127.0.0.1", () => resolve(server)),
  );
}

/** A 400×300 PNG (a gradient), the picture the person uploads. */
function picture(): Buffer {
  const [width, height] = [400, 300];
  const pixels = new Uint8Array(width * height * 3);
  for (let i = 0; i < width * height; i++) pixels.set([i % width, (i / width) % 256, 128], i * 3);
  return Buffer.from(encodePng({ width, height, data: pixels, channels: 3, depth: 8 }));
}

/** The page's globals the callbacks below read (the compat tests are type-checked without the DOM library). */
type AppGlobals = {
  localStorage: { getItem(key: string): string | null };
  document: {
    querySelector(selector: string): {
      hidden: boolean;
      complete: boolean;
      naturalWidth: number;
      naturalHeight: number;
      src: string;
    } | null;
  };
};

/** The app after it read its address (a refresh token, if any, exchanged). */
async function openApp(page: Page, url = HOME) {
  await page.goto(url);
  await page.waitForSelector("body[data-ready=true]");
}

async function signedInAs(page: Page, email: string) {
  await page.waitForSelector("#signed-in:not([hidden])");
  expect(await page.textContent("#who")).toContain(email);
  // The token left the address bar before anything else happened, and went to the app's host in no Referer (its
  // script and style were fetched while the address still held it).
  expect(page.url()).toBe(HOME);
  expect(referers.filter((referer) => referer.includes("refreshToken"))).toEqual([]);
}

/** The refresh token nhost-js keeps in localStorage (its default storage in a browser). */
async function storedRefreshToken(page: Page): Promise<string | null> {
  const stored = await page.evaluate(() =>
    (globalThis as unknown as AppGlobals).localStorage.getItem("nhostSession"),
  );
  return stored ? (JSON.parse(stored) as { refreshToken: string }).refreshToken : null;
}

/** Signs out with the app's button; the session's refresh token no longer works at the service. */
async function signOut(page: Page) {
  const refreshToken = await storedRefreshToken(page);
  expect(refreshToken).toBeTruthy();
  await page.click("#sign-out");
  await page.waitForSelector("#signed-out:not([hidden])");
  expect(await storedRefreshToken(page)).toBeNull();
  const refresh = await fetch(`${authUrl}/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ refreshToken }),
  });
  expect(refresh.status).toBe(401);
}

describe.skipIf(!runs)("the hosted-login example app (Vite + nhost-js) in Chromium", () => {
  let outDir: string;
  let server: Server;
  let browser: Browser;
  let page: Page;
  const failures: string[] = [];

  beforeAll(async () => {
    outDir = mkdtempSync(join(tmpdir(), "hosted-login-example-"));
    await buildExample(outDir);
    server = await serveBuilt(outDir);
    browser = await launch(CHROMIUM);
    // One context for both journeys: the second is a new visitor to the app, not to the service's pages.
    page = await (await browser.newContext()).newPage();
    page.on("requestfailed", (request) => failures.push(`${request.url()} ${request.failure()?.errorText}`));
    page.on("pageerror", (error) => failures.push(`page error: ${error.message}`));
    // A policy violation (the service's pages' CSP holds a form's redirect chain to form-action) says why a step hung.
    page.on("console", (message) => {
      if (/Content Security Policy/i.test(message.text())) failures.push(message.text());
    });
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  // Chromium, two page loads of the service and one image transformation: ~6 s on a quiet machine.
  beforeEach(() => {
    failures.length = 0;
  });

  it("signs in on the hosted page, comes back signed in, shows an uploaded picture resized, and signs out", async () => {
    const { email } = await verifiedUser("hosted-example");
    await openApp(page);
    const signIn = await page.getAttribute("#sign-in", "href");
    expect(signIn).toBe(`${authUrl}/signin?redirectTo=${encodeURIComponent(HOME)}`);
    await page.click("#sign-in");
    // The service's own page, under the request it saved for the app.
    await page.waitForURL((url) => url.toString().startsWith(`${authUrl}/oauth2/interaction`));
    await page.fill("#email", email);
    await page.fill("#password", PASSWORD);
    await page.click("button:has-text('Sign in')");
    await page
      .waitForURL((url) => url.origin === appOrigin, { timeout: 15_000 })
      .catch((error: Error) => {
        throw new Error(`still at ${page.url()} (${failures.join("; ")}): ${error.message}`);
      });
    await signedInAs(page, email);

    // The picture: uploaded with the user's token, shown through a presigned URL asking the storage API for 120 px.
    await page.setInputFiles("#file", { name: "photo.png", mimeType: "image/png", buffer: picture() });
    await page.click("button:has-text('Upload')");
    await page.waitForFunction(() => {
      const image = (globalThis as unknown as AppGlobals).document.querySelector("#thumbnail");
      return Boolean(image && !image.hidden && image.complete && image.naturalWidth > 0);
    });
    const shown = await page.evaluate(() => {
      const image = (globalThis as unknown as AppGlobals).document.querySelector("#thumbnail")!;
      return { src: image.src, naturalWidth: image.naturalWidth, naturalHeight: image.naturalHeight };
    });
    expect(shown).toMatchObject({ naturalWidth: 120, naturalHeight: 90 });
    const src = new URL(shown.src);
    expect(src.pathname).toMatch(/^\/storage\/v1\/files\/[0-9a-f-]{36}\/presignedurl\/contents$/);
    expect(src.searchParams.get("w")).toBe("120");

    // The account link opens the account center, signed in by the hosted sign-in's browser session.
    const account = await page.getAttribute("#account", "href");
    expect(account).toBe(`${authUrl}/account`);
    const center = await page.goto(account!);
    expect(center?.status()).toBe(200);
    expect(await page.content()).toContain(email);
    await openApp(page);

    await signOut(page);
    expect(failures).toEqual([]);
  }, 60_000);

  it("signs up with the app's own form; the mailed link comes back to the app signed in", async () => {
    const email = uniqueEmail("hosted-example-signup");
    await openApp(page);
    await page.fill("#sign-up-email", email);
    await page.fill("#sign-up-password", PASSWORD);
    await page.click("button:has-text('Create an account')");
    await page.waitForSelector("#check-inbox:not([hidden])");
    expect(await page.textContent("#check-inbox")).toContain(email);

    // The person opens the verification link from their mail (the development mailbox) in the same browser.
    const link = await mailedLink(email);
    expect(link.searchParams.get("redirectTo")).toBe(HOME);
    await openApp(page, link.toString());
    await signedInAs(page, email);

    await signOut(page);
    expect(failures).toEqual([]);
  }, 60_000);
});
