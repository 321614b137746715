// The account center's linked providers and organizations (contract §13): linking another provider through the
// API's own flow (for this browser's user, bound to this browser), unlinking one but never the last way to sign in,
// and leaving an organization as the API allows (never its last owner). Each test names the threat or rule it covers.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { auditTypesOf, service, type TestService, uniqueEmail } from "../helpers";
import { Browser } from "../oauth2/page-browser";
import { authorize, location, newClient, requestIdOf } from "../oauth2/support";
import { FAKE_PROVIDERS } from "../providers/support";
import { accountPage, backTo, hiddenValues, later, SECURITY_ON, signedInBrowser } from "./security-support";

const svc = service({ ...SECURITY_ON, ...FAKE_PROVIDERS });
const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };
const UNLINK = "/auth/v1/account/security/providers/unlink";
const LEAVE = "/auth/v1/account/security/organizations/leave";

afterEach(() => {
  vi.useRealTimers();
});

/** The person at the fake provider: a new identity each time unless given. */
const person = (id = String(Math.floor(Math.random() * 1e9)), email = uniqueEmail("at-provider")) => ({
  fake_id: id,
  fake_email: email,
  fake_verified: "true",
});

/** Plays the provider's part for a redirect to it (test/fakes/outbound.js), and opens the callback in `browser`. */
async function atProvider(browser: Browser, toProvider: URL, who: Record<string, string>) {
  for (const [name, value] of Object.entries(who)) toProvider.searchParams.set(name, value);
  const callback = location(await env.OUTBOUND!.fetch(toProvider.toString(), { redirect: "manual" }));
  return browser.get(callback.toString());
}

/** Links `provider` from the account page; the notice the page comes back with. */
async function linkOnPage(browser: Browser, provider: string, who = person()) {
  const toProvider = await browser.post("/account/security/providers/link", { provider });
  expect(toProvider.status).toBe(303);
  const landing = location(await atProvider(browser, location(toProvider), who));
  expect(landing.pathname).toBe("/auth/v1/account/security/providers/linked");
  return backTo(await browser.get(landing.toString()), "providers");
}

/** A user made by a provider sign-in on the OAuth2 page (no password at all), signed in to the pages. */
async function signedInByProvider(svc: TestService) {
  const browser = new Browser(svc);
  const requestId = await requestIdOf(await authorize(svc, await newClient(svc)));
  const start = location(
    await browser.post("/oauth2/interaction/provider", { request_id: requestId, provider: "github" }),
  );
  const back = location(await atProvider(browser, location(await browser.get(start.toString())), person()));
  await browser.get(back.toString());
  expect(browser.signedIn).toBe(true);
  return browser;
}

