// The account center's password section (contract §13): a change behind a recent re-authentication, signing the
// other devices out unless the person unticks it. Threats: a borrowed or stolen browser, signed in days ago, changing
// the password and locking the owner out (the re-authentication); a thief's session that outlives the change (others
// signed out by default); a weak password (the API's policy).
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  ACCOUNT,
  accountPage,
  accountService,
  later,
  location,
  PAGE_STEPS,
  PASSWORD,
  reauthWithPassword,
  refresh,
  STALE,
  signedIn,
} from "./support";

const svc = accountService();
const NEW_PASSWORD = "a whole new horse battery";

afterEach(() => {
  vi.useRealTimers();
});

const signInWith = (email: string, password: string) =>
  svc.post("/signin/email-password", { email, password });

describe("the password section", { timeout: PAGE_STEPS }, () => {
  it("just signed in: changes the password, keeps this browser, signs the other devices out", async () => {
    const { browser, email, session } = await signedIn(svc);
    expect(await accountPage(browser)).toContain(`action="/auth/v1/account/password"`);
    const changed = await browser.post(`${ACCOUNT}/password`, {
      newPassword: NEW_PASSWORD,
      signOutOthers: "true",
    });
    expect(changed.status).toBe(303);
    expect(location(changed).searchParams.get("notice")).toBe("password-changed-others-out");
    expect((await refresh(svc, session.refreshToken)).status).toBe(401);
    expect((await browser.get(ACCOUNT)).status).toBe(200);
    expect((await signInWith(email, NEW_PASSWORD)).status).toBe(200);
    expect((await signInWith(email, PASSWORD)).status).toBe(401);
  });

  it("signed in long ago: re-authentication first (a wrong password is refused), then the change", async () => {
    const { browser, email, session } = await signedIn(svc);
    later(STALE);
    // The section offers a confirmation instead of the form, and a post straight to the form is held back.
    const page = await accountPage(browser);
    expect(page).toContain("/auth/v1/account/confirm?section=password");
    expect(page).not.toContain(`action="/auth/v1/account/password"`);
    const held = await browser.post(`${ACCOUNT}/password`, {
      newPassword: NEW_PASSWORD,
      signOutOthers: "true",
    });
    expect(held.status).toBe(401);
    const form = await held.text();
    expect(form).toContain("/auth/v1/account/reauth/password");
    expect(form).toContain('name="section" value="password"');
    expect((await signInWith(email, PASSWORD)).status).toBe(200);

    const wrong = await browser.post(`${ACCOUNT}/reauth/password`, {
      section: "password",
      password: "not it at all",
    });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain('role="alert"');

    await reauthWithPassword(browser, "password");
    // Unticked: the other devices stay signed in.
    const changed = await browser.post(`${ACCOUNT}/password`, { newPassword: NEW_PASSWORD });
    expect(changed.status).toBe(303);
    expect(location(changed).searchParams.get("notice")).toBe("password-changed");
    expect((await refresh(svc, session.refreshToken)).status).toBe(200);
    expect((await signInWith(email, NEW_PASSWORD)).status).toBe(200);
  });

  it("the confirmation link shows the re-authentication when needed, and goes straight back when not", async () => {
    const { browser } = await signedIn(svc);
    const fresh = await browser.get(`${ACCOUNT}/confirm?section=password`);
    expect(fresh.status).toBe(303);
    expect(location(fresh).hash).toBe("#password");
    later(STALE);
    const stale = await browser.get(`${ACCOUNT}/confirm?section=password`);
    expect(stale.status).toBe(200);
    expect(await stale.text()).toContain("/auth/v1/account/reauth/password");
  });

  it("refuses a password the policy refuses, with a 400 in the section", async () => {
    const { browser } = await signedIn(svc);
    const short = await browser.post(`${ACCOUNT}/password`, { newPassword: "short", signOutOthers: "true" });
    expect(short.status).toBe(400);
    expect(await short.text()).toContain("Use at least 9 characters.");
    const long = await browser.post(`${ACCOUNT}/password`, {
      newPassword: "x".repeat(60),
      signOutOthers: "true",
    });
    expect(long.status).toBe(400);
    expect(await long.text()).toContain("Use at most 50 characters.");
  });
});
