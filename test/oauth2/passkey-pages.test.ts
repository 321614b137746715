// Passkeys by default on the hosted pages (docs/passkeys.md): after a password sign-in, the page between it and the
// app carries the passkey upgrade (WebAuthn L3 §5.1.3, conditional create) and the Signal API's data (§5.1.10); the
// page's own upgrade routes; the autofill (§5.1.4.2, `autocomplete="username webauthn"`) on every username field and
// the passkey-only sign-up on the sign-up view. The browser side is in test/compat/browser-webauthn.test.ts.
import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from "@simplewebauthn/server";
import { describe, expect, it } from "vitest";
import { SECURITY_ON, signedInBrowser } from "../account-center/security-support";
import { SoftwareAuthenticator } from "../fakes/authenticator";
import { expectError, PASSWORD, service, signUp, uniqueEmail } from "../helpers";
import { userD1 } from "../support/shards";
import { Browser, ORIGIN } from "./page-browser";
import { ADMIN, location } from "./support";

const APP = "http://localhost:3000";
const svc = service({ AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "false", AUTH_WEBAUTHN_ENABLED: "true" });
const UPGRADE = "/oauth2/interaction/passkey-upgrade";

/** A JSON post of the page's own script: the page's cookie, same origin. */
const pagePost = (browser: Browser, path: string, json: unknown, site = "same-origin") =>
  svc.request("POST", path, {
    json,
    headers: { cookie: browser.cookie, "sec-fetch-site": site, ...ORIGIN },
  });

async function openSignIn(browser: Browser) {
  const started = await browser.get(`/signin?redirectTo=${encodeURIComponent(`${APP}/home`)}`);
  const page = location(started);
  return {
    requestId: page.searchParams.get("request_id")!,
    html: await (await browser.get(page.toString())).text(),
  };
}

const attribute = (html: string, name: string) =>
  new RegExp(`${name}="([^"]*)"`)
    .exec(html)?.[1]
    ?.replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&");

