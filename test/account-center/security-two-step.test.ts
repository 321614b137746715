// The account center's two-step verification (contract §13): TOTP set up on the page with the API's own steps, used
// by the API's sign-in afterwards, recovery codes shown once, and turning it off only after a recent confirmation AND
// a current code. Each test names the threat or rule it covers.
import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import { afterEach, describe, expect, it, vi } from "vitest";
import { totpCode, totpStep } from "../../src/auth/mfa/totp";
import { auditTypesOf, PASSWORD, service, type TestService } from "../helpers";
import type { Browser } from "../oauth2/page-browser";
import { accountPage, backTo, later, SECURITY_ON, signedInBrowser } from "./security-support";

const svc = service(SECURITY_ON);

afterEach(() => {
  vi.useRealTimers();
});

/** The code of the authenticator app for the step `offset` steps from now. */
const codeOf = (secret: Uint8Array, offset = 0) => totpCode(secret, totpStep(Date.now()) + BigInt(offset));

/** Sets TOTP up through the page: the setup step, then a code from the secret it showed; the codes shown once. */
async function enrol(browser: Browser) {
  const setup = await browser.post("/account/security/totp/start", {});
  expect(setup.status).toBe(200);
  const html = await setup.text();
  const uri = /href="(otpauth:\/\/totp\/[^"]+)"/.exec(html)?.[1]?.replace(/&amp;/g, "&");
  expect(uri, "the otpauth link").toBeDefined();
  const secret = decodeBase32IgnorePadding(new URL(uri!).searchParams.get("secret")!);
  const confirmed = await browser.post("/account/security/totp/confirm", { code: codeOf(secret) });
  expect(confirmed.status).toBe(200);
  const codes = [...(await confirmed.text()).matchAll(/<li>([a-z2-9]{5}-[a-z2-9]{5})<\/li>/g)].map(
    (m) => m[1]!,
  );
  return { setup: html, setupHeaders: setup.headers, secret, codes, confirmed };
}

/** The API's sign-in by password: a session, or (TOTP on) a ticket for the second step. */
async function apiSignIn(svc: TestService, email: string) {
  const response = await svc.post("/signin/email-password", { email, password: PASSWORD });
  expect(response.status).toBe(200);
  return (await response.json()) as { session: unknown; mfa: { ticket: string } | null };
}

