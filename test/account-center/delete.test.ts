// The account center's danger zone (contract §13): deleting one's own account, behind a recent re-authentication and
// a typed word. Threats: a borrowed browser or a stray click deleting the account (re-authentication, typed word); a
// deleted account whose sessions or password still work; a cross-site post deleting it (the CSRF checks).
import { afterEach, describe, expect, it, vi } from "vitest";
import { auditTypesOf, PASSWORD } from "../helpers";
import {
  ACCOUNT,
  accountPage,
  accountService,
  later,
  PAGE_STEPS,
  reauthWithPassword,
  refresh,
  STALE,
  signedIn,
} from "./support";

const svc = accountService();

afterEach(() => {
  vi.useRealTimers();
});

describe("deleting the account", { timeout: PAGE_STEPS }, () => {
  it("needs the typed word; then the account, its sessions and its password are gone", async () => {
    const { browser, email, session, user } = await signedIn(svc);
    const wrong = await browser.post(`${ACCOUNT}/delete`, { confirm: "yes please" });
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toContain("Type DELETE to confirm.");
    const foreign = await browser.post(
      `${ACCOUNT}/delete`,
      { confirm: "DELETE" },
      { origin: "https://evil.example" },
    );
    expect(foreign.status).toBe(403);
    expect((await refresh(svc, session.refreshToken)).status).toBe(200);

    const deleted = await browser.post(`${ACCOUNT}/delete`, { confirm: " delete " });
    expect(deleted.status).toBe(200);
    expect(await deleted.text()).toContain("Your account is deleted");
    expect(browser.signedIn).toBe(false);
    expect((await refresh(svc, session.refreshToken)).status).toBe(401);
    expect((await svc.post("/signin/email-password", { email, password: PASSWORD })).status).toBe(401);
    expect((await browser.get(ACCOUNT)).status).toBe(303);
    expect(await auditTypesOf(user.id)).toContain("account.delete");
  });

  it("signed in long ago: re-authentication first", async () => {
    const { browser, session } = await signedIn(svc);
    later(STALE);
    expect(await accountPage(browser)).toContain("/auth/v1/account/confirm?section=delete");
    const held = await browser.post(`${ACCOUNT}/delete`, { confirm: "DELETE" });
    expect(held.status).toBe(401);
    expect(await held.text()).toContain("/auth/v1/account/reauth/password");
    expect((await refresh(svc, session.refreshToken)).status).toBe(200);
    await reauthWithPassword(browser, "delete");
    const deleted = await browser.post(`${ACCOUNT}/delete`, { confirm: "DELETE" });
    expect(deleted.status).toBe(200);
    expect((await refresh(svc, session.refreshToken)).status).toBe(401);
  });
});
