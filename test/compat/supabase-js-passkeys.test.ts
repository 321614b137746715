// supabase-js's passkeys in a real browser: Chromium (headless, over CDP) with a virtual authenticator, the real
// `@supabase/supabase-js` bundled into a page this test serves, against `wrangler dev`. What the Workers pool cannot
// show: the browser's own `navigator.credentials`, WebAuthn L3's JSON parsers and `toJSON`, and the face's CORS for a
// page on another origin (PATCH and DELETE included).
import { createServer, type Server } from "node:http";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { HEADLESS_SHELL as CHROMIUM, canRun, launch } from "./chromium";
import { followGoTrueLink, mailedLink, PASSWORD, serverUrl, uniqueEmail } from "./client";
import { addVirtualAuthenticator } from "./virtual-authenticator";

const pagePort = inject("pagePort");
const keys = inject("supabaseKeys");

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>supabase-js passkeys</title></head><body>
<script type="module">
  import { createClient } from "/supabase.js";
  const FACE = ${JSON.stringify(`${serverUrl}/supabase`)};
  const KEY = ${JSON.stringify(keys.publishable)};
  const client = () =>
    createClient(FACE, KEY, { auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false } });
  // What crosses back to the test: JSON, the error as its code and status.
  const plain = ({ data, error }) =>
    JSON.parse(JSON.stringify({ data, error: error && { code: error.code, status: error.status } }));
  const claims = (token) => JSON.parse(atob(token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")));
  window.registerAndRename = async (email, password) => {
    const supabase = client();
    const signedIn = await supabase.auth.signInWithPassword({ email, password });
    if (signedIn.error) return plain(signedIn);
    const added = await supabase.auth.registerPasskey();
    if (added.error) return plain(added);
    return plain(await supabase.auth.passkey.update({ passkeyId: added.data.id, friendlyName: "This browser" }));
  };
  window.signInListAndDelete = async () => {
    const supabase = client();
    const signedIn = await supabase.auth.signInWithPasskey();
    if (signedIn.error) return plain(signedIn);
    const listed = await supabase.auth.passkey.list();
    const removed = await supabase.auth.passkey.delete({ passkeyId: listed.data[0].id });
    return {
      user: signedIn.data.user.email,
      amr: claims(signedIn.data.session.access_token).amr,
      listed: listed.data,
      removed: plain(removed),
      after: plain(await supabase.auth.passkey.list()),
    };
  };
  window.ready = true;
</script></body></html>`;

interface TestPage {
  ready?: boolean;
  registerAndRename(email: string, password: string): Promise<{ data: unknown; error: unknown }>;
  signInListAndDelete(): Promise<Record<string, unknown>>;
}

// Without Debian's Chromium the test is skipped on a developer's machine; CI installs it, so there it always runs.
const runs = canRun(CHROMIUM);

describe.skipIf(!runs)("supabase-js passkeys in Chromium with a virtual authenticator", () => {
  let server: Server;

  beforeAll(async () => {
    const bundle = await build({
      stdin: { contents: 'export { createClient } from "@supabase/supabase-js";', resolveDir: process.cwd() },
      bundle: true,
      format: "esm",
      platform: "browser",
      write: false,
    });
    const script = bundle.outputFiles[0]!.text;
    server = createServer((request, response) => {
      const js = request.url === "/supabase.js";
      response.writeHead(200, { "content-type": js ? "text/javascript" : "text/html; charset=utf-8" });
      response.end(js ? script : PAGE);
    });
    await new Promise<void>((resolve) => server.listen(pagePort, "127.0.0.1", resolve));
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("registerPasskey, passkey.update, signInWithPasskey, passkey.list and passkey.delete from a page", async () => {
    const email = uniqueEmail("sb-passkey");
    const signUp = await fetch(`${serverUrl}/supabase/auth/v1/signup`, {
      method: "POST",
      headers: { apikey: keys.publishable, "content-type": "application/json" },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(signUp.status).toBe(200);
    await followGoTrueLink(await mailedLink(email));

    const browser = await launch(CHROMIUM);
    try {
      const context = await browser.newContext();
      const page = await context.newPage();
      const { cdp, authenticatorId } = await addVirtualAuthenticator(context, page);
      // localhost is a secure context, so WebAuthn runs over plain HTTP here.
      await page.goto(`http://localhost:${pagePort}/`);
      await page.waitForFunction(() => (globalThis as unknown as TestPage).ready === true);

      const renamed = await page.evaluate(
        ([address, password]) => (globalThis as unknown as TestPage).registerAndRename(address!, password!),
        [email, PASSWORD],
      );
      expect(renamed).toMatchObject({ data: { friendly_name: "This browser" }, error: null });
      const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
      expect(credentials).toHaveLength(1);
      expect(credentials[0]!.isResidentCredential).toBe(true);

      const signedIn = await page.evaluate(() => (globalThis as unknown as TestPage).signInListAndDelete());
      expect(signedIn).toMatchObject({
        user: email,
        amr: [{ method: "passkey" }],
        listed: [{ friendly_name: "This browser" }],
        removed: { data: null, error: null },
        after: { data: [], error: null },
      });
    } finally {
      await browser.close();
    }
  }, 60_000);
});
