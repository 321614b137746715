// Impersonation approves nothing (contract operators.md §1: "no device-code or CIBA approval; no invitations
// accepted"), through the hosted pages a browser drives, signed in by the impersonation's landing link. Threat: a
// support engineer (or whoever holds their console) using the user's session to approve a device of their own (a
// device code they started, now holding the user's tokens), to say yes to an agent's CIBA request (a payment) in the
// user's name, or to join the user to an organization (its data shown to the org, the org's roles given to the user).
// Each door answers 403 `forbidden` naming the reason, and nothing is approved, denied or accepted afterwards: the
// device's and the agent's polls still hear `authorization_pending`, the invitation stays the invitee's to accept.
import { afterEach, describe, expect, it, vi } from "vitest";
import { CATALOGUES, LANGUAGES } from "../../src/browser/text";
import type { WireClient } from "../../src/oauth2/clients";
import type { DeviceAuthorizationResponse } from "../../src/oauth2/device";
import { accountPage, signedIn } from "../account-center/support";
import { mailbox, signUp, uniqueEmail, type WireSession } from "../helpers";
import { Browser } from "../oauth2/page-browser";
import {
  ADMIN,
  basic,
  ISSUER,
  location,
  newClient,
  oauth2Error,
  postForm,
  provider,
} from "../oauth2/support";
import { createOrg } from "../orgs/support";

const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
const CIBA_GRANT = "urn:openid:params:grant-type:ciba";
const svc = provider({ AUTH_IMPERSONATION_ENABLED: "true" });

afterEach(() => {
  vi.useRealTimers();
});

/** Moves the server's clock past a poll interval, so a poll is answered for its state, not `slow_down`. */
function later(seconds: number) {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(Date.now() + seconds * 1000);
}

/** A browser signed in to the pages as `userId` by an impersonation's landing link (as the console hands it over). */
async function impersonatingBrowser(userId: string): Promise<{ browser: Browser; token: string }> {
  const answer = await svc.request("POST", `/admin/users/${userId}/impersonate`, {
    headers: ADMIN,
    json: { reason: "ticket #77: cannot pay", actor: "ana@support" },
  });
  expect(answer.status, await answer.clone().text()).toBe(200);
  const { url, session } = (await answer.json()) as { url: string; session: WireSession };
  const browser = new Browser(svc);
  await browser.get(url);
  expect(browser.signedIn).toBe(true);
  return { browser, token: session.accessToken };
}

/** Both answers of the page's decision form, refused as an impersonation's (the page shows why). */
async function decisionsRefused(browser: Browser, requestId: string) {
  for (const decision of ["allow", "deny"]) {
    const answer = await browser.post("/oauth2/interaction/consent", { request_id: requestId, decision });
    expect(answer.status, decision).toBe(403);
    expect(await answer.text(), decision).toContain("impersonated session may not");
  }
}

