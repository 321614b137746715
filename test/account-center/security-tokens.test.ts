// The account center's personal access tokens (contract §13): a token created on the page signs in through the API
// (`POST /signin/pat`), is shown once and never again, lists by its metadata only, and revoking it ends it at once.
// Each test names the threat or rule it covers.
import { afterEach, describe, expect, it, vi } from "vitest";
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
} from "./security-support";

const svc = service(SECURITY_ON);

afterEach(() => {
  vi.useRealTimers();
});

const REVOKE = "/auth/v1/account/security/tokens/revoke";

/** Creates a token on the page; its value, read off the step that shows it. */
async function createToken(browser: Browser, name: string, days = "30") {
  const created = await browser.post("/account/security/tokens/create", { name, days });
  expect(created.status).toBe(200);
  expect(created.headers.get("cache-control")).toBe("no-store");
  const token = /<textarea id="token-value"[^>]*>([0-9a-f-]{36})<\/textarea>/.exec(await created.text())?.[1];
  expect(token, "the token on its step").toBeDefined();
  return token!;
}

describe("personal access tokens on the page", { timeout: 30_000 }, () => {
  it("rule: a token made on the page signs in with the API, is shown once, and lists by name and dates only", async () => {
    const { browser, api } = await signedInBrowser(svc, "pat-page");
    const token = await createToken(browser, "deploy script");
    const signedIn = await svc.post("/signin/pat", { personalAccessToken: token });
    expect(signedIn.status).toBe(200);
    expect(((await signedIn.json()) as { session: { user: { id: string } } }).session.user.id).toBe(
      api.user.id,
    );
    const page = await accountPage(browser);
    expect(page).toContain("deploy script");
    expect(page).not.toContain(token);
    expect(hiddenValues(page, REVOKE)).toHaveLength(1);
    expect(await auditTypesOf(api.user.id)).toContain("pat.created");
  });

  it("rule: revoking a token ends it at once: its next sign-in is invalid-pat", async () => {
    const { browser, api } = await signedInBrowser(svc, "pat-revoke");
    const token = await createToken(browser, "ci");
    const [id] = hiddenValues(await accountPage(browser), REVOKE);
    expect(backTo(await browser.post("/account/security/tokens/revoke", { id: id! }), "tokens")).toBe(
      "security-token-revoked",
    );
    const refused = await svc.post("/signin/pat", { personalAccessToken: token });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: string }).error).toBe("invalid-pat");
    expect(await auditTypesOf(api.user.id)).toContain("pat.revoked");
  });

  it("threat: another user's token id revokes nothing", async () => {
    const victim = await signedInBrowser(svc, "pat-victim");
    const token = await createToken(victim.browser, "victim's");
    const [id] = hiddenValues(await accountPage(victim.browser), REVOKE);
    const attacker = await signedInBrowser(svc, "pat-attacker");
    const answer = await attacker.browser.post("/account/security/tokens/revoke", { id: id! });
    expect(backTo(answer, "tokens")).toBe("security-gone");
    expect((await svc.post("/signin/pat", { personalAccessToken: token })).status).toBe(200);
  });

  it("threat: a browser signed in long ago mints no token until the person confirms again", async () => {
    const { browser } = await signedInBrowser(svc, "pat-stale");
    later(10);
    const page = await accountPage(browser);
    expect(page).not.toContain('action="/auth/v1/account/security/tokens/create"');
    expect(page).toContain("/auth/v1/account/confirm?section=tokens&amp;elevated=1");
    const refused = await browser.post("/account/security/tokens/create", { name: "sneaky", days: "365" });
    expect(refused.status).toBe(401);
    expect(await refused.text()).not.toContain('id="token-value"');
    expect(await accountPage(browser)).not.toContain("sneaky");
  });

  it("rule: under AUTH_REQUIRE_ELEVATED_CLAIM=recommended a user with a passkey confirms with it, as the API asks", async () => {
    const elevated = service({ ...SECURITY_ON, AUTH_REQUIRE_ELEVATED_CLAIM: "recommended" });
    const { browser, email, api } = await signedInBrowser(elevated, "pat-elevated");
    const device = await apiPasskey(elevated, api);
    // A fresh password sign-in is not enough: the page asks for the passkey (a 401 with the passkey step) ...
    const refused = await browser.post("/account/security/tokens/create", { name: "with key", days: "30" });
    expect(refused.status).toBe(401);
    expect(await refused.text()).toContain("reauth-passkey");
    // ... which, once performed, lets the token be made.
    const raised = await browser.post("/account/reauth/passkey", {
      refresh_token: await passkeyCeremony(elevated, device, email),
      section: "tokens",
      elevated: "1",
    });
    expect(backTo(raised, "tokens")).toBe("confirmed");
    expect(await createToken(browser, "with key")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("rule: a token needs a name; a bad lifetime falls back to the default; nothing is made on a refusal", async () => {
    const { browser } = await signedInBrowser(svc, "pat-name");
    const unnamed = await browser.post("/account/security/tokens/create", { name: "  ", days: "30" });
    expect(unnamed.status).toBe(400);
    expect(await unnamed.text()).toContain('role="alert"');
    const tooLong = await browser.post("/account/security/tokens/create", {
      name: "x".repeat(61),
      days: "30",
    });
    expect(tooLong.status).toBe(400);
    expect(hiddenValues(await accountPage(browser), REVOKE)).toHaveLength(0);
    await createToken(browser, "odd lifetime", "99999");
    expect(await accountPage(browser)).toContain("odd lifetime");
  });
});
