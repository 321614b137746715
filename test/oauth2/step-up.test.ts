// Step-up (contract §12): `acr_values`, `max_age`, `prompt=login|none|select_account` on the built-in page, and the
// sign-in a code carries (`auth_time`, `acr`, `amr`) into ID tokens, access tokens and introspection. The relying party
// is openid-client 6 through the real HTTP surface: it checks `auth_time` against `max_age` itself. Each test names the
// threat or rule it covers.
import { env } from "cloudflare:test";
import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from "@simplewebauthn/server";
import { base64url } from "jose";
import * as oidc from "openid-client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { totpCode, totpStep } from "../../src/auth/mfa/totp";
import { SoftwareAuthenticator } from "../fakes/authenticator";
import { decodeJwt, PASSWORD, signUp, type TestService, type WireSession } from "../helpers";
import { HOOK_URL, newSecret } from "../hooks/support";
import { failingFetcher } from "../support/faults";
import { userD1 } from "../support/shards";
import { relyingParty } from "./dpop-support";
import { Browser, signIn } from "./page-browser";
import {
  basic,
  codeFor,
  exchange,
  ISSUER,
  location,
  newClient,
  postForm,
  provider,
  REDIRECT_URI,
  type TokenAnswer,
} from "./support";

const svc = provider({ AUTH_MFA_ENABLED: "true", AUTH_WEBAUTHN_ENABLED: "true" });
const PWD = "urn:edge-auth:acr:pwd";
const MFA = "urn:edge-auth:acr:mfa";
const PHR = "urn:edge-auth:acr:phr";

afterEach(() => {
  vi.useRealTimers();
});

/** Moves the server's clock (the same isolate's `Date`) on by `seconds`: a sign-in becomes that old, exactly. */
function later(seconds: number) {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(Date.now() + seconds * 1000);
}

/** The code flow with openid-client up to the browser: the authorization URL and what the callback check needs. */
async function begin(config: oidc.Configuration, browser: Browser, extra: Record<string, string> = {}) {
  const pkceCodeVerifier = oidc.randomPKCECodeVerifier();
  const expectedState = oidc.randomState();
  const expectedNonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT_URI,
    scope: "openid email",
    code_challenge: await oidc.calculatePKCECodeChallenge(pkceCodeVerifier),
    code_challenge_method: "S256",
    state: expectedState,
    nonce: expectedNonce,
    ...extra,
  });
  const answer = await browser.get(url.href);
  const checks = {
    pkceCodeVerifier,
    expectedState,
    expectedNonce,
    ...(extra.max_age ? { maxAge: Number(extra.max_age) } : {}),
  };
  const target = answer.status === 302 ? location(answer) : undefined;
  const requestId = target?.searchParams.get("request_id") ?? "";
  return { answer, checks, requestId, page: requestId ? await browser.get(target!.toString()) : answer };
}

/** Follows the page (its redirects, and consent when asked) until the browser goes back to the client. */
async function untilClient(browser: Browser, requestId: string, response: Response): Promise<URL> {
  let current = response;
  for (let step = 0; step < 6; step++) {
    if (current.status === 302 || current.status === 303) {
      const next = location(current);
      if (next.href.startsWith(REDIRECT_URI)) return next;
      current = await browser.get(next.toString());
      continue;
    }
    const text = await current.clone().text();
    if (current.status !== 200 || !text.includes('name="decision"'))
      throw new Error(`the page stopped at ${current.status}: ${text.slice(0, 400)}`);
    current = await browser.post("/oauth2/interaction/consent", { request_id: requestId, decision: "allow" });
  }
  throw new Error("the page did not send the browser back");
}

/** A user signed in to a browser on the page with a password (consent given for openid email). */
async function signedInBrowser(config: oidc.Configuration, email: string) {
  const browser = new Browser(svc);
  const { requestId } = await begin(config, browser);
  await untilClient(browser, requestId, await signIn(browser, requestId, email));
  return browser;
}

