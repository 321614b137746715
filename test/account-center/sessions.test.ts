// The account center's devices section (contract §13): the user's sessions, "sign out that one", "sign out all
// other devices". Threats: a session someone else started (a stolen password, a forgotten browser) that goes on
// refreshing after the owner signed it out; a form that names ANOTHER user's session id and ends it (or learns
// that it exists); a list that shows other users' sessions.
import { describe, expect, it } from "vitest";
import { PASSWORD, signUp } from "../helpers";
import { ACCOUNT, accountPage, accountService, location, PAGE_STEPS, refresh, signedIn } from "./support";

const svc = accountService();
const FIREFOX_ON_LINUX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";

/** A second sign-in of the user through the API, from another device: what the list must show and end. */
async function signInElsewhere(email: string) {
  const response = await svc.request("POST", "/signin/email-password", {
    json: { email, password: PASSWORD },
    headers: { "user-agent": FIREFOX_ON_LINUX },
  });
  expect(response.status).toBe(200);
  const { session } = (await response.json()) as {
    session: { refreshToken: string; refreshTokenId: string };
  };
  return session;
}

describe("the devices section", { timeout: PAGE_STEPS }, () => {
  it("lists this browser's session and another device's; signing the other out ends its refresh at once", async () => {
    const { browser, email, session: signUpSession } = await signedIn(svc);
    const other = await signInElsewhere(email);
    const html = await accountPage(browser);
    // Both sessions of the sign-in page and the API, this browser's marked, the other one named by its User-Agent.
    expect(html).toContain("This device");
    expect(html).toContain("Firefox on Linux");
    expect(html).toContain("Password");
    expect(html).toContain(`name="sessionId" value="${other.refreshTokenId}"`);
    expect(html).toContain(`name="sessionId" value="${signUpSession.refreshTokenId}"`);

    const revoked = await browser.post(`${ACCOUNT}/sessions/revoke`, { sessionId: other.refreshTokenId });
    expect(revoked.status).toBe(303);
    expect(location(revoked).hash).toBe("#sessions");
    expect((await refresh(svc, other.refreshToken)).status).toBe(401);
    const after = await accountPage(browser, "?notice=session-revoked");
    expect(after).toContain("That device is signed out.");
    expect(after).not.toContain(other.refreshTokenId);
    // The rest stands: this browser, and the sign-up's session.
    expect((await refresh(svc, signUpSession.refreshToken)).status).toBe(200);
  });

  it("another user's session id cannot be ended from here: 404, and that session goes on", async () => {
    const { browser } = await signedIn(svc);
    const stranger = await signUp(svc);
    const attempt = await browser.post(`${ACCOUNT}/sessions/revoke`, { sessionId: stranger.refreshTokenId });
    expect(attempt.status).toBe(404);
    expect(await attempt.text()).toContain("That device is no longer signed in.");
    expect((await refresh(svc, stranger.refreshToken)).status).toBe(200);
    // Nor does the list show it.
    expect(await accountPage(browser)).not.toContain(stranger.refreshTokenId);
  });

  it("an unknown or malformed id is the same 404", async () => {
    const { browser } = await signedIn(svc);
    for (const sessionId of [crypto.randomUUID(), "", "x".repeat(500)]) {
      const attempt = await browser.post(`${ACCOUNT}/sessions/revoke`, { sessionId });
      expect(attempt.status, sessionId).toBe(404);
    }
  });

  it("signs out every other device and keeps this one", async () => {
    const { browser, email, session: signUpSession } = await signedIn(svc);
    const other = await signInElsewhere(email);
    const ended = await browser.post(`${ACCOUNT}/sessions/revoke-others`, {});
    expect(ended.status).toBe(303);
    expect((await refresh(svc, other.refreshToken)).status).toBe(401);
    expect((await refresh(svc, signUpSession.refreshToken)).status).toBe(401);
    const html = await accountPage(browser, "?notice=others-revoked");
    expect(html).toContain("Every other device is signed out.");
    expect(html).toContain("No other device is signed in.");
  });
});
