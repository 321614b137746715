// Related origins (WebAuthn L3 §5.11, docs/passkeys.md §5) in a real browser: Debian's Chromium, with its DevTools
// virtual authenticator, on a page of another registrable domain (https://shop.example.de) registers and signs in
// with a passkey whose RP ID is the compat server's (`localhost`), after fetching `https://localhost/.well-known/webauthn`
// and finding the shop listed; a page of an unlisted domain is refused by the browser itself.
//
// How a browser on one machine sees three https sites (no port 443, no trusted CA needed):
// - `--host-resolver-rules` maps each name's port 443 to one TLS server of this test on a loopback port, so the
//   origins have no port, as in production, and the server's AUTH_WEBAUTHN_RELATED_ORIGINS names them plainly;
// - `--ignore-certificate-errors-spki-list` makes Chromium accept that server's self-signed certificate as valid
//   (a certificate error would leave the page insecure, and Chromium refuses WebAuthn on such a page);
// - the TLS server plays two parts: `https://localhost` forwards `/.well-known/webauthn` to the service, as the
//   docs' forwarder on the RP ID's domain does, and the shop's and the stranger's origins serve the app's page. The
//   page calls the service's API directly (http://127.0.0.1, loopback: no mixed content), allowed by CORS.
// Chromium 156 enables related origins by default (feature WebAuthenticationRelatedOrigin); no switch for it.
import { createHash, createPublicKey } from "node:crypto";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import selfsigned from "selfsigned";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { HEADLESS_SHELL as CHROMIUM, canRun, launch } from "./chromium";
import { authUrl, followLink, mailedLink, REDIRECT, serverUrl, uniqueEmail } from "./client";
import { addVirtualAuthenticator } from "./virtual-authenticator";

const runs = canRun(CHROMIUM);
/** The compat server's AUTH_WEBAUTHN_RP_ID (test/compat/wrangler-dev.ts): where the browser reads the list. */
const RP_ID = "localhost";
/** Listed in the server's AUTH_WEBAUTHN_RELATED_ORIGINS (and AUTH_CORS_ORIGINS): another registrable domain. */
const SHOP = inject("relatedOrigin");
/** Listed nowhere. */
const STRANGER = "https://shop.example.net";

/** The app's page: fetch the options, call navigator.credentials, post the credential back, as an app does. */
const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>Shop</title></head><body>
<script>
  const AUTH = ${JSON.stringify(authUrl)};
  async function post(path, body) {
    const response = await fetch(AUTH + path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const json = await response.json();
    if (!response.ok) throw new Error(path + ": " + JSON.stringify(json));
    return json;
  }
  const origin = (credential) => JSON.parse(new TextDecoder().decode(credential.response.clientDataJSON)).origin;
  window.signUpWithKey = async (email) => {
    const options = await post("/signup/webauthn", { email, options: { redirectTo: ${JSON.stringify(REDIRECT)} } });
    const credential = await navigator.credentials.create({
      publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options),
    });
    const answer = await post("/signup/webauthn/verify", { credential: credential.toJSON(), nickname: "shop key" });
    return { rpId: options.rp.id, origin: origin(credential), answer };
  };
  window.signInWithKey = async () => {
    const options = await post("/signin/webauthn", {});
    const credential = await navigator.credentials.get({
      publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options),
    });
    const answer = await post("/signin/webauthn/verify", { credential: credential.toJSON() });
    return { rpId: options.rpId, origin: origin(credential), answer };
  };
  // The stranger's attempt: the browser decides before any request to the service or the authenticator.
  window.tryRpId = async (rpId) => {
    try {
      await navigator.credentials.get({ publicKey: { rpId, challenge: crypto.getRandomValues(new Uint8Array(32)) } });
      return "allowed";
    } catch (error) {
      return error.name + ": " + error.message;
    }
  };
