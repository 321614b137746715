// The account center's re-authentication (contract §13, one mechanism with the step-up of §12): as strong as the
// account signs in, and as the API's elevated claim asks for the same operation. Threats: a phished password
// re-authenticating an account that has TOTP (two factors asked); the page as a way around AUTH_REQUIRE_ELEVATED_CLAIM
// (a passkey asked, never a password); a forged cookie claiming a recent method (the MAC).
import { env } from "cloudflare:test";
import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import { afterEach, describe, expect, it, vi } from "vitest";
import { totpCode, totpStep } from "../../src/auth/mfa/totp";
import type { TestService, WireSession } from "../helpers";
import { HOOK_URL, newSecret } from "../hooks/support";
import { failingFetcher } from "../support/faults";
import { userD1 } from "../support/shards";
import {
  ACCOUNT,
  accountService,
  Browser,
  later,
  location,
  PAGE_STEPS,
  PASSWORD,
  reauthWithPassword,
  STALE,
  signedIn,
} from "./support";

afterEach(() => {
  vi.useRealTimers();
});

/** TOTP switched on for the user through the API; returns a source of valid codes. */
async function withTotp(svc: TestService, session: WireSession) {
  const generated = await svc.get("/mfa/totp/generate", session.accessToken);
  const { totpSecret } = (await generated.json()) as { totpSecret: string };
  const secret = decodeBase32IgnorePadding(totpSecret);
  const code = () => totpCode(secret, totpStep(Date.now()));
  expect(
    (await svc.post("/user/mfa", { code: code(), activeMfaType: "totp" }, session.accessToken)).status,
  ).toBe(200);
  // The activation spent this time step's code; the re-authentication may use it again in this test.
  await userD1(session.user.id)
    .prepare("UPDATE users SET totp_last_step = NULL WHERE id = ?")
    .bind(session.user.id)
    .run();
  return code;
}

describe("re-authentication", { timeout: PAGE_STEPS }, () => {
  it("with TOTP on: the password, then a code, before the change", async () => {
    const svc = accountService({ AUTH_MFA_ENABLED: "true" });
    const { browser, session } = await signedIn(svc);
    const code = await withTotp(svc, session);
    later(STALE);
    const held = await browser.post(`${ACCOUNT}/password`, { newPassword: "another horse battery" });
    expect(held.status).toBe(401);
    const first = await held.text();
    expect(first).toContain("/auth/v1/account/reauth/password");
    // A TOTP code alone signs nobody in: not offered before the first factor.
    expect(first).not.toContain("/auth/v1/account/reauth/totp");

    const password = await browser.post(`${ACCOUNT}/reauth/password`, {
      section: "password",
      elevated: "1",
      password: PASSWORD,
    });
    expect(password.status).toBe(200);
    expect(await password.text()).toContain("/auth/v1/account/reauth/totp");
    // Still held: one factor of two.
    expect((await browser.post(`${ACCOUNT}/password`, { newPassword: "another horse battery" })).status).toBe(
      401,
    );

    const wrong = await browser.post(`${ACCOUNT}/reauth/totp`, {
      section: "password",
      elevated: "1",
      otp: "000000",
    });
    expect(wrong.status).toBe(401);
    const right = await browser.post(`${ACCOUNT}/reauth/totp`, {
      section: "password",
      elevated: "1",
      otp: code(),
    });
    expect(right.status).toBe(303);
    expect(location(right).hash).toBe("#password");
    expect((await browser.post(`${ACCOUNT}/password`, { newPassword: "another horse battery" })).status).toBe(
      303,
    );
  });

  it("under AUTH_REQUIRE_ELEVATED_CLAIM=required, a password never does: a passkey is asked", async () => {
    const svc = accountService({ AUTH_REQUIRE_ELEVATED_CLAIM: "required", AUTH_WEBAUTHN_ENABLED: "true" });
    const { browser } = await signedIn(svc);
    // Just signed in with the password, and still refused: the account has no passkey to meet the demand.
    const held = await browser.post(`${ACCOUNT}/password`, { newPassword: "another horse battery" });
    expect(held.status).toBe(403);
    expect(await held.text()).toContain("This change needs a passkey");
    // Nor does a password proof open the way.
    const proof = await browser.post(`${ACCOUNT}/reauth/password`, {
      section: "password",
      elevated: "1",
      password: PASSWORD,
    });
    expect(proof.status).toBe(403);
    expect((await browser.post(`${ACCOUNT}/password`, { newPassword: "another horse battery" })).status).toBe(
      403,
    );
  });

  // Threat: a right password checked while a part of the platform failed (here the app's CUSTOM_ACCESS_TOKEN hook,
  // asked once the password was found right: 503 `service-unavailable`, src/hooks/call.ts), answered as a refused one
  // (401, no Retry-After, the API's English message whatever the page's language; "Sign-in failed." under
  // AUTH_CONCEAL_ERRORS): the person doubts a right password, tries others, and spends their lockout count.
  it("a fault under a right password: 503 with Retry-After that says to try again; the retry confirms", async () => {
    const svc = accountService();
    const { browser } = await signedIn(svc);
    later(STALE);
    const { binding, fault } = failingFetcher(env.OUTBOUND!, { match: /custom-access-token/ });
    const down = new Browser(
      accountService({
        AUTH_HOOK_CUSTOM_ACCESS_TOKEN_URL: HOOK_URL.CUSTOM_ACCESS_TOKEN,
        AUTH_HOOK_CUSTOM_ACCESS_TOKEN_SECRET: newSecret(),
        OUTBOUND: binding,
      }),
    );
    for (const [name, value] of browser.jar) down.jar.set(name, value);
    const failed = await down.post(`${ACCOUNT}/reauth/password`, {
      section: "password",
      elevated: "1",
      password: PASSWORD,
    });
    expect(fault.failures).toBe(1);
    const html = await failed.text();
    expect(failed.status).toBe(503);
    expect(Number(failed.headers.get("retry-after"))).toBeGreaterThan(0);
    const shown = [...html.matchAll(/<div class="error" role="alert">([^<]*)<\/div>/g)].map((m) => m[1]);
    expect(shown).toEqual(["The service cannot answer right now. Try again shortly."]);
    expect(html).not.toMatch(/hook|Network connection lost|\bat \S+:\d+/);
    // Still the step: the person confirms from here once the platform is back.
    expect(html).toContain("/auth/v1/account/reauth/password");
    await reauthWithPassword(browser, "password");
  });

  it("a re-authentication post from another site raises nothing", async () => {
    const svc = accountService();
    const { browser } = await signedIn(svc);
    later(STALE);
    const forged = await browser.post(
      `${ACCOUNT}/reauth/password`,
      { section: "password", password: PASSWORD },
      { origin: "https://evil.example" },
    );
    expect(forged.status).toBe(403);
    expect((await browser.post(`${ACCOUNT}/password`, { newPassword: "another horse battery" })).status).toBe(
      401,
    );
  });
});