/** TOTP switched on for the user through the API; returns a source of valid codes. */
async function withTotp(session: WireSession) {
  const generated = await svc.get("/mfa/totp/generate", session.accessToken);
  const { totpSecret } = (await generated.json()) as { totpSecret: string };
  const secret = decodeBase32IgnorePadding(totpSecret);
  const code = () => totpCode(secret, totpStep(Date.now()));
  expect(
    (await svc.post("/user/mfa", { code: code(), activeMfaType: "totp" }, session.accessToken)).status,
  ).toBe(200);
  // The activation spent this time step's code; the step-up may use it again in this test.
  await userD1(session.user.id)
    .prepare("UPDATE users SET totp_last_step = NULL WHERE id = ?")
    .bind(session.user.id)
    .run();
  return code;
}

/** A passkey added to the user's account through the API, held by a software authenticator. */
async function withPasskey(session: WireSession) {
  const device = new SoftwareAuthenticator("http://localhost:3000", "localhost");
  const added = await svc.post("/user/webauthn/add", {}, session.accessToken);
  const options = (await added.json()) as PublicKeyCredentialCreationOptionsJSON;
  const credential = await device.create(options);
  const verified = await svc.post(
    "/user/webauthn/verify",
    { credential, nickname: "key" },
    session.accessToken,
  );
  expect(verified.status).toBe(200);
  return device;
}

/** What the step's passkey script does: a ceremony with the API for `email`'s keys; the session's refresh token. */
async function passkeyCeremony(device: SoftwareAuthenticator, email: string): Promise<string> {
  const started = await svc.post("/signin/webauthn", { email });
  const options = (await started.json()) as PublicKeyCredentialRequestOptionsJSON;
  const verified = await svc.post("/signin/webauthn/verify", { credential: await device.get(options) });
  expect(verified.status).toBe(200);
  return ((await verified.json()) as { session: WireSession }).session.refreshToken;
}

const claimsOf = (tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers) => tokens.claims()!;

describe("max_age and prompt=login", () => {
  it("rule: an exceeded max_age re-authenticates the SAME user (no account switch), and auth_time is the new one", async () => {
    const client = await newClient(svc);
    const config = await relyingParty(svc, client);
    const { user } = await signUp(svc);
    const browser = await signedInBrowser(config, user.email);
    later(600);
    const { page, requestId, checks } = await begin(config, browser, { max_age: "300" });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("Confirm it");
    expect(html).toContain(user.email);
    expect(html).toContain("/oauth2/interaction/reauth/password");
    // No field to type another account's email into: the step is for this user only.
    expect(html).not.toContain('name="email"');

    const wrong = await browser.post("/oauth2/interaction/reauth/password", {
      request_id: requestId,
      password: "not the password",
    });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain("Wrong email or password.");
    const right = await browser.post("/oauth2/interaction/reauth/password", {
      request_id: requestId,
      password: "correct horse battery",
    });
    expect(right.status).toBe(303);
    const callback = await untilClient(browser, requestId, right);
    const tokens = await oidc.authorizationCodeGrant(config, callback, checks);
    const claims = claimsOf(tokens);
    expect(claims.sub).toBe(user.id);
    expect(claims.acr).toBe(PWD);
    expect(claims.amr).toEqual(["pwd"]);
    expect(claims.auth_time).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000) - 300);
  });

  it("rule: max_age=0 re-authenticates once: a confirmation made for this request counts however long the page takes", async () => {
    const client = await newClient(svc);
    const config = await relyingParty(svc, client);
    const { user } = await signUp(svc);
    const browser = await signedInBrowser(config, user.email);
    later(10);
    const { page, requestId, checks } = await begin(config, browser, { max_age: "0" });
    expect(await page.text()).toContain("/oauth2/interaction/reauth/password");
    const right = await browser.post("/oauth2/interaction/reauth/password", {
      request_id: requestId,
      password: "correct horse battery",
    });
    later(5);
    const tokens = await oidc.authorizationCodeGrant(
      config,
      await untilClient(browser, requestId, right),
      checks,
    );
    expect(claimsOf(tokens).sub).toBe(user.id);
  });

  it("rule: prompt=login asks for a sign-in made for this request, even right after one", async () => {
    const client = await newClient(svc);
    const config = await relyingParty(svc, client);
    const { user } = await signUp(svc);
    const browser = await signedInBrowser(config, user.email);
    const { page } = await begin(config, browser, { prompt: "login" });
    expect(await page.text()).toContain("/oauth2/interaction/reauth/password");
  });
});

