// The question asked before a provider is linked from a URL (src/providers/ask-first.ts): the Nhost API's
// `connect=<access token>`, the Supabase face's `linkIdentity` URL and the token vault's start URL.
// Threat: link CSRF. An attacker makes such a URL for their own account and gets a victim to open it; the provider
// signs the victim in without a question, so without this page the victim's provider identity became a way into the
// attacker's account and the victim's provider tokens went to the attacker. Each test below names the step it covers.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { CATALOGUES, LANGUAGES } from "../../src/browser/text";
import { FACE, supabaseClient, supabaseService } from "../faces/supabase/support";
import { auditTypesOf, service, signUp, uniqueEmail } from "../helpers";
import { allInShards } from "../support/shards";
import { googleAccount, startConnection, VAULT_ON } from "../vault/support";
import {
  APP,
  answerQuestion,
  confirmEmail,
  cookiesOf,
  FAKE_PROVIDERS,
  location,
  openIn,
  questionOf,
  signInWith,
  withProviders,
} from "./support";

const svc = withProviders();
const uniqueId = () => String(Math.floor(Math.random() * 1e12));
const connectUrl = (token: string) =>
  `/signin/provider/github?${new URLSearchParams({ redirectTo: APP, connect: token })}`;
const EVIL = "https://evil.example";
/** As `html` escapes a sentence in a page. */
const escaped = (text: string) =>
  text.replaceAll("&", "&amp;").replaceAll("'", "&#39;").replaceAll('"', "&quot;");

afterEach(() => {
  vi.useRealTimers();
});

describe("connect=<access token>: asked first", () => {
  it("a victim opening an attacker's connect URL is asked, with the attacker's account named, and nothing reaches the provider", async () => {
    const attacker = await signUp(svc, uniqueEmail("attacker"));
    await confirmEmail(attacker.user.id);
    const opened = await svc.get(connectUrl(attacker.accessToken));
    expect(opened.status).toBe(200);
    expect(opened.headers.get("location")).toBeNull();
    expect(opened.headers.get("cache-control")).toBe("no-store");
    // No site may frame the page (a click on "Continue" stolen through an invisible frame).
    expect(opened.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    const { body } = await questionOf(opened);
    expect(body).toContain("Link your GitHub account?");
    expect(body).toContain(attacker.user.email!);
    // The provider's URL (its state) is sealed in the form: the page shows nothing the attacker could use.
    expect(body).not.toContain("github.fake");
    expect(body).not.toContain("state=");
  });

  it("names an account only by a confirmed address: an attacker's account on the victim's unconfirmed address is not named by it", async () => {
    // Threat: the page naming the victim's own address. Anyone can put an address on an account without confirming
    // it (a sign-up where verification is off, a guest deanonymized); a display name is its owner's choice too.
    const victimAddress = uniqueEmail("victim");
    const attacker = await signUp(svc, victimAddress, { displayName: "Victim Person" });
    const { body } = await questionOf(await svc.get(connectUrl(attacker.accessToken)));
    expect(body).not.toContain(victimAddress);
    expect(body).not.toContain("Victim Person");
    expect(body).toContain("an account with no confirmed email address or phone number");
  });

  it("refuses the form posted from another site, without Origin, by another browser, or garbled; nothing is linked", async () => {
    const attacker = await signUp(svc);
    const opened = await svc.get(connectUrl(attacker.accessToken));
    const cookie = cookiesOf(opened);
    const page = opened.clone();
    const { action, continuation } = await questionOf(opened);
    const post = (headers: Record<string, string>, value = continuation) =>
      svc.request("POST", action, {
        headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
        body: new URLSearchParams({ continuation: value }).toString(),
      });
    // Login CSRF's form: another site posts it in the victim's browser (the cookie would not even go along).
    for (const refused of [await post({ cookie, origin: EVIL }), await post({ cookie })]) {
      expect(refused.status).toBe(403);
      expect(refused.headers.get("location")).toBeNull();
      expect(await refused.text()).toContain("This form was sent from another site.");
    }
    // The form copied into another browser: its binding cookie is not the one the flow is bound to.
    const otherBrowser = cookiesOf(await svc.get("/signin/provider/github"));
    const origin = new URL(action).origin;
    for (const refused of [
      await post({ origin }),
      await post({ origin, cookie: otherBrowser }),
      await post({ origin, cookie }, "v2.00ff"),
      await post({ origin, cookie }, "x".repeat(20_000)),
    ]) {
      expect(refused.status).toBe(400);
      expect(refused.headers.get("location")).toBeNull();
      expect(await refused.text()).toContain("This request has expired or was opened in another browser.");
    }
    expect(await auditTypesOf(attacker.user.id)).not.toContain("provider.linked");
    // The question still stands for the browser it was asked in.
    expect(location(await answerQuestion(svc, page, cookie)).host).toBe("github.fake");
  });

  it("expires with the flow's request, ten minutes after it was asked", async () => {
    const user = await signUp(svc);
    const opened = await svc.get(connectUrl(user.accessToken));
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 10 * 60 * 1000 + 1000);
    const late = await answerQuestion(svc, opened, cookiesOf(opened));
    expect(late.status).toBe(400);
  });

  it("links once the person says yes, and speaks the browser's language, not the account's", async () => {
    const user = await signUp(svc, uniqueEmail(), { locale: "ja" });
    const id = uniqueId();
    const linked = await signInWith(svc, "github", { connect: user.accessToken }, { fake_id: id });
    expect(linked.back.searchParams.get("error")).toBeNull();
    expect(await allInShards("SELECT user_id FROM user_providers WHERE provider_user_id = ?", id)).toEqual([
      { user_id: user.user.id },
    ]);
    // The account's own locale (Japanese here) is an attacker's choice when the account is the attacker's: the browser's
    // languages count, each asked for in turn.
    for (const language of LANGUAGES) {
      const asked = await svc.request("GET", connectUrl(user.accessToken), {
        headers: { "accept-language": `${language};q=0.9` },
      });
      const { body } = await questionOf(asked);
      const words = CATALOGUES[language].pages;
      expect(body, language).toContain(`lang="${language}"`);
      expect(body, language).toContain(escaped(words.linkTitle("GitHub")));
      expect(body, language).toContain(escaped(words.askWarning("GitHub")));
    }
  });
});

