// The account center's passkeys (contract §13): the list (name and date, never a key), adding one with the API's own
// ceremony (the step's options, a credential posted back; the browser side runs in Chromium in the browser suite),
// and removing one only after a recent confirmation, as the API's elevated removal. Each test names the threat or rule.
import type { PublicKeyCredentialCreationOptionsJSON } from "@simplewebauthn/server";
import { afterEach, describe, expect, it, vi } from "vitest";
import { SoftwareAuthenticator } from "../fakes/authenticator";
import { auditTypesOf, service } from "../helpers";
import type { Browser } from "../oauth2/page-browser";
import {
  accountPage,
  apiPasskey,
  backTo,
  hiddenValues,
  later,
  passkeyCeremony,
  SECURITY_ON,
  signedInBrowser,
  unescapeAttribute,
} from "./security-support";

const svc = service(SECURITY_ON);

afterEach(() => {
  vi.useRealTimers();
});

const REMOVE = "/auth/v1/account/security/passkeys/remove";

/** What the step's script does: the options on the button, the authenticator's credential, the form posted back. */
async function addOnPage(browser: Browser, device: SoftwareAuthenticator, nickname: string) {
  const step = await browser.post("/account/security/passkeys/add", {});
  expect(step.status).toBe(200);
  const html = await step.text();
  expect(step.headers.get("content-security-policy")).toMatch(/script-src 'nonce-/);
  const options = /data-options="([^"]+)"/.exec(html)?.[1];
  expect(options, "the creation options on the button").toBeDefined();
  const credential = await device.create(
    JSON.parse(unescapeAttribute(options!)) as PublicKeyCredentialCreationOptionsJSON,
  );
  return browser.post("/account/security/passkeys/verify", {
    nickname,
    credential: JSON.stringify(credential),
  });
}

describe("passkeys on the page", { timeout: 30_000 }, () => {
  it("rule: a passkey added on the page is listed by its name and signs in with the API", async () => {
    const { browser, email, api } = await signedInBrowser(svc, "pk-add");
    const device = new SoftwareAuthenticator("http://localhost:3000", "localhost");
    expect(backTo(await addOnPage(browser, device, "office laptop"), "passkeys")).toBe(
      "security-passkey-added",
    );
    const page = await accountPage(browser);
    expect(page).toContain("office laptop");
    expect(hiddenValues(page, REMOVE)).toHaveLength(1);
    expect(await passkeyCeremony(svc, device, email)).toBeTruthy();
    expect(await auditTypesOf(api.user.id)).toContain("security-key.added");
  });

  it("threat: a credential posted again (its challenge spent) or made up adds nothing", async () => {
    const { browser } = await signedInBrowser(svc, "pk-bad");
    const device = new SoftwareAuthenticator("http://localhost:3000", "localhost");
    const step = await (await browser.post("/account/security/passkeys/add", {})).text();
    const options = JSON.parse(unescapeAttribute(/data-options="([^"]+)"/.exec(step)![1]!));
    const credential = JSON.stringify(await device.create(options));
    expect(backTo(await browser.post("/account/security/passkeys/verify", { credential }), "passkeys")).toBe(
      "security-passkey-added",
    );
    const replay = await browser.post("/account/security/passkeys/verify", { credential });
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain('role="alert"');
    const garbage = await browser.post("/account/security/passkeys/verify", { credential: "{not json" });
    expect(garbage.status).toBe(400);
    expect(hiddenValues(await accountPage(browser), REMOVE)).toHaveLength(1);
  });

  it("threat: a browser signed in long ago can't remove a passkey; after confirming with it, it can", async () => {
    const { browser, email, api } = await signedInBrowser(svc, "pk-remove");
    const device = await apiPasskey(svc, api, "my key");
    const [id] = hiddenValues(await accountPage(browser), REMOVE);
    later(10);
    const page = await accountPage(browser);
    expect(page).toContain("my key");
    expect(hiddenValues(page, REMOVE)).toHaveLength(0);
    const refused = await browser.post("/account/security/passkeys/remove", { id: id! });
    expect(refused.status).toBe(401);
    expect(await accountPage(browser)).toContain("my key");
    // The confirmation may be the passkey itself (under the elevated claim it must be: security-tokens.test.ts).
    expect(await refused.text()).toContain("reauth-passkey");
    const raised = await browser.post("/account/reauth/passkey", {
      refresh_token: await passkeyCeremony(svc, device, email),
      section: "passkeys",
      elevated: "1",
    });
    expect(backTo(raised, "passkeys")).toBe("confirmed");
    expect(backTo(await browser.post("/account/security/passkeys/remove", { id: id! }), "passkeys")).toBe(
      "security-passkey-removed",
    );
    expect(await accountPage(browser)).not.toContain("my key");
  });

  it("threat: another user's passkey id removes nothing", async () => {
    const victim = await signedInBrowser(svc, "pk-victim");
    await apiPasskey(svc, victim.api, "victim key");
    const [id] = hiddenValues(await accountPage(victim.browser), REMOVE);
    const attacker = await signedInBrowser(svc, "pk-attacker");
    expect(
      backTo(await attacker.browser.post("/account/security/passkeys/remove", { id: id! }), "passkeys"),
    ).toBe("security-gone");
    expect(await accountPage(victim.browser)).toContain("victim key");
  });

  it("rule: with WebAuthn off the section offers nothing to add", async () => {
    const off = service({ ...SECURITY_ON, AUTH_WEBAUTHN_ENABLED: "false" });
    const { browser } = await signedInBrowser(off, "pk-off");
    const page = await accountPage(browser);
    expect(page).toContain('id="passkeys"');
    expect(page).not.toContain('action="/auth/v1/account/security/passkeys/add"');
    expect(backTo(await browser.post("/account/security/passkeys/add", {}), "passkeys")).toBe(
      "security-unavailable",
    );
  });
});
