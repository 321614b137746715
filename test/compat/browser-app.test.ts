// A front-end on its own origin, as a newcomer builds one after the README: a page on http://127.0.0.1:<port> that
// bundles @nhost/nhost-js, whose origin was added to AUTH_CORS_ORIGINS (the quick start's instruction), signs up, signs
// in, reads the user and uploads a file from Chromium against `wrangler dev`. Every call is a cross-origin fetch with
// credentials-free CORS, so a wrong CORS answer fails here as "Failed to fetch", as it would for the newcomer.
import { createServer, type Server } from "node:http";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { HEADLESS_SHELL as CHROMIUM, canRun, launch } from "./chromium";
import { authUrl, followLink, mailedLink, PASSWORD, REDIRECT, serverUrl, uniqueEmail } from "./client";

const runs = canRun(CHROMIUM);
const appPort = inject("appPort");
const appOrigin = `http://127.0.0.1:${appPort}`;

/** The app's own code: what a front-end written against the client's documentation does. */
const APP = `
import { createClient } from "@nhost/nhost-js";
const nhost = createClient({ authUrl: ${JSON.stringify(authUrl)}, storageUrl: ${JSON.stringify(`${serverUrl}/storage/v1`)} });
window.app = {
  signUp: async (email, password) =>
    (await nhost.auth.signUpEmailPassword({ email, password, options: { redirectTo: ${JSON.stringify(REDIRECT)} } })).body,
  signIn: async (email, password) => (await nhost.auth.signInEmailPassword({ email, password })).body.session.user.id,
  me: async () => (await nhost.auth.getUser()).body,
  upload: async (text) => {
    const uploaded = await nhost.storage.uploadFiles({
      "file[]": [new File([text], "hello.txt", { type: "text/plain" })],
    });
    const file = uploaded.body.processedFiles[0];
    const download = await nhost.storage.getFile(file.id);
    return { id: file.id, name: file.name, text: await download.body.text() };
  },
};
`;

describe.skipIf(!runs)("a front-end on another origin, with @nhost/nhost-js in Chromium", () => {
  let server: Server;

  beforeAll(async () => {
    const bundled = await build({
      stdin: { contents: APP, resolveDir: process.cwd(), loader: "js" },
      bundle: true,
      format: "iife",
      platform: "browser",
      write: false,
      logLevel: "silent",
    });
    const script = bundled.outputFiles[0]!.text;
    server = createServer((request, response) => {
      if (request.url === "/app.js") {
        response.writeHead(200, { "content-type": "text/javascript" });
        response.end(script);
        return;
      }
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      response.end(
        '<!doctype html><html><head><meta charset="utf-8"><title>My app</title><script src="/app.js"></script></head><body>My app</body></html>',
      );
    });
    await new Promise<void>((resolve) => server.listen(appPort, "127.0.0.1", resolve));
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  // Chromium running the client in a page against wrangler dev: ~4 s on a quiet machine, 10 s on a busy one.
  it("signs up, signs in, reads the user and uploads a file", async () => {
    const browser = await launch(CHROMIUM);
    try {
      const page = await browser.newPage();
      const failures: string[] = [];
      page.on("requestfailed", (request) =>
        failures.push(`${request.url()} ${request.failure()?.errorText}`),
      );
      await page.goto(`${appOrigin}/`);
      const email = uniqueEmail("front-end");
      type App = {
        signUp(email: string, password: string): Promise<{ session: unknown }>;
        signIn(email: string, password: string): Promise<string>;
        me(): Promise<{ email: string }>;
        upload(text: string): Promise<{ id: string; name: string; text: string }>;
      };
      const app = (name: keyof App, ...args: string[]) =>
        page.evaluate(
          ([name, args]) =>
            (globalThis as unknown as { app: Record<string, (...a: string[]) => unknown> }).app[name]!(
              ...args,
            ),
          [name, args] as const,
        );
      expect(await app("signUp", email, PASSWORD)).toEqual({ session: null });
      // The person follows the link in the mail (the development inbox), as the quick start says.
      await followLink(await mailedLink(email));
      expect(await app("signIn", email, PASSWORD)).toEqual(expect.any(String));
      expect(await app("me")).toMatchObject({ email });
      expect(await app("upload", "hello from the front-end")).toMatchObject({
        name: "hello.txt",
        text: "hello from the front-end",
      });
      expect(failures).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 60_000);
});
