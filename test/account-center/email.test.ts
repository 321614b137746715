// The account center's email section (contract §13): a change through the API's own flow (a link to the NEW address;
// the address changes only when it is followed), behind a recent re-authentication. Threats: a borrowed browser
// moving the account to an attacker's mailbox (re-authentication); a typo locking the owner out (nothing changes
// until the link is followed); the landing's refresh token left working in a URL (it is ended on arrival); an
// address of another account taken over.
import { afterEach, describe, expect, it, vi } from "vitest";
import { mailbox, PASSWORD, signUp, uniqueEmail, verifyPath } from "../helpers";
import {
  ACCOUNT,
  accountPage,
  accountService,
  later,
  location,
  PAGE_STEPS,
  refresh,
  STALE,
  signedIn,
} from "./support";

const svc = accountService();

afterEach(() => {
  vi.useRealTimers();
});

describe("changing the email address", { timeout: PAGE_STEPS }, () => {
  it("mails a link to the new address; following it changes the address and signs everyone out", async () => {
    const { browser, email } = await signedIn(svc);
    const newEmail = uniqueEmail("moved");
    const asked = await browser.post(`${ACCOUNT}/email`, { newEmail });
    expect(asked.status).toBe(303);
    expect(location(asked).searchParams.get("notice")).toBe("email-sent");
    const page = await accountPage(browser, "?notice=email-sent");
    expect(page).toContain(`Waiting for you to confirm ${newEmail}.`);
    // Nothing changed yet: the old address still signs in.
    expect((await svc.post("/signin/email-password", { email, password: PASSWORD })).status).toBe(200);

    const [mail] = await mailbox(svc, newEmail);
    expect(mail, "a mail to the new address").toBeDefined();
    const verified = await svc.request("GET", verifyPath(mail!));
    expect(verified.status).toBe(302);
    const landing = location(verified);
    expect(landing.pathname).toBe("/auth/v1/account");
    const refreshToken = landing.searchParams.get("refreshToken")!;
    expect(refreshToken).toBeTruthy();
    const landed = await browser.get(landing.toString());
    expect(landed.status).toBe(200);
    expect(await landed.text()).toContain("Your email address is changed");
    // The link's session is ended on arrival; the browser's ended with the change.
    expect((await refresh(svc, refreshToken)).status).toBe(401);
    expect((await browser.get(ACCOUNT)).status).toBe(303);
    expect((await svc.post("/signin/email-password", { email: newEmail, password: PASSWORD })).status).toBe(
      200,
    );
  });

  it("refuses an address another account has, the same address, and a malformed one, with a 400", async () => {
    const { browser, email } = await signedIn(svc);
    const taken = await signUp(svc);
    for (const [newEmail, words] of [
      [taken.user.email, "That email address is already used by another account."],
      [email, "That is already your email address."],
      ["not-an-address", "Enter a valid email address."],
    ] as const) {
      const refused = await browser.post(`${ACCOUNT}/email`, { newEmail });
      expect(refused.status, newEmail).toBe(400);
      expect(await refused.text()).toContain(words);
    }
  });

  it("signed in long ago: re-authentication first, and no mail before it", async () => {
    const { browser } = await signedIn(svc);
    later(STALE);
    const newEmail = uniqueEmail("held");
    const held = await browser.post(`${ACCOUNT}/email`, { newEmail });
    expect(held.status).toBe(401);
    expect(await held.text()).toContain("/auth/v1/account/reauth/password");
    expect(await mailbox(svc, newEmail)).toHaveLength(0);
  });

  it("a link that does not work lands on a page that says so", async () => {
    const landed = await svc.request(
      "GET",
      `${ACCOUNT}?own_mac=x&error=invalid-ticket&errorDescription=expired`,
    );
    expect(landed.status).toBe(400);
    expect(await landed.text()).toContain("This link does not work");
  });
});