describe("a crowd of questions", () => {
  it("200 connect starts in flight are each asked, and 200 answers each go on to the provider with their own state", async () => {
    const user = await signUp(svc);
    const pages = await Promise.all(Array.from({ length: 200 }, () => svc.get(connectUrl(user.accessToken))));
    expect(pages.map((page) => page.status)).toEqual(pages.map(() => 200));
    const answers = await Promise.all(pages.map((page) => answerQuestion(svc, page, cookiesOf(page))));
    const states = answers.map((answer) => location(answer).searchParams.get("state"));
    expect(new Set(states).size).toBe(200);
  });
});

describe("the Supabase face's linkIdentity URL: asked first", () => {
  const face = supabaseService(FAKE_PROVIDERS);

  it("asks the browser that opens it, names the ticket's account, and refuses a cross-site answer", async () => {
    const client = supabaseClient(face);
    const email = uniqueEmail("face-attacker");
    const { data: signedUp } = await client.auth.signUp({ email, password: "correct horse battery" });
    await confirmEmail(signedUp.user!.id);
    const { data } = await client.auth.linkIdentity({
      provider: "github",
      options: { redirectTo: APP, skipBrowserRedirect: true },
    });
    const opened = await openIn(face, data.url!);
    const cookie = cookiesOf(opened);
    const { body, action, continuation } = await questionOf(opened.clone());
    expect(body).toContain(email);
    expect(action).toBe(`${FACE}/auth/v1/authorize/link`);
    const crossSite = await face.request("POST", action, {
      headers: { cookie, origin: EVIL, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ continuation }).toString(),
    });
    expect(crossSite.status).toBe(403);
    expect(location(await answerQuestion(face, opened, cookie)).host).toBe("github.fake");
  });
});

describe("the token vault's start URL: asked first", () => {
  const vault = service(VAULT_ON);

  it("the provider gets a state of its own: the start URL's, which its maker holds, completes nothing past the question", async () => {
    // Threat: the start URL's maker opens it in a victim's browser (a popup: the open claims the request for that
    // browser and sets its cookie), then sends that window to a provider URL built by hand with the start URL's
    // state. The provider asks nothing; the callback, with the victim's cookie, would have connected the victim's
    // account to the maker's, the question never answered.
    const attacker = await signUp(vault);
    const asked = await vault.post("/user/connections/google", { redirectTo: APP }, attacker.accessToken);
    const { url } = (await asked.json()) as { url: string };
    const startState = new URL(url).searchParams.get("state")!;
    const opened = await openIn(vault, url);
    const victimCookie = cookiesOf(opened);
    const answered = location(await answerQuestion(vault, opened, victimCookie));
    expect(answered.searchParams.get("state")).not.toBe(startState);
    // The hand-built provider URL: everything the real one has but its state, which is the start URL's.
    const handBuilt = new URL(answered);
    handBuilt.searchParams.set("state", startState);
    for (const [name, value] of Object.entries(googleAccount())) handBuilt.searchParams.set(name, value);
    const callback = location(await env.OUTBOUND!.fetch(handBuilt.toString(), { redirect: "manual" }));
    const landed = location(await openIn(vault, callback, victimCookie));
    expect(landed.searchParams.get("error")).toBe("invalid-state");
    const list = await vault.get("/user/connections", attacker.accessToken);
    expect(((await list.json()) as { items: unknown[] }).items).toEqual([]);
  });

  it("a victim opening an attacker's start URL is asked to connect to the attacker's account", async () => {
    const attacker = await signUp(vault);
    await confirmEmail(attacker.user.id);
    const asked = await vault.post("/user/connections/google", { redirectTo: APP }, attacker.accessToken);
    const { url } = (await asked.json()) as { url: string };
    const opened = await openIn(vault, url);
    const { body, action } = await questionOf(opened);
    expect(body).toContain("Connect your Google account?");
    expect(body).toContain(attacker.user.email!);
    expect(body).not.toContain("oidc.fake");
    const crossSite = await vault.request("POST", action, {
      headers: {
        cookie: cookiesOf(opened),
        origin: EVIL,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: "continuation=x",
    });
    expect(crossSite.status).toBe(403);
    // Said yes to, the same flow goes on to Google (test/vault/ follows it to the end).
    const { atProvider } = await startConnection(vault, await signUp(vault));
    expect(atProvider.host).toBe("oidc.fake");
  });
});