</script></body></html>`;

interface Ceremony {
  rpId: string;
  origin: string;
  answer: { session: { user: { id: string; email: string } } | null };
}
/** What the page's script defines on its global object (run in the browser by `page.evaluate`). */
interface ShopPage {
  signUpWithKey(email: string): Promise<Ceremony>;
  signInWithKey(): Promise<Ceremony>;
  tryRpId(rpId: string): Promise<string>;
}

/** One TLS server for all three names, with a throwaway certificate; its SPKI hash for Chromium's switch. */
async function startTlsFront() {
  const hosts = [RP_ID, new URL(SHOP).hostname, new URL(STRANGER).hostname];
  const pems = await selfsigned.generate([{ name: "commonName", value: RP_ID }], {
    notAfterDate: new Date(Date.now() + 86_400_000),
    keyType: "ec",
    extensions: [{ name: "subjectAltName", altNames: hosts.map((value) => ({ type: 2, value })) }],
  });
  const spki = createPublicKey(pems.cert).export({ type: "spki", format: "der" });
  /** Every `/.well-known/webauthn` the browser fetched, and what the service answered. */
  const wellKnown: { status: number; body: unknown }[] = [];
  const server: Server = createServer({ key: pems.private, cert: pems.cert }, async (request, response) => {
    const host = request.headers.host ?? "";
    if (host === RP_ID && request.url === "/.well-known/webauthn") {
      const answer = await fetch(`${serverUrl}/.well-known/webauthn`);
      const body = await answer.text();
      wellKnown.push({ status: answer.status, body: JSON.parse(body) });
      response.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "" });
      response.end(body);
    } else if (host !== RP_ID && request.url === "/") {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      response.end(PAGE);
    } else {
      response.writeHead(404);
      response.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    wellKnown,
    args: [
      `--host-resolver-rules=${hosts.map((host) => `MAP ${host}:443 127.0.0.1:${port}`).join(",")}`,
      `--ignore-certificate-errors-spki-list=${createHash("sha256").update(spki).digest("base64")}`,
    ],
  };
}

describe.skipIf(!runs)("related origins in Chromium (WebAuthn L3 §5.11)", () => {
  let front: Awaited<ReturnType<typeof startTlsFront>>;
  beforeAll(async () => {
    front = await startTlsFront();
  });
  afterAll(() => new Promise<void>((resolve) => front.server.close(() => resolve())));

  // Threat: a passkey of one RP ID used from a page of another domain. The browser allows it only where the RP ID's
  // own https origin lists that page's origin (§5.11.1), and the service only where AUTH_WEBAUTHN_RELATED_ORIGINS
  // does; a page no list names (a look-alike domain) is refused before the authenticator is asked.
  it("registers and signs in from a listed origin of another domain; refuses an unlisted one", async () => {
    const browser = await launch(CHROMIUM, front.args);
    try {
      const context = await browser.newContext();
      const page = await context.newPage();
      const { cdp, authenticatorId } = await addVirtualAuthenticator(context, page);
      await page.goto(`${SHOP}/`);

      const email = uniqueEmail("related");
      const signedUp = await page.evaluate(
        (address) => (globalThis as unknown as ShopPage).signUpWithKey(address),
        email,
      );
      expect(signedUp).toMatchObject({ rpId: RP_ID, origin: SHOP, answer: { session: null } });
      await followLink(await mailedLink(email));
      const signedIn = await page.evaluate(() => (globalThis as unknown as ShopPage).signInWithKey());
      expect(signedIn).toMatchObject({ rpId: RP_ID, origin: SHOP, answer: { session: { user: { email } } } });

      // The passkey is the RP ID's, not the shop's; the browser asked the RP ID's origin each time and got the
      // service's own list.
      const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
      expect(credentials).toMatchObject([{ rpId: RP_ID, isResidentCredential: true }]);
      expect(front.wellKnown.length).toBeGreaterThanOrEqual(2);
      expect(front.wellKnown[0]).toMatchObject({
        status: 200,
        body: { origins: expect.arrayContaining([SHOP]) },
      });

      // The stranger: Chromium read the same list, found no match, and never reached the authenticator.
      const fetched = front.wellKnown.length;
      await page.goto(`${STRANGER}/`);
      expect(await page.evaluate((rpId) => (globalThis as unknown as ShopPage).tryRpId(rpId), RP_ID)).toMatch(
        /^SecurityError: .*no listed origin matched the caller/,
      );
      expect(front.wellKnown.length).toBe(fetched + 1);
      const after = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
      expect(after.credentials[0]!.signCount).toBe(credentials[0]!.signCount);
    } finally {
      await browser.close();
    }
  }, 60_000);
});