describe("two-step verification on the page", { timeout: 30_000 }, () => {
  it("rule: set up on the page (QR code, key, app link), then the API's sign-in asks for it and takes its codes", async () => {
    const { browser, email, api } = await signedInBrowser(svc, "totp-on");
    expect(await accountPage(browser)).toContain('action="/auth/v1/account/security/totp/start"');
    const { setup, setupHeaders, secret, codes } = await enrol(browser);
    // The QR code is drawn into the page (an inline SVG): the page's CSP loads no image at all.
    expect(setup).toMatch(/<svg class="qr" role="img" aria-label="[^"]+"/);
    expect(setup).toMatch(/<p class="secret">([A-Z2-7]{4} ){7}[A-Z2-7]{4}<\/p>/);
    expect(setupHeaders.get("content-security-policy")).not.toContain("img-src");
    expect(setupHeaders.get("cache-control")).toBe("no-store");
    expect(codes).toHaveLength(10);
    expect(await auditTypesOf(api.user.id)).toContain("mfa.enabled");

    // The API now asks the second step, and takes a code of the app (the next step: the page spent this one) ...
    const first = await apiSignIn(svc, email);
    expect(first.session).toBeNull();
    const byCode = await svc.post("/signin/mfa/totp", { ticket: first.mfa!.ticket, otp: codeOf(secret, 1) });
    expect(byCode.status).toBe(200);
    // ... and a recovery code shown on the page, once.
    const second = await apiSignIn(svc, email);
    const byRecovery = await svc.post("/signin/mfa/totp", { ticket: second.mfa!.ticket, otp: codes[0]! });
    expect(byRecovery.status).toBe(200);
    expect(
      (
        await svc.post("/signin/mfa/totp", {
          ticket: (await apiSignIn(svc, email)).mfa!.ticket,
          otp: codes[0]!,
        })
      ).status,
    ).toBe(401);

    const page = await accountPage(browser);
    expect(page).toContain("On since");
    // The codes and the key were shown on their own steps only: the page never repeats them.
    expect(page).not.toContain(codes[1]!);
    expect(page).not.toContain("otpauth://");
  });

  it("rule: a wrong code turns nothing on and asks again; the same secret still works after it", async () => {
    const { browser, email } = await signedInBrowser(svc, "totp-wrong");
    const setup = await (await browser.post("/account/security/totp/start", {})).text();
    const uri = /href="(otpauth:\/\/totp\/[^"]+)"/.exec(setup)![1]!.replace(/&amp;/g, "&");
    const secret = decodeBase32IgnorePadding(new URL(uri).searchParams.get("secret")!);
    const wrong = await browser.post("/account/security/totp/confirm", { code: "12345" });
    expect(wrong.status).toBe(400);
    const again = await wrong.text();
    expect(again).toContain('role="alert"');
    expect(again).toContain('action="/auth/v1/account/security/totp/confirm"');
    expect((await apiSignIn(svc, email)).session).not.toBeNull();
    const right = await browser.post("/account/security/totp/confirm", { code: codeOf(secret) });
    expect(right.status).toBe(200);
    expect((await apiSignIn(svc, email)).session).toBeNull();
  });

  it("threat: a borrowed browser signed in long ago can't turn TOTP off; after a fresh password and code it can", async () => {
    const { browser, email } = await signedInBrowser(svc, "totp-off");
    const { codes } = await enrol(browser);
    later(10);
    // The page shows a way to confirm instead of the forms ...
    const page = await accountPage(browser);
    expect(page).toContain("/auth/v1/account/confirm?section=two-step");
    expect(page).not.toContain('action="/auth/v1/account/security/totp/disable"');
    // ... and a post made anyway (an old form, a script) gets the re-authentication, not the change.
    const refused = await browser.post("/account/security/totp/disable", { code: codes[0]! });
    expect(refused.status).toBe(401);
    expect(await refused.text()).toContain('action="/auth/v1/account/reauth/password"');
    expect((await apiSignIn(svc, email)).session).toBeNull();

    // A TOTP account confirms with both factors (the password, then a code: here a recovery code), then posts again.
    const password = await browser.post("/account/reauth/password", {
      password: PASSWORD,
      section: "two-step",
    });
    expect(await password.text()).toContain('action="/auth/v1/account/reauth/totp"');
    const step = await browser.post("/account/reauth/totp", { otp: codes[1]!, section: "two-step" });
    expect(backTo(step, "two-step")).toBe("confirmed");
    expect(await accountPage(browser)).toContain('action="/auth/v1/account/security/totp/disable"');
    const off = await browser.post("/account/security/totp/disable", { code: codes[2]! });
    expect(backTo(off, "two-step")).toBe("security-totp-disabled");
    expect((await apiSignIn(svc, email)).session).not.toBeNull();
  });

  it("rule: turning off asks a current code as the API does: a wrong one changes nothing", async () => {
    const { browser, email } = await signedInBrowser(svc, "totp-off-wrong");
    await enrol(browser);
    const wrong = await browser.post("/account/security/totp/disable", { code: "12345" });
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toContain('role="alert"');
    expect((await apiSignIn(svc, email)).session).toBeNull();
  });

  it("rule: new recovery codes need a current code and replace the old ones, shown once", async () => {
    const { browser, email } = await signedInBrowser(svc, "totp-codes");
    const { secret, codes } = await enrol(browser);
    const renewed = await browser.post("/account/security/recovery-codes", { code: codeOf(secret, 1) });
    expect(renewed.status).toBe(200);
    const fresh = [...(await renewed.text()).matchAll(/<li>([a-z2-9]{5}-[a-z2-9]{5})<\/li>/g)].map(
      (m) => m[1]!,
    );
    expect(fresh).toHaveLength(10);
    const old = await svc.post("/signin/mfa/totp", {
      ticket: (await apiSignIn(svc, email)).mfa!.ticket,
      otp: codes[0]!,
    });
    expect(old.status).toBe(401);
    const now = await svc.post("/signin/mfa/totp", {
      ticket: (await apiSignIn(svc, email)).mfa!.ticket,
      otp: fresh[0]!,
    });
    expect(now.status).toBe(200);
  });
});
