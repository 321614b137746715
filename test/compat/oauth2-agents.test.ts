// openid-client v6 as a CLI, a device and a machine client would use it against `wrangler dev` (contract §3.6):
// dynamic client registration, the device authorization grant with the person's step done in Chromium on the
// built-in page, and the client credentials grant with a resource indicator (for an admin's client: registration
// refuses the grant).
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { decodeJwt } from "jose";
import * as oidc from "openid-client";
import type { Page } from "playwright-core";
import { describe, expect, inject, it } from "vitest";
import { HEADLESS_SHELL as CHROMIUM, canRun, launch } from "./chromium";
import { authUrl, PASSWORD, verifiedUser } from "./client";
import { discover, registerClient } from "./relying-party";

const runs = canRun(CHROMIUM);
const screenshots = process.env.OAUTH2_SCREENSHOTS;
const otherResource = inject("otherResource");
const insecure = { execute: [oidc.allowInsecureRequests] }; // `wrangler dev` serves http

async function shoot(page: Page, name: string) {
  if (!screenshots) return;
  mkdirSync(screenshots, { recursive: true });
  await page.screenshot({ path: join(screenshots, `${name}.png`), fullPage: true });
}

describe("openid-client v6 for CLIs, devices and machines", () => {
  // Issue 28: open registration handed client_credentials to anyone. A machine client is an admin's to make.
  it("cannot register a machine client dynamically; an admin's machine client gets a token for one resource", async () => {
    const refused = await oidc
      .dynamicClientRegistration(
        new URL(authUrl),
        { client_name: "Nightly report job", grant_types: ["client_credentials"], redirect_uris: [] },
        oidc.ClientSecretBasic(),
        insecure,
      )
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(refused).toMatchObject({ error: "invalid_client_metadata" });

    const machine = await registerClient({
      clientName: "Nightly report job",
      grantTypes: ["client_credentials"],
      redirectUris: [],
    });
    expect(machine.clientId).toMatch(/^oc_/);
    expect(machine.clientSecret).toMatch(/^ocs_/);
    const config = await discover(machine, oidc.ClientSecretBasic(machine.clientSecret!));
    const tokens = await oidc.clientCredentialsGrant(config, { resource: otherResource });
    expect(tokens.refresh_token).toBeUndefined();
    expect(tokens.id_token).toBeUndefined();
    expect(decodeJwt(tokens.access_token)).toMatchObject({
      sub: machine.clientId,
      client_id: machine.clientId,
      gty: "client_credentials",
      aud: otherResource,
    });
    const introspection = await oidc.tokenIntrospection(config, tokens.access_token);
    expect(introspection).toMatchObject({ active: true, sub: machine.clientId, aud: otherResource });
  });

  // A device flow polled on its interval while Chromium signs in and approves: ~5.5 s quiet, 13 s on a busy machine.
  it.skipIf(!runs)(
    "a CLI registers, starts the device flow, the person approves in Chromium, and the CLI's poll gets tokens",
    async () => {
      const person = await verifiedUser("device");
      const config = await oidc.dynamicClientRegistration(
        new URL(authUrl),
        {
          client_name: "Acme CLI",
          application_type: "native",
          grant_types: ["urn:ietf:params:oauth:grant-type:device_code", "refresh_token"],
          token_endpoint_auth_method: "none",
          redirect_uris: [],
        },
        oidc.None(),
        insecure,
      );
      const device = await oidc.initiateDeviceAuthorization(config, { scope: "openid email offline_access" });
      expect(device.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
      const polled = oidc.pollDeviceAuthorizationGrant(config, device);

      const browser = await launch(CHROMIUM);
      try {
        const page = await (await browser.newContext()).newPage();
        page.setDefaultTimeout(15_000);
        const blocked: string[] = [];
        page.on("console", (message) => {
          if (/Content Security Policy/i.test(message.text())) blocked.push(message.text());
        });
        await page.goto(device.verification_uri_complete!);
        expect(await page.inputValue("#user_code")).toBe(device.user_code);
        await shoot(page, "device-1-code");
        await page.click("button[type=submit]");
        await page.waitForSelector("#password");
        expect(await page.textContent("main")).toContain("Acme CLI");
        await page.fill("#email", person.email);
        await page.fill("#password", PASSWORD);
        await page.click("button[type=submit]");
        await page.waitForSelector("button[value=allow]");
        expect(await page.textContent(".code")).toBe(device.user_code);
        expect(await page.textContent("main")).toContain("This app registered itself");
        await shoot(page, "device-2-consent");
        await page.click("button[value=allow]");
        await page.waitForSelector("text=Device connected");
        await shoot(page, "device-3-done");
        expect(blocked).toEqual([]);
      } finally {
        await browser.close();
      }

      const tokens = await polled;
      expect(tokens.claims()?.email).toBe(person.email);
      expect(tokens.refresh_token).toMatch(/^ort_/);
      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
      expect(refreshed.claims()?.sub).toBe(tokens.claims()?.sub);
    },
    60_000,
  );
});
