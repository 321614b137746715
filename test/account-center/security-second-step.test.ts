// The account center's choice of second step (issue 47): a plain HTML form (radio buttons, no script) posting to
// `/account/security/second-step`, through the API's own rules (src/auth/mfa/mfa-choice.ts). Each test names the threat
// or rule it covers.
import { afterEach, describe, expect, it, vi } from "vitest";
import { mailbox, PASSWORD, service } from "../helpers";
import { Browser, ORIGIN } from "../oauth2/page-browser";
import { authorize, location, newClient, requestIdOf } from "../oauth2/support";
import { accountPage, apiPasskey, backTo, later, SECURITY_ON, signedInBrowser } from "./security-support";

const svc = service(SECURITY_ON);
const ADMIN = { "x-hasura-admin-secret": String(svc.env.AUTH_ADMIN_SECRET) };
const ACTION = 'action="/auth/v1/account/security/second-step"';

afterEach(() => {
  vi.useRealTimers();
});

const apiSignIn = async (email: string) =>
  (await (await svc.post("/signin/email-password", { email, password: PASSWORD })).json()) as {
    session: { user: { activeMfaType: string | null } } | null;
    mfa: { ticket: string } | null;
  };

const verifyEmail = async (userId: string) =>
  expect(
    (await svc.request("PATCH", `/admin/users/${userId}`, { json: { emailVerified: true }, headers: ADMIN }))
      .status,
  ).toBe(200);

describe("the choice of second step on the page", { timeout: 30_000 }, () => {
  it("rule: email and passkey offered only when held; choosing email makes the API's sign-in ask the mailed code; off again", async () => {
    const { browser, email, api } = await signedInBrowser(svc, "step-email");
    // Threat: a code to an address nobody proved; a key the person does not have (a lock-out).
    await svc.request("PATCH", `/admin/users/${api.user.id}`, {
      json: { emailVerified: false },
      headers: ADMIN,
    });
    const before = await accountPage(browser);
    expect(before).toContain(ACTION);
    expect(before).toMatch(/id="second-step-email" name="choice" value="email" disabled/);
    expect(before).toMatch(/id="second-step-webauthn" name="choice" value="webauthn" disabled/);
    const refused = await browser.post("/account/security/second-step", { choice: "email" });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("Verify your email address first");

    await verifyEmail(api.user.id);
    expect(await accountPage(browser)).toMatch(/id="second-step-email" name="choice" value="email">/);
    const chosen = await browser.post("/account/security/second-step", { choice: "email" });
    expect(backTo(chosen, "second-step")).toBe("security-second-step-changed");
    const noticed = await browser.get("/account?notice=security-second-step-changed");
    expect(await noticed.text()).toContain("Your second step was changed.");
    expect((await apiSignIn(email)).mfa?.ticket).toMatch(/^mfaEmail:/);

    expect(
      backTo(await browser.post("/account/security/second-step", { choice: "off" }), "second-step"),
    ).toBe("security-second-step-changed");
    expect((await apiSignIn(email)).session?.user.activeMfaType).toBeNull();
    // Anything but the offered values is the form again, nothing changed.
    expect((await browser.post("/account/security/second-step", { choice: "totp" })).status).toBe(400);
  });

  it("rule: a passkey of the user's can be chosen; the API's sign-in then asks for it", async () => {
    const { browser, email, api } = await signedInBrowser(svc, "step-key");
    const refused = await browser.post("/account/security/second-step", { choice: "webauthn" });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/You don(&#39;|')t have that one yet/);
    await apiPasskey(svc, api);
    expect(
      backTo(await browser.post("/account/security/second-step", { choice: "webauthn" }), "second-step"),
    ).toBe("security-second-step-changed");
    expect((await apiSignIn(email)).mfa?.ticket).toMatch(/^mfaWebauthn:/);
  });

  it("threat: a borrowed browser or a cross-site page dropping the step: a recent confirmation first, same-origin only", async () => {
    const { browser, email, api } = await signedInBrowser(svc, "step-stale");
    await verifyEmail(api.user.id);
    expect(
      backTo(await browser.post("/account/security/second-step", { choice: "email" }), "second-step"),
    ).toBe("security-second-step-changed");
    const crossSite = await browser.post(
      "/account/security/second-step",
      { choice: "off" },
      { origin: "https://evil.example", "sec-fetch-site": "cross-site" },
    );
    expect(crossSite.status).toBe(403);
    later(10);
    const page = await accountPage(browser);
    expect(page).toContain("/auth/v1/account/confirm?section=second-step");
    expect(page).not.toContain(ACTION);
    const stale = await browser.post("/account/security/second-step", { choice: "off" }, ORIGIN);
    expect(stale.status).toBe(401);
    expect((await apiSignIn(email)).mfa?.ticket).toMatch(/^mfaEmail:/);
  });

  it("rule: the hosted sign-in page asks the chosen step: the mailed code in its form; a passkey step says to use the passkey", async () => {
    // Threat: the hosted page letting the password alone through, or recording a mailed code as an app's code.
    const { browser, email, api } = await signedInBrowser(svc, "step-page");
    await verifyEmail(api.user.id);
    expect(
      backTo(await browser.post("/account/security/second-step", { choice: "email" }), "second-step"),
    ).toBe("security-second-step-changed");
    const other = new Browser(svc);
    const requestId = await requestIdOf(await authorize(svc, await newClient(svc)));
    const first = await other.post("/oauth2/interaction/sign-in", {
      request_id: requestId,
      email,
      password: PASSWORD,
    });
    expect(first.status).toBe(200);
    const page = await first.text();
    expect(page).toContain("Enter the code we just mailed to you.");
    const ticket = /name="ticket" value="([^"]+)"/.exec(page)?.[1];
    const sealed = /name="first" value="([^"]+)"/.exec(page)?.[1];
    expect(ticket).toMatch(/^mfaEmail:/);
    const [mail] = await mailbox(svc, email);
    const otp = /\b(\d{6})\b/.exec(mail!.text)![1]!;
    const done = await other.post("/oauth2/interaction/mfa", {
      request_id: requestId,
      ticket: ticket!,
      first: sealed!,
      otp,
    });
    expect(done.status).toBe(303);
    expect(other.signedIn).toBe(true);
    expect(location(done).toString()).toContain("/oauth2/interaction");

    await apiPasskey(svc, api);
    expect(
      backTo(await browser.post("/account/security/second-step", { choice: "webauthn" }), "second-step"),
    ).toBe("security-second-step-changed");
    const third = new Browser(svc);
    const keyRequest = await requestIdOf(await authorize(svc, await newClient(svc)));
    const byPassword = await third.post("/oauth2/interaction/sign-in", {
      request_id: keyRequest,
      email,
      password: PASSWORD,
    });
    expect(byPassword.status).toBe(401);
    expect(await byPassword.text()).toContain("sign in with your passkey");
    expect(third.signedIn).toBe(false);
  });
});