describe("an impersonated session approves nothing on the pages", () => {
  it("no device approved or denied through the device page: the device keeps polling authorization_pending", async () => {
    const client: WireClient = await newClient(svc, {
      clientName: "Acme CLI",
      tokenEndpointAuthMethod: "none",
      grantTypes: [DEVICE_GRANT],
      redirectUris: [],
    });
    const started = await postForm(svc, "/oauth2/device_authorization", {
      client_id: client.clientId,
      scope: "openid",
    });
    const device = (await started.json()) as DeviceAuthorizationResponse;
    const { user } = await signUp(svc);
    const { browser } = await impersonatingBrowser(user.id);
    // Typing the code only finds the request (nothing is granted by it); the consent page shows, as a read.
    const entered = await browser.post("/oauth2/device", { user_code: device.user_code });
    expect(entered.status).toBe(303);
    const pageUrl = location(entered);
    expect((await browser.get(pageUrl.toString())).status).toBe(200);
    await decisionsRefused(browser, pageUrl.searchParams.get("request_id")!);
    later(6);
    const poll = await postForm(svc, "/oauth2/token", {
      grant_type: DEVICE_GRANT,
      device_code: device.device_code,
      client_id: client.clientId,
    });
    await oauth2Error(poll, 400, "authorization_pending");
  });

  it("no CIBA request approved or denied (the mailed link's page): the agent keeps polling authorization_pending", async () => {
    const agent = await newClient(svc, {
      clientName: "Pay Agent",
      redirectUris: [],
      grantTypes: [CIBA_GRANT],
      backchannelTokenDeliveryMode: "poll",
    });
    const email = uniqueEmail("ciba-imp");
    const { user } = await signUp(svc, email);
    const asked = await postForm(
      svc,
      "/oauth2/bc-authorize",
      { scope: "openid", login_hint: email, binding_message: "Pay invoice 9" },
      basic(agent),
    );
    expect(asked.status).toBe(200);
    const { auth_req_id } = (await asked.json()) as { auth_req_id: string };
    const [mail] = await mailbox(svc, email);
    const link = /(http\S+\/oauth2\/ciba\?request=[A-Za-z0-9_-]+)/.exec(mail!.text)![1]!;
    const { browser } = await impersonatingBrowser(user.id);
    // The account center lists it (reading is allowed), and the link opens the approval page.
    expect(await (await browser.get("/account")).text()).toContain("“Pay invoice 9”");
    const opened = await browser.get(link.replace(ISSUER, ""));
    expect(opened.status).toBe(303);
    const page = await browser.get(location(opened).toString());
    expect(await page.text()).toContain("“Pay invoice 9”");
    await decisionsRefused(browser, location(opened).searchParams.get("request_id")!);
    later(6);
    const poll = await postForm(svc, "/oauth2/token", { grant_type: CIBA_GRANT, auth_req_id }, basic(agent));
    await oauth2Error(poll, 400, "authorization_pending");
  });

  it("no invitation accepted, on the page or the API with its real ticket; the invitee still can, afterwards", async () => {
    const owner = await signUp(svc);
    const org = await createOrg(owner);
    const invitee = await signUp(svc, uniqueEmail("invitee-imp"));
    await svc.request("PATCH", `/admin/users/${invitee.user.id}`, {
      headers: ADMIN,
      json: { emailVerified: true },
    });
    const invited = await svc.request("POST", `/orgs/${org.id}/invitations`, {
      token: owner.accessToken,
      json: { email: invitee.user.email, role: "admin" },
    });
    expect(invited.status).toBe(201);
    const [mail] = await mailbox(svc, invitee.user.email);
    const link = /(http\S+[?&]ticket=\S+)/.exec(mail!.text)![1]!;
    const ticket = new URL(link).searchParams.get("ticket")!;
    const { browser, token } = await impersonatingBrowser(invitee.user.id);
    const opened = await browser.get(link);
    const requestId = location(opened).searchParams.get("request_id")!;
    const join = await browser.post("/oauth2/interaction/consent", {
      request_id: requestId,
      decision: "allow",
    });
    expect(join.status).toBe(403);
    expect(await join.text()).toContain("impersonated session may not");
    const byApi = await svc.request("POST", "/orgs/invitations/accept", { token, json: { ticket } });
    expect(byApi.status).toBe(403);
    expect(((await byApi.json()) as { error: string }).error).toBe("forbidden");
    const orgsOf = async () =>
      (
        (await (await svc.request("GET", "/orgs", { token: invitee.accessToken })).json()) as {
          items: { id: string }[];
        }
      ).items.map((item) => item.id);
    expect(await orgsOf()).not.toContain(org.id);
    // Nothing was spent: the user's own accept still joins.
    const own = await svc.request("POST", "/orgs/invitations/accept", {
      token: invitee.accessToken,
      json: { ticket },
    });
    expect(own.status, await own.clone().text()).toBe(200);
    expect(await orgsOf()).toContain(org.id);
  });
});

describe("the account center while impersonating", () => {
  // Threat: forms offered to the support engineer that every post then refuses (they look like a way to change the
  // user's password or delete the account, and a confused engineer retries); and a form added later that nobody
  // remembered to hide. The whole body is one disabled fieldset, under one line saying why, in the page's language.
  const escaped = (text: string) =>
    text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll("'", "&#39;");

  it("shows every change form read-only, with the reason in each language; the user's own page stays writable", async () => {
    const { user } = await signUp(svc);
    const { browser } = await impersonatingBrowser(user.id);
    for (const language of LANGUAGES) {
      const page = await browser.get(`/account?ui_locales=${language}`);
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html, language).toContain(escaped(CATALOGUES[language].impersonation.readOnly));
      const start = html.indexOf('<fieldset class="read-only" disabled');
      const end = html.lastIndexOf("</fieldset>");
      expect(start, language).toBeGreaterThan(0);
      const inside = html.slice(start, end);
      // The page's change forms are there to read (the password's, the profile's, the deletion's) but disabled.
      for (const action of ["/account/password", "/account/profile", "/account/delete", "/account/security/"])
        expect(inside, `${language} ${action}`).toContain(`action="/auth/v1${action}`);
      // Outside the fieldset, only the sign-out form (an impersonation may end itself).
      const outside = html.slice(0, start) + html.slice(end);
      expect(outside.match(/<form /g), language).toHaveLength(1);
      expect(outside).toContain('action="/auth/v1/account/sign-out"');
    }
    // A user in their own session: no fieldset, no line.
    const own = await signedIn(svc);
    const mine = await accountPage(own.browser);
    expect(mine).toContain('action="/auth/v1/account/password"');
    expect(mine).not.toContain("<fieldset");
    expect(mine).not.toContain(escaped(CATALOGUES.en.impersonation.readOnly));
  });
});