describe("linked providers on the page", { timeout: 30_000 }, () => {
  it("rule: another provider is linked through the API's flow for this browser's user, then unlinked", async () => {
    const { browser, api } = await signedInBrowser(svc, "link");
    const page = await browser.get("/account");
    // The link's post ends at the provider: its origin is in form-action (browsers hold the redirect chain to it).
    expect(page.headers.get("content-security-policy")).toMatch(
      /form-action 'self'[^;]* https:\/\/github\.fake/,
    );
    expect(await page.text()).toContain('action="/auth/v1/account/security/providers/link"');
    expect(await linkOnPage(browser, "github")).toBe("security-provider-linked");
    const linked = await accountPage(browser);
    expect(linked).toContain("GitHub");
    const [id] = hiddenValues(linked, UNLINK);
    // The account keeps its password: the identity may go.
    expect(backTo(await browser.post("/account/security/providers/unlink", { id: id! }), "providers")).toBe(
      "security-provider-unlinked",
    );
    expect(hiddenValues(await accountPage(browser), UNLINK)).toHaveLength(0);
    const audit = await auditTypesOf(api.user.id);
    expect(audit).toContain("provider.linked");
    expect(audit).toContain("provider.unlinked");
  });

  it("rule: unlinking refuses the last way to sign in; with a second identity the first may go", async () => {
    const browser = await signedInByProvider(svc);
    const [github] = hiddenValues(await accountPage(browser), UNLINK);
    expect(
      backTo(await browser.post("/account/security/providers/unlink", { id: github! }), "providers"),
    ).toBe("security-last-way");
    expect(hiddenValues(await accountPage(browser), UNLINK)).toEqual([github]);
    expect(await linkOnPage(browser, "google")).toBe("security-provider-linked");
    expect(
      backTo(await browser.post("/account/security/providers/unlink", { id: github! }), "providers"),
    ).toBe("security-provider-unlinked");
    const [google] = hiddenValues(await accountPage(browser), UNLINK);
    expect(
      backTo(await browser.post("/account/security/providers/unlink", { id: google! }), "providers"),
    ).toBe("security-last-way");
  });

  it("threat: an identity already linked to someone else is not taken over; the page says so", async () => {
    const owner = await signedInBrowser(svc, "link-owner");
    const who = person();
    expect(await linkOnPage(owner.browser, "github", who)).toBe("security-provider-linked");
    const other = await signedInBrowser(svc, "link-other");
    expect(await linkOnPage(other.browser, "github", who)).toBe("security-provider-taken");
    expect(hiddenValues(await accountPage(other.browser), UNLINK)).toHaveLength(0);
  });

  it("threat: a stale sign-in links and unlinks nothing; another user's identity id unlinks nothing", async () => {
    const victim = await signedInBrowser(svc, "link-victim");
    await linkOnPage(victim.browser, "github");
    const [id] = hiddenValues(await accountPage(victim.browser), UNLINK);
    const attacker = await signedInBrowser(svc, "link-attacker");
    expect(
      backTo(await attacker.browser.post("/account/security/providers/unlink", { id: id! }), "providers"),
    ).toBe("security-gone");
    later(10);
    expect((await victim.browser.post("/account/security/providers/unlink", { id: id! })).status).toBe(401);
    expect(
      (await victim.browser.post("/account/security/providers/link", { provider: "google" })).status,
    ).toBe(401);
    vi.useRealTimers();
    expect(hiddenValues(await accountPage(victim.browser), UNLINK)).toEqual([id]);
  });

  it("threat: a way back that the service did not sign shows no notice", async () => {
    const { browser } = await signedInBrowser(svc, "link-forged");
    const forged = await browser.get("/account/security/providers/linked?own_mac=forged");
    expect(forged.status).toBe(303);
    expect(location(forged).searchParams.get("notice")).toBeNull();
  });
});

describe("organizations on the page", { timeout: 30_000 }, () => {
  async function createOrg(accessToken: string) {
    const response = await svc.request("POST", "/orgs", {
      token: accessToken,
      json: { name: `Acme ${crypto.randomUUID().slice(0, 6)}` },
    });
    expect(response.status).toBe(201);
    return (await response.json()) as { id: string; name: string };
  }

  it("rule: memberships are listed with the role; a member leaves; the last owner can't", async () => {
    const owner = await signedInBrowser(svc, "org-owner");
    const org = await createOrg(owner.api.accessToken);
    const member = await signedInBrowser(svc, "org-member");
    const added = await svc.request("POST", `/admin/orgs/${org.id}/members`, {
      headers: ADMIN,
      json: { userId: member.api.user.id, role: "member" },
    });
    expect(added.status).toBe(201);

    const ownersPage = await accountPage(owner.browser);
    expect(ownersPage).toContain(org.name);
    expect(ownersPage).toContain("Owner");
    expect(
      backTo(
        await owner.browser.post("/account/security/organizations/leave", { id: org.id }),
        "organizations",
      ),
    ).toBe("security-last-owner");

    expect(hiddenValues(await accountPage(member.browser), LEAVE)).toEqual([org.id]);
    expect(
      backTo(
        await member.browser.post("/account/security/organizations/leave", { id: org.id }),
        "organizations",
      ),
    ).toBe("security-org-left");
    expect(await accountPage(member.browser)).not.toContain(org.name);
    expect(await accountPage(owner.browser)).toContain(org.name);
  });

  it("threat: leaving an organization one is no member of does nothing and tells nothing of it", async () => {
    const owner = await signedInBrowser(svc, "org-private");
    const org = await createOrg(owner.api.accessToken);
    const outsider = await signedInBrowser(svc, "org-outsider");
    expect(
      backTo(
        await outsider.browser.post("/account/security/organizations/leave", { id: org.id }),
        "organizations",
      ),
    ).toBe("security-gone");
    expect(
      backTo(
        await outsider.browser.post("/account/security/organizations/leave", { id: crypto.randomUUID() }),
        "organizations",
      ),
    ).toBe("security-gone");
  });
});