describe("passkeys on the hosted pages", { timeout: 20_000 }, () => {
  // Threat: a passkey planted through the page's cookie by another site, or after an old sign-in; a signal list that
  // leaves out a working passkey. One journey: sign-up, page sign-in, the upgrade page, its routes.
  it("after a password sign-in: the upgrade page, its routes, and the signals (§5.1.3, §5.1.10)", async () => {
    const { user } = await signUp(svc);
    const browser = new Browser(svc);
    const { requestId, html: signInHtml } = await openSignIn(browser);
    // The autofill on both username fields of the sign-in view (the password form's, the magic link's).
    expect(signInHtml).toContain('id="email" name="email" type="email" autocomplete="username webauthn"');
    const posted = await browser.post("/oauth2/interaction/sign-in", {
      request_id: requestId,
      email: user.email,
      password: PASSWORD,
    });
    const step = await browser.get(location(posted).toString());
    // Not a 303 straight to the app: the page between, whose link goes on to the app with its refresh token.
    expect(step.status).toBe(200);
    expect(step.headers.get("content-security-policy")).toMatch(/script-src 'nonce-/);
    const html = await step.text();
    expect(attribute(html, "href")).toMatch(/^http:\/\/localhost:3000\/home\?refreshToken=[0-9a-f-]{36}$/);
    expect(attribute(html, "data-upgrade")).toBe(`/auth/v1${UPGRADE}`);
    const signals = JSON.parse(attribute(html, "data-signals")!);
    expect(signals).toEqual({
      rpId: "localhost",
      userId: btoa(user.id).replace(/=+$/, ""),
      name: user.email,
      displayName: expect.any(String),
      allAcceptedCredentialIds: [],
    });

    // Another site's request carries the cookie only with a top-level navigation, and never as JSON: refused.
    await expectError(await pagePost(browser, UPGRADE, {}, "cross-site"), 403, "forbidden");
    await expectError(await pagePost(new Browser(svc), UPGRADE, {}), 401, "unauthorized");
    const options = (await (
      await pagePost(browser, UPGRADE, {})
    ).json()) as PublicKeyCredentialCreationOptionsJSON;
    expect(options.authenticatorSelection?.residentKey).toBe("required");
    const credential = await new SoftwareAuthenticator(APP, "localhost").create(options, { flags: 0 });
    const added = await pagePost(browser, `${UPGRADE}/verify`, { credential });
    expect(added.status).toBe(200);
    const row = await userD1(user.id)
      .prepare("SELECT upgrade_session_id FROM security_keys WHERE user_id = ?")
      .bind(user.id)
      .first<{ upgrade_session_id: string }>();
    expect(row?.upgrade_session_id).toBeTruthy();
    // Once per page session.
    await expectError(await pagePost(browser, UPGRADE, {}), 403, "forbidden");
  });

  it("offers the autofill on the sign-up and reset views, and the passkey-only sign-up (§5.1.4.2)", async () => {
    const browser = new Browser(svc);
    for (const [path, signUpButton] of [
      ["/signup", true],
      ["/reset", false],
    ] as const) {
      const started = await browser.get(`${path}?redirectTo=${encodeURIComponent(APP)}`);
      const html = await (await browser.get(location(started).toString())).text();
      expect(html, path).toContain('type="email" autocomplete="username webauthn"');
      expect(html, path).toContain('id="passkey-session"');
      expect(html.includes('id="passkey-sign-up"'), path).toBe(signUpButton);
      expect(html, path).toMatch(/<script nonce="[^"]+">/);
    }
    // Security keys off: none of it.
    const plain = new Browser(service());
    const started = await plain.get(`/signup?redirectTo=${encodeURIComponent(APP)}`);
    const html = await (await plain.get(location(started).toString())).text();
    expect(html).not.toContain("webauthn");
    expect(html).not.toContain("passkey-sign-up");
  });

  // Threat: a signal that makes the password manager drop a working passkey (a list short of one, an unknown-credential
  // signal on a mere error), or an operator's impersonation rewriting the user's password manager.
  it("signals after a name change, never for an impersonation; names a positively unknown credential (§5.1.10)", async () => {
    const center = service({ ...SECURITY_ON, AUTH_IMPERSONATION_ENABLED: "true" });
    const { browser, api } = await signedInBrowser(center, "signals");
    const saved = await browser.post("/account/profile", { displayName: "Ada Signal" });
    const after = await (await browser.get(location(saved).toString())).text();
    const signals = JSON.parse(attribute(after, "data-signals")!);
    expect(signals).toMatchObject({ displayName: "Ada Signal", allAcceptedCredentialIds: [] });
    // Without a change, nothing to signal.
    expect(await (await browser.get("/account")).text()).not.toContain("passkey-signals");

    const landing = await center.request("POST", `/admin/users/${api.user.id}/impersonate`, {
      headers: ADMIN,
      json: { reason: "ticket #47", actor: "ana@support" },
    });
    const operator = new Browser(center);
    await operator.get(((await landing.json()) as { url: string }).url);
    expect(operator.signedIn).toBe(true);
    const seen = await operator.get("/account?notice=profile-saved");
    expect(seen.status).toBe(200);
    expect(await seen.text()).not.toContain("passkey-signals");

    // A key the account no longer has (removed), presented with its user handle: the answer says so, and only then.
    const email = uniqueEmail("gone");
    const device = new SoftwareAuthenticator(APP, "localhost");
    const options = (await (
      await svc.post("/signup/webauthn", { email })
    ).json()) as PublicKeyCredentialCreationOptionsJSON;
    const { session } = (await (
      await svc.post("/signup/webauthn/verify", { credential: await device.create(options) })
    ).json()) as { session: { accessToken: string } };
    const listed = await svc.get("/user/security-keys", session.accessToken);
    const [key] = ((await listed.json()) as { securityKeys: { id: string }[] }).securityKeys;
    const removed = await svc.request("DELETE", `/user/security-keys/${key!.id}`, {
      token: session.accessToken,
    });
    expect(removed.status).toBe(200);
    const request = (await (
      await svc.post("/signin/webauthn", {})
    ).json()) as PublicKeyCredentialRequestOptionsJSON;
    const unknown = await expectError(
      await svc.post("/signin/webauthn/verify", { credential: await device.get(request) }),
      400,
      "invalid-request",
    );
    expect(unknown.message).toBe("invalid WebAuthn response: unknown credential");
  });
});
