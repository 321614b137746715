// Contract operators.md §5 end to end in a real browser (Debian's Chromium, playwright-core) against `wrangler dev`:
// an org owner makes a setup link; the IT admin opens it, claims a domain (its TXT record shown), connects a SAML IdP
// from its metadata, and tests the connection with a real round trip: the SSO tests' SAML IdP (samlify, signing under
// the test key) answers the AuthnRequest Chromium carries to it with a signed response, Chromium posts it to the ACS,
// and the page shows the test's outcome. The owner then turns the connection on. axe is clean on every page.
// (Domain verification by DNS is proven in test/setup-links/walk.test.ts: wrangler dev here resolves no test DNS, so
// the owner widens the connection to the org's domain, verified by the operator, as the contract allows.)
import type { Browser } from "playwright-core";
import { afterAll, describe, expect, inject, it } from "vitest";
import { IDP_SSO_URL, idpMetadataXml, signedResponse, toBase64 } from "../sso/saml-support/idp";
import { expectAccessible, expectNoSidewaysScroll } from "./axe";
import { FULL_CHROMIUM as CHROMIUM, canRun, launch } from "./chromium";
import { authUrl, verifiedUser } from "./client";

const runs = canRun(CHROMIUM);
const ADMIN = { "x-hasura-admin-secret": inject("adminSecret") };

async function call(
  method: string,
  path: string,
  options: { token?: string; json?: unknown; headers?: Record<string, string> } = {},
) {
  const response = await fetch(`${authUrl}${path}`, {
    method,
    headers: {
      ...(options.json === undefined ? {} : { "content-type": "application/json" }),
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...options.headers,
    },
    body: options.json === undefined ? undefined : JSON.stringify(options.json),
  });
  expect(response.status, `${method} ${path}: ${await response.clone().text()}`).toBeLessThan(300);
  return response.status === 204 ? {} : ((await response.json()) as Record<string, unknown>);
}

/** The XML of an HTTP-Redirect binding's `SAMLRequest` (raw DEFLATE, base64). */
async function authnRequestId(idpUrl: URL): Promise<string> {
  const bytes = Uint8Array.from(atob(idpUrl.searchParams.get("SAMLRequest")!), (char) => char.charCodeAt(0));
  const xml = await new Response(
    new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw")),
  ).text();
  return /\sID="([^"]+)"/.exec(xml)![1]!;
}

describe.skipIf(!runs)("a setup link in Chromium", () => {
  let chromiumStarted: Promise<Browser> | undefined;
  afterAll(async () => {
    await (await chromiumStarted)?.close();
  });

  it("operators.md §5: the IT admin connects a SAML IdP and tests it with a signed round trip; the owner turns it on", async () => {
    chromiumStarted = launch(CHROMIUM);
    // The owner, their org and its domain (verified by the operator: no DNS on loopback), and the link.
    const { accessToken: token } = await verifiedUser("setup-owner");
    const org = (await call("POST", "/orgs", { token, json: { name: "Setup Walk Inc" } })) as { id: string };
    const domain = `walk-${crypto.randomUUID().slice(0, 8)}.test`;
    await call("POST", `/orgs/${org.id}/domains`, { token, json: { domain } });
    await call("POST", `/admin/orgs/${org.id}/domains/${domain}/verify`, { headers: ADMIN });
    const { url } = (await call("POST", `/orgs/${org.id}/setup-links`, {
      token,
      json: { intents: ["domains", "sso"] },
    })) as { url: string };

    // axe needs its script on the page: the context bypasses the CSP (checked without it in the workers tests).
    const context = await (await chromiumStarted).newContext({
      viewport: { width: 1280, height: 900 },
      bypassCSP: true,
    });
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    let connectionId = "";
    // The IdP: samlify signs the answer to the AuthnRequest Chromium brings; its page posts it to the ACS.
    await page.route(`${IDP_SSO_URL}**`, async (route) => {
      const request = new URL(route.request().url());
      const base = `${authUrl}/sso/saml/${connectionId}`;
      const xml = await signedResponse({
        spEntityId: `${base}/metadata`,
        acsUrl: `${base}/acs`,
        nameId: `it.admin@${domain}`,
        inResponseTo: await authnRequestId(request),
      });
      await route.fulfill({
        contentType: "text/html",
        body: `<!doctype html><html lang="en"><title>IdP</title><body onload="document.forms[0].submit()"><form method="post" action="${base}/acs"><input type="hidden" name="SAMLResponse" value="${toBase64(xml)}"></form></body></html>`,
      });
    });

    await page.goto(url);
    await page.waitForSelector("h1:has-text('Set up sign-in for Setup Walk Inc')");
    await expectAccessible(page, "overview");
    await page.click("a:has-text('Verify your email domains')");
    await page.fill("#domain", `it-${domain}`);
    await page.click("button:has-text('Add the domain')");
    await page.waitForSelector("dt:has-text('TXT record value')");
    await expectAccessible(page, "domains");
    await page.click("a:has-text('Back to the overview')");
    await page.click("a:has-text('Connect single sign-on')");
    await page.selectOption("#idp", "saml");
    await page.click("button:has-text('Start')");
    await page.waitForSelector("dt:has-text('Assertion Consumer Service (ACS) URL, HTTP-POST')");
    await expectAccessible(page, "guide");
    await page.fill("#metadataXml", idpMetadataXml());
    await page.click("button:has-text('Save the connection')");
    await page.waitForSelector("h1:has-text('SAML connection')");
    connectionId = new URL(page.url()).pathname.split("/").at(-1)!;
    await expectAccessible(page, "connection");
    await expectNoSidewaysScroll(page, "connection");

    // The owner lets it serve the org's own domain (verified outside the link).
    await call("PATCH", `/orgs/${org.id}/connections/${connectionId}`, { token, json: { domains: null } });
    await page.click("a:has-text('Test the connection')");
    await page.waitForSelector(
      `text=The test succeeded: your identity provider vouched for it.admin@${domain}`,
    );
    await expectAccessible(page, "tested");

    const enabled = (await call("PATCH", `/orgs/${org.id}/connections/${connectionId}`, {
      token,
      json: { enabled: true },
    })) as {
      enabled: boolean;
    };
    expect(enabled.enabled).toBe(true);
    await context.close();
  });
});
