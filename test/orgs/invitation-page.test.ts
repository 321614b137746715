// The hosted invitation page (contract organizations.md §1, docs/organizations.md "The link"), through HTTP as a
// browser drives it: the mailed link, the page's sign-in, joining instead of consenting, the done view. The threat
// named above a test is what it keeps out.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { expectError, mailbox, PASSWORD, signUp, uniqueEmail, type WireSession } from "../helpers";
import { Browser, signIn } from "../oauth2/page-browser";
import { ISSUER, location, provider } from "../oauth2/support";
import { ADMIN, createOrg, type Org } from "./support";

// The authorization server on, its built-in page in use: what makes the mail link to the hosted page. French is
// allowed, for a French invitee's mail.
const svc = provider({ AUTH_LOCALE_ALLOWED_LOCALES: "en,fr" });

afterEach(() => {
  vi.useRealTimers();
});

/** A user with a session, its address verified unless said otherwise; `locale` its language. */
async function person(
  tag: string,
  { verified = true, locale }: { verified?: boolean; locale?: string } = {},
) {
  const session = await signUp(svc, uniqueEmail(tag), locale ? { locale } : undefined);
  if (verified) {
    const response = await svc.request("PATCH", `/admin/users/${session.user.id}`, {
      headers: ADMIN,
      json: { emailVerified: true },
    });
    expect(response.status).toBe(200);
  }
  return session;
}

/** The owner invites `email` as `role`; answers the mailed link. */
async function invite(owner: WireSession, org: Org, email: string, role = "admin", extra = {}) {
  const response = await svc.request("POST", `/orgs/${org.id}/invitations`, {
    token: owner.accessToken,
    json: { email, role, ...extra },
  });
  expect(response.status).toBe(201);
  const [mail] = await mailbox(svc, email);
  const link = /(http\S+[?&]ticket=\S+)/.exec(mail!.text)?.[1];
  if (!link) throw new Error(`no invitation link in: ${mail!.text}`);
  return { link, mail: mail! };
}

/** A fresh invitation of a new verified invitee to a new org. */
async function invited(role = "admin", options: { verified?: boolean; locale?: string } = {}) {
  const owner = await person("owner");
  const org = await createOrg(owner);
  const invitee = await person("invitee", options);
  const { link, mail } = await invite(owner, org, invitee.user.email, role);
  return { owner, org, invitee, link, mail, ticket: new URL(link).searchParams.get("ticket")! };
}

/** Opens the mailed link in `browser`: the page's request id, and the page it shows. */
async function open(browser: Browser, link: string) {
  const opened = await browser.get(link);
  expect(opened.status).toBe(303);
  const pageUrl = location(opened);
  expect(pageUrl.pathname).toBe("/auth/v1/oauth2/interaction");
  const page = await browser.get(pageUrl.toString());
  return { requestId: pageUrl.searchParams.get("request_id")!, page };
}

const join = (browser: Browser, requestId: string, headers?: Record<string, string>) =>
  browser.post("/oauth2/interaction/consent", { request_id: requestId, decision: "allow" }, headers);

/** The invitee's organizations, through the API. */
async function orgsOf(session: WireSession) {
  const response = await svc.request("GET", "/orgs", { token: session.accessToken });
  expect(response.status).toBe(200);
  return ((await response.json()) as { items: { id: string; role: string }[] }).items;
}

const acceptByApi = (session: WireSession, ticket: string) =>
  svc.request("POST", "/orgs/invitations/accept", { token: session.accessToken, json: { ticket } });

describe("the invitation page: the happy path", () => {
  it("links the mail to the page, which shows the invitation, signs the invitee in and joins them once", async () => {
    const { org, invitee, link, ticket } = await invited("admin");
    expect(link).toMatch(
      /^http:\/\/localhost:8787\/auth\/v1\/oauth2\/invitation\?ticket=orgInvitation%3A[\w-]+$/,
    );

    const browser = new Browser(svc);
    const { requestId, page } = await open(browser, link);
    expect(page.status).toBe(200);
    // The page's strict policy: nothing loads or runs but its own nonce'd style; forms post only here.
    expect(page.headers.get("content-security-policy")).toMatch(/default-src 'none'.*form-action 'self'/);
    const html = await page.text();
    expect(html).toContain(`${org.name} invites ${invitee.user.email} to join as admin.`);
    expect(html).toContain(`value="${invitee.user.email}"`); // the sign-in form, prefilled with the invited address

    const step = await signIn(browser, requestId, invitee.user.email);
    expect(step.status).toBe(200);
    expect(await step.text()).toContain(`Accept as ${invitee.user.email}`);
    // Nothing is spent by opening or signing in: the accept is the person's own post.
    expect(await orgsOf(invitee)).toEqual([]);

    const done = await join(browser, requestId);
    expect(done.status).toBe(200);
    const doneHtml = await done.text();
    expect(doneHtml).toContain(`You joined ${org.name}`);
    expect(doneHtml).toContain('href="http://localhost:3000"');
    expect((await orgsOf(invitee)).map((o) => [o.id, o.role])).toEqual([[org.id, "admin"]]);

    // Threat: the ticket in a URL leaks (history, a forwarded mail): it is single use.
    expect((await new Browser(svc).get(link)).status).toBe(404);
    await expectError(await acceptByApi(invitee, ticket), 401, "invalid-ticket");
  });

  it("keeps only the ticket's hash in the page's request, never the ticket", async () => {
    const { link, ticket } = await invited();
    const { requestId } = await open(new Browser(svc), link);
    const stored = await env.OAUTH2_REQUESTS.get(`oauth2:request:${requestId}`);
    expect(stored).not.toContain(ticket.split(":")[1]);
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(ticket)));
    const hex = [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
    expect(JSON.parse(stored!).invitation).toEqual({ ticketHash: hex });
  });

  it("keeps linking to the app when the inviter names a redirectTo", async () => {
    const owner = await person("owner");
    const org = await createOrg(owner);
    const email = uniqueEmail("invitee");
    const { link } = await invite(owner, org, email, "member", { redirectTo: "http://localhost:3000/join" });
    expect(link).toMatch(/^http:\/\/localhost:3000\/join\?ticket=orgInvitation%3A[\w-]+&type=orgInvitation$/);
  });
});