describe("acr_values", () => {
  it("rule: acr_values mfa asks for the TOTP code, and the ID token says mfa with amr [pwd, otp, mfa]", async () => {
    const client = await newClient(svc);
    const config = await relyingParty(svc, client);
    const session = await signUp(svc);
    const browser = await signedInBrowser(config, session.user.email);
    const code = await withTotp(session);
    const { page, requestId, checks } = await begin(config, browser, { acr_values: `unknown:acr ${MFA}` });
    const html = await page.text();
    expect(html).toContain("/oauth2/interaction/reauth/totp");
    // The session's password is recent enough: the step does not ask for it again.
    expect(html).not.toContain("/oauth2/interaction/reauth/password");
    const wrong = await browser.post("/oauth2/interaction/reauth/totp", {
      request_id: requestId,
      otp: "000000",
    });
    expect(wrong.status).toBe(401);
    const right = await browser.post("/oauth2/interaction/reauth/totp", {
      request_id: requestId,
      otp: code(),
    });
    expect(right.status).toBe(303);
    const tokens = await oidc.authorizationCodeGrant(
      config,
      await untilClient(browser, requestId, right),
      checks,
    );
    expect(claimsOf(tokens)).toMatchObject({ sub: session.user.id, acr: MFA, amr: ["pwd", "otp", "mfa"] });
    // The access token carries the same (contract §12), for resource servers that only verify it.
    expect(decodeJwt(tokens.access_token).payload).toMatchObject({ acr: MFA, amr: ["pwd", "otp", "mfa"] });

    // The browser's session keeps the step-up: the next request for mfa needs no new code.
    const next = await begin(config, browser, { acr_values: MFA });
    expect(next.page.status).toBe(303);
    expect(location(next.page).searchParams.get("code")).toMatch(/^oac_/);

    // Rule (OIDC Core §3.1.2.1): the values come in order of preference and reaching one meets the request; the ID
    // token names the first one reached. phr is out of reach (no passkey), mfa is met.
    const either = await begin(config, browser, { acr_values: `${PHR} ${MFA}` });
    const eitherTokens = await oidc.authorizationCodeGrant(config, location(either.page), either.checks);
    expect(claimsOf(eitherTokens).acr).toBe(MFA);
  });

  it("rule: acr_values phr asks for a passkey of the same account; the ID token says phr with hwk", async () => {
    const client = await newClient(svc);
    const config = await relyingParty(svc, client);
    const session = await signUp(svc);
    const device = await withPasskey(session);
    const browser = await signedInBrowser(config, session.user.email);
    const { page, requestId, checks } = await begin(config, browser, { acr_values: PHR });
    const html = await page.text();
    expect(html).toContain(`data-email="${session.user.email}"`);
    expect(html).not.toContain("/oauth2/interaction/reauth/totp");
    expect(html).not.toContain("/oauth2/interaction/reauth/password");
    // The ceremony runs in the page's only script, allowed by its nonce (no inline script otherwise).
    expect(page.headers.get("content-security-policy")).toMatch(/script-src 'nonce-/);

    const refreshToken = await passkeyCeremony(device, session.user.email);
    const raised = await browser.post("/oauth2/interaction/reauth/passkey", {
      request_id: requestId,
      refresh_token: refreshToken,
    });
    expect(raised.status).toBe(303);
    const tokens = await oidc.authorizationCodeGrant(
      config,
      await untilClient(browser, requestId, raised),
      checks,
    );
    expect(claimsOf(tokens)).toMatchObject({ acr: PHR, amr: ["pwd", "hwk", "mfa"] });
    // The ceremony's own session was only a proof: it is gone, its refresh token refreshes nothing.
    expect((await svc.post("/token", { refreshToken })).status).toBe(401);
  });

  it("threat: a passkey step-up by ANOTHER account in the same browser does not raise the first one's session", async () => {
    const client = await newClient(svc);
    const config = await relyingParty(svc, client);
    const victim = await signUp(svc);
    await withPasskey(victim);
    const other = await signUp(svc);
    const othersKey = await withPasskey(other);
    const browser = await signedInBrowser(config, victim.user.email);
    const { requestId } = await begin(config, browser, { acr_values: PHR });
    const refused = await browser.post("/oauth2/interaction/reauth/passkey", {
      request_id: requestId,
      refresh_token: await passkeyCeremony(othersKey, other.user.email),
    });
    expect(refused.status).toBe(400);
    const html = await refused.text();
    expect(html).toContain("belongs to another account");
    expect(html).toContain(victim.user.email);
    // Still the victim's session, still not phishing-resistant: the request is not completed.
    const again = await browser.get(`/oauth2/interaction?request_id=${requestId}`);
    expect(again.status).toBe(200);
    expect(await again.text()).toContain("reauth-passkey");
  });

  it("threat: a session token that is not a passkey sign-in made just now is no passkey proof", async () => {
    const client = await newClient(svc);
    const config = await relyingParty(svc, client);
    const session = await signUp(svc);
    await withPasskey(session);
    const browser = await signedInBrowser(config, session.user.email);
    const { requestId } = await begin(config, browser, { acr_values: PHR });
    // The user's own password session (from the API), passed off as the ceremony's.
    const refused = await browser.post("/oauth2/interaction/reauth/passkey", {
      request_id: requestId,
      refresh_token: session.refreshToken,
    });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("The passkey did not work");
  });

  it("rule: an account without a passkey cannot meet phr; going back tells the client unmet_authentication_requirements", async () => {
    const client = await newClient(svc);
    const config = await relyingParty(svc, client);
    const { user } = await signUp(svc);
    const browser = await signedInBrowser(config, user.email);
    const { page, requestId } = await begin(config, browser, { acr_values: PHR });
    expect(page.status).toBe(403);
    expect(await page.text()).toContain("this account has none");
    const back = await browser.post("/oauth2/interaction/reauth/cancel", { request_id: requestId });
    const to = location(back);
    expect(to.href.startsWith(REDIRECT_URI)).toBe(true);
    expect(to.searchParams.get("error")).toBe("unmet_authentication_requirements");
    expect(to.searchParams.get("iss")).toBe(ISSUER);
    expect(to.searchParams.get("state")).toBeTruthy();
  });

  it("threat: a cookie whose methods were edited (a passkey added by hand) is refused by its MAC", async () => {
    const client = await newClient(svc);
    const config = await relyingParty(svc, client);
    const { user } = await signUp(svc);
    const browser = await signedInBrowser(config, user.email);
    const [payload, tag] = browser.jar.get("oauth2_session")!.split(".");
    const claims = JSON.parse(new TextDecoder().decode(base64url.decode(payload!)));
    claims.m = { ...claims.m, passkey: Date.now() };
    browser.jar.set("oauth2_session", `${base64url.encode(JSON.stringify(claims))}.${tag}`);
    const { page } = await begin(config, browser, { acr_values: PHR });
    // Not signed in at all any more: the plain sign-in form, not a completed request.
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('name="email"');
  });
});

/**
 * `browser`'s cookies on the same deployment with the app's CUSTOM_ACCESS_TOKEN hook unreachable (every call fails as
 * the platform's fetch does): a proof checked there fails AFTER its credential was found right, when the session it
 * made asks for its access token: 503 `service-unavailable` (src/hooks/call.ts), as the API answers it.
 */
function withTokenHookDown(browser: Browser) {
  const { binding, fault } = failingFetcher(env.OUTBOUND!, { match: /custom-access-token/ });
  const down = provider({
    AUTH_MFA_ENABLED: "true",
    AUTH_WEBAUTHN_ENABLED: "true",
    AUTH_HOOK_CUSTOM_ACCESS_TOKEN_URL: HOOK_URL.CUSTOM_ACCESS_TOKEN,
    AUTH_HOOK_CUSTOM_ACCESS_TOKEN_SECRET: newSecret(),
    OUTBOUND: binding,
  });
  const faulty = new Browser(down);
  for (const [name, value] of browser.jar) faulty.jar.set(name, value);
  return { faulty, fault };
}

/** The step shown again for a fault: 503, `Retry-After`, and the one message shown says to try again shortly. */
async function expectUnavailableStep(answer: Response) {
  const html = await answer.text();
  expect(answer.status).toBe(503);
  expect(Number(answer.headers.get("retry-after"))).toBeGreaterThan(0);
  const shown = [...html.matchAll(/<div class="error" role="alert">([^<]*)<\/div>/g)].map((m) => m[1]);
  expect(shown).toEqual(["The service cannot answer right now. Try again shortly."]);
  expect(html).not.toMatch(/hook|Network connection lost|\bat \S+:\d+/);
  // Still the step, under the page's CSP: the person tries again from here.
  expect(html).toContain("Confirm it");
  expect(answer.headers.get("content-security-policy")).toMatch(/default-src 'none'/);
}

describe("a fault under the step's proof", () => {
  // Threat: a right password checked while a part of the platform failed, answered as a refused one (401, no
  // Retry-After, the API's English message whatever the page's language; "Sign-in failed." under AUTH_CONCEAL_ERRORS):
  // the person doubts a right password, tries others, and spends their lockout count.
  it("threat: a fault after a right password is a 503 with Retry-After that says to try again; the retry goes on", async () => {
    const client = await newClient(svc);
    const config = await relyingParty(svc, client);
    const { user } = await signUp(svc);
    const browser = await signedInBrowser(config, user.email);
    const { page, requestId, checks } = await begin(config, browser, { prompt: "login" });
    expect(await page.text()).toContain("/oauth2/interaction/reauth/password");
    const { faulty, fault } = withTokenHookDown(browser);
    const failed = await faulty.post("/oauth2/interaction/reauth/password", {
      request_id: requestId,
      password: PASSWORD,
    });
    expect(fault.failures).toBe(1);
    await expectUnavailableStep(failed);
    const right = await browser.post("/oauth2/interaction/reauth/password", {
      request_id: requestId,
      password: PASSWORD,
    });
    expect(right.status).toBe(303);
    const tokens = await oidc.authorizationCodeGrant(
      config,
      await untilClient(browser, requestId, right),
      checks,
    );
    expect(claimsOf(tokens).sub).toBe(user.id);
  });

  // Threat: the same fault under a passkey's proof, answered 401 "The passkey did not work." (the passkey's words for
  // every refusal): a working passkey doubted, or removed.
  it("threat: a fault under a passkey's proof is the same 503, not 'the passkey did not work'", async () => {
    const client = await newClient(svc);
    const config = await relyingParty(svc, client);
    const session = await signUp(svc);
    const device = await withPasskey(session);
    const browser = await signedInBrowser(config, session.user.email);
    const { requestId } = await begin(config, browser, { acr_values: PHR });
    const { faulty, fault } = withTokenHookDown(browser);
    const failed = await faulty.post("/oauth2/interaction/reauth/passkey", {
      request_id: requestId,
      refresh_token: await passkeyCeremony(device, session.user.email),
    });
    expect(fault.failures).toBe(1);
    await expectUnavailableStep(failed);
    // A new ceremony once the platform is back raises the session.
    const raised = await browser.post("/oauth2/interaction/reauth/passkey", {
      request_id: requestId,
      refresh_token: await passkeyCeremony(device, session.user.email),
    });
    expect(raised.status).toBe(303);
  });
});

describe("prompt=none and prompt=select_account", () => {
  it("rule: prompt=none with an unmet acr answers interaction_required, with an exceeded max_age login_required (OIDC Core §3.1.2.6)", async () => {
    const client = await newClient(svc);
    const config = await relyingParty(svc, client);
    const { user } = await signUp(svc);
    const browser = await signedInBrowser(config, user.email);
    const weak = await begin(config, browser, { prompt: "none", acr_values: MFA });
    const answer = location(weak.answer);
    expect(answer.searchParams.get("error")).toBe("interaction_required");
    expect(answer.searchParams.get("iss")).toBe(ISSUER);
    expect(answer.searchParams.get("state")).toBe(weak.checks.expectedState);
    later(120);
    const stale = await begin(config, browser, { prompt: "none", max_age: "60" });
    expect(location(stale.answer).searchParams.get("error")).toBe("login_required");
    const fine = await begin(config, browser, { prompt: "none", max_age: "600", acr_values: PWD });
    const tokens = await oidc.authorizationCodeGrant(config, location(fine.answer), fine.checks);
    expect(claimsOf(tokens)).toMatchObject({ acr: PWD, amr: ["pwd"] });
  });

  it("rule: select_account shows the signed-in account with continue and another account", async () => {
    const client = await newClient(svc);
    const config = await relyingParty(svc, client);
    const { user } = await signUp(svc);
    const browser = await signedInBrowser(config, user.email);
    const { page, requestId, checks } = await begin(config, browser, { prompt: "select_account" });
    const html = await page.text();
    expect(html).toContain("Choose an account");
    expect(html).toContain(user.email);
    expect(html).toContain("/oauth2/interaction/switch");
    const chosen = await browser.post("/oauth2/interaction/select-account", { request_id: requestId });
    // Consent was given before: straight back to the client.
    const tokens = await oidc.authorizationCodeGrant(
      config,
      await untilClient(browser, requestId, chosen),
      checks,
    );
    expect(claimsOf(tokens).sub).toBe(user.id);

    const another = await begin(config, browser, { prompt: "select_account" });
    const switched = await browser.post("/oauth2/interaction/switch", { request_id: another.requestId });
    expect(browser.signedIn).toBe(false);
    expect(await (await browser.get(location(switched).toString())).text()).toContain('name="password"');
  });
});

describe("how a sign-in on the page is written (RFC 8176)", () => {
  it("rule: password + TOTP is pwd, otp, mfa; threat: a form that claims another first factor is not believed", async () => {
    const client = await newClient(svc);
    const config = await relyingParty(svc, client);
    const session = await signUp(svc);
    const code = await withTotp(session);
    const secondStep = async (browser: Browser) => {
      const { requestId, checks } = await begin(config, browser);
      const first = await browser.post("/oauth2/interaction/sign-in", {
        request_id: requestId,
        email: session.user.email,
        password: "correct horse battery",
      });
      const html = await first.text();
      const field = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(html)?.[1];
      return { requestId, checks, ticket: field("ticket")!, first: field("first")! };
    };
    const honest = new Browser(svc);
    const step = await secondStep(honest);
    expect(step.first).toMatch(/^password\./);
    const done = await honest.post("/oauth2/interaction/mfa", {
      request_id: step.requestId,
      ticket: step.ticket,
      first: step.first,
      otp: code(),
    });
    const tokens = await oidc.authorizationCodeGrant(
      config,
      await untilClient(honest, step.requestId, done),
      step.checks,
    );
    expect(claimsOf(tokens)).toMatchObject({ acr: MFA, amr: ["pwd", "otp", "mfa"] });

    // The first factor is sealed with the ticket: an edited one counts as a sign-in of unknown way.
    later(30);
    const tampering = new Browser(svc);
    const other = await secondStep(tampering);
    const forged = `passkey.${other.first.split(".")[1]}`;
    const doneForged = await tampering.post("/oauth2/interaction/mfa", {
      request_id: other.requestId,
      ticket: other.ticket,
      first: forged,
      otp: code(),
    });
    const forgedTokens = await oidc.authorizationCodeGrant(
      config,
      await untilClient(tampering, other.requestId, doneForged),
      other.checks,
    );
    expect(claimsOf(forgedTokens)).toMatchObject({ acr: MFA, amr: ["otp", "mfa"] });
  });
});

describe("where the sign-in goes", () => {
  it("rule: introspection reports auth_time, acr and amr of access and refresh tokens (from the grant)", async () => {
    const client = await newClient(svc);
    const config = await relyingParty(svc, client);
    const { user } = await signUp(svc);
    const browser = await signedInBrowser(config, user.email);
    const { page, requestId, checks } = await begin(config, browser, { scope: "openid offline_access" });
    const tokens = await oidc.authorizationCodeGrant(
      config,
      await untilClient(browser, requestId, page),
      checks,
    );
    for (const token of [tokens.access_token, tokens.refresh_token!]) {
      const response = await postForm(svc, "/oauth2/introspect", { token }, basic(client));
      expect(await response.json()).toMatchObject({
        active: true,
        auth_time: claimsOf(tokens).auth_time,
        acr: PWD,
        amr: ["pwd"],
      });
    }
  });

  it("rule: a device approval carries the approver's sign-in into the device's tokens", async () => {
    const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
    const client = await newClient(svc, {
      clientName: "Step-up CLI",
      tokenEndpointAuthMethod: "none",
      grantTypes: [DEVICE_GRANT],
      redirectUris: [],
    });
    const { user } = await signUp(svc);
    const started = await postForm(svc, "/oauth2/device_authorization", {
      client_id: client.clientId,
      scope: "openid",
    });
    const device = (await started.json()) as { device_code: string; user_code: string };
    const browser = new Browser(svc);
    const entered = await browser.post("/oauth2/device", { user_code: device.user_code });
    const requestId = location(entered).searchParams.get("request_id")!;
    await signIn(browser, requestId, user.email);
    const approved = await browser.post("/oauth2/interaction/consent", {
      request_id: requestId,
      decision: "allow",
    });
    expect(approved.status).toBe(200);
    later(6);
    const polled = await postForm(svc, "/oauth2/token", {
      grant_type: DEVICE_GRANT,
      device_code: device.device_code,
      client_id: client.clientId,
    });
    const tokens = (await polled.json()) as TokenAnswer;
    expect(decodeJwt(tokens.id_token!).payload).toMatchObject({ sub: user.id, acr: PWD, amr: ["pwd"] });
    expect(decodeJwt(tokens.access_token).payload).toMatchObject({ acr: PWD, amr: ["pwd"] });
  });

  it("rule: an external login UI's bearer counts by its session's way; an elevated one as a recent passkey (contract §6)", async () => {
    const client = await newClient(svc);
    const session = await signUp(svc);
    const device = await withPasskey(session);
    const stronger = await svc.request("GET", `${authorizeUrl(client)}&acr_values=${PHR}`);
    const requestId = location(stronger).searchParams.get("request_id")!;
    const plain = await svc.post("/oauth2/login", { requestId }, session.accessToken);
    expect(plain.status).toBe(401);
    const elevated = await elevate(svc, device, session);
    const { code } = await codeFor(svc, client, elevated, { acr_values: PHR });
    const answer = (await (await exchange(svc, client, code)).json()) as TokenAnswer;
    expect(decodeJwt(answer.id_token!).payload).toMatchObject({ acr: PHR, amr: ["hwk"] });
  });
});

const authorizeUrl = (client: { clientId: string }) =>
  `/oauth2/authorize?client_id=${encodeURIComponent(client.clientId)}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&response_type=code&scope=openid`;

/** An elevated session (contract §6): a WebAuthn assertion by one of the user's keys, through the API. */
async function elevate(svc: TestService, device: SoftwareAuthenticator, session: WireSession) {
  const started = await svc.request("POST", "/elevate/webauthn", { token: session.accessToken });
  const options = (await started.json()) as PublicKeyCredentialRequestOptionsJSON;
  const verified = await svc.post(
    "/elevate/webauthn/verify",
    { credential: await device.get(options) },
    session.accessToken,
  );
  expect(verified.status).toBe(200);
  return ((await verified.json()) as { session: WireSession }).session;
}