describe("the invitation page: refusals", () => {
  // Threat: a forwarded or intercepted mail letting another account into the org: bound to the invited address.
  it("refuses another signed-in address and leaves the ticket for its addressee", async () => {
    const { org, invitee, link, ticket } = await invited("member");
    const stranger = await person("stranger");
    const browser = new Browser(svc);
    const { requestId } = await open(browser, link);
    await signIn(browser, requestId, stranger.user.email);
    const refused = await join(browser, requestId);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain(`This invitation is for ${invitee.user.email}.`);
    expect(await orgsOf(stranger)).toEqual([]);
    // Switching to the invited account on the same page then works: the ticket was not spent.
    expect((await browser.post("/oauth2/interaction/switch", { request_id: requestId })).status).toBe(303);
    await signIn(browser, requestId, invitee.user.email);
    expect((await join(browser, requestId)).status).toBe(200);
    expect((await orgsOf(invitee)).map((o) => o.id)).toEqual([org.id]);
    await expectError(await acceptByApi(invitee, ticket), 401, "invalid-ticket");
  });

  // Threat: an account that merely claims the address (never proved the inbox) joining the org.
  it("refuses the invited address while it is unverified, and keeps the ticket", async () => {
    const { org, invitee, link, ticket } = await invited("member", { verified: false });
    const browser = new Browser(svc);
    const { requestId } = await open(browser, link);
    await signIn(browser, requestId, invitee.user.email);
    const refused = await join(browser, requestId);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain("Confirm your email address first");
    await svc.request("PATCH", `/admin/users/${invitee.user.id}`, {
      headers: ADMIN,
      json: { emailVerified: true },
    });
    expect((await acceptByApi(invitee, ticket)).status).toBe(200);
    expect((await orgsOf(invitee)).map((o) => o.id)).toEqual([org.id]);
  });

  // Threat: forced joining or login CSRF from another site: the page's forms are same-origin posts only.
  it("refuses a join posted from another site, and spends nothing", async () => {
    const { invitee, link, ticket } = await invited();
    const browser = new Browser(svc);
    const { requestId } = await open(browser, link);
    await signIn(browser, requestId, invitee.user.email);
    expect((await join(browser, requestId, { origin: "https://evil.example" })).status).toBe(403);
    const signInElsewhere = await browser.post(
      "/oauth2/interaction/sign-in",
      { request_id: requestId, email: invitee.user.email, password: PASSWORD },
      { origin: "https://evil.example" },
    );
    expect(signInElsewhere.status).toBe(403);
    expect(await orgsOf(invitee)).toEqual([]);
    expect((await acceptByApi(invitee, ticket)).status).toBe(200);
  });

  // Threat: a leaked ticket usable forever: seven days, then the page says it is gone.
  it("answers a 4xx page for an expired, an unknown or no ticket", async () => {
    const { link } = await invited();
    for (const bad of ["/oauth2/invitation?ticket=orgInvitation:nope", "/oauth2/invitation"]) {
      const page = await svc.get(bad);
      expect(page.status).toBe(404);
      expect(page.headers.get("content-security-policy")).toBeTruthy();
      expect(await page.text()).toContain("This invitation is unknown, used or expired.");
    }
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 7 * 24 * 3600 * 1000 + 1000);
    expect((await new Browser(svc).get(link)).status).toBe(404);
  });

  it("refuses the join when the invitation was withdrawn after the page was opened", async () => {
    const { owner, org, invitee, link } = await invited();
    const browser = new Browser(svc);
    const { requestId } = await open(browser, link);
    await signIn(browser, requestId, invitee.user.email);
    const pending = await svc.request("GET", `/orgs/${org.id}/invitations`, { token: owner.accessToken });
    const [only] = ((await pending.json()) as { items: { id: string }[] }).items;
    const withdrawn = await svc.request("DELETE", `/orgs/${org.id}/invitations/${only!.id}`, {
      token: owner.accessToken,
    });
    expect(withdrawn.status).toBe(204);
    expect((await join(browser, requestId)).status).toBe(400);
    expect(await orgsOf(invitee)).toEqual([]);
  });
});

describe("the invitation page: languages", () => {
  it("mails a French invitee in French and shows the page in the browser's French", async () => {
    const { org, invitee, link, mail } = await invited("member", { locale: "fr" });
    expect(mail.subject).toContain(org.name);
    expect(mail.text).toContain(invitee.user.email);
    expect(mail.text).not.toContain("Sign in or sign up with this address");
    expect(mail.text).toContain(link);
    const french = { "accept-language": "fr-FR,fr;q=0.9,en;q=0.5" };
    const opened = await svc.request("GET", link.replace(ISSUER, ""), { headers: french });
    expect(opened.status).toBe(303);
    const page = await svc.request("GET", location(opened).toString().replace(ISSUER, ""), {
      headers: french,
    });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('<html lang="fr">');
    expect(html).toContain(`${org.name} invite ${invitee.user.email} à le rejoindre avec le rôle member.`);
  });
});
