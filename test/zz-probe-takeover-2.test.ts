// Probe (takeover): connect CSRF by the START url. The attacker hands their own `connect` URL (Nhost) or link URL
// (Supabase face linkIdentity) to a victim; the victim's browser starts, binds and finishes the flow.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { PASSWORD, sessionFromRefresh, signUp, uniqueEmail } from "./helpers";
import { supabaseClient, supabaseService } from "./faces/supabase/support";
import { FAKE_PROVIDERS } from "./providers/support";
import { APP, cookiesOf, location, openIn, signInWith, withProviders } from "./providers/support";

const svc = withProviders();
const uniqueId = () => String(Math.floor(Math.random() * 1e12));

describe("connect CSRF through the start URL", () => {
  it("links the victim's GitHub to the attacker and hands the attacker the victim's GitHub token", async () => {
    const attacker = await signUp(svc, uniqueEmail("attacker"));
    // The URL the attacker makes with their own access token and gets the victim's browser to open.
    const evilUrl = `http://localhost:8787/auth/v1/signin/provider/github?${new URLSearchParams({
      redirectTo: APP,
      connect: attacker.accessToken,
    })}`;
    // The victim's browser (no cookie yet): the service binds it, the victim is signed in at GitHub, which consents.
    const victimGithub = uniqueId();
    const start = await openIn(svc, evilUrl);
    const victimBrowser = cookiesOf(start);
    const atProvider = location(start);
    atProvider.searchParams.set("fake_id", victimGithub);
    atProvider.searchParams.set("fake_email", uniqueEmail("victim"));
    const callback = location(await env.OUTBOUND!.fetch(atProvider.toString(), { redirect: "manual" }));
    const landed = location(await openIn(svc, callback, victimBrowser));
    console.log("victim lands at:", landed.toString());
    // The attacker collects the victim's GitHub tokens with their own session.
    const tokens = (await (await svc.get("/signin/provider/github/callback/tokens", attacker.accessToken)).json()) as {
      accessToken: string;
    };
    console.log("attacker reads the victim's provider token:", JSON.stringify(tokens));
    // The victim's later "Sign in with GitHub" lands in the attacker's account.
    const later = await signInWith(svc, "github", {}, { fake_id: victimGithub });
    const session = await sessionFromRefresh(svc, later.back.searchParams.get("refreshToken")!);
    console.log("victim's GitHub sign-in lands in attacker's account:", session.user.id === attacker.user.id);
    expect(tokens.accessToken).toBe("");
  });

  it("Supabase face: the attacker's linkIdentity URL, opened by the victim, links the victim's GitHub to the attacker", async () => {
    const face = supabaseService(FAKE_PROVIDERS);
    const attacker = supabaseClient(face);
    const email = uniqueEmail("attacker");
    await attacker.auth.signUp({ email, password: PASSWORD });
    const { data: me } = await attacker.auth.signInWithPassword({ email, password: PASSWORD });
    const { data } = await attacker.auth.linkIdentity({ provider: "github", options: { redirectTo: APP, skipBrowserRedirect: true } });
    const victimGithub = uniqueId();
    const start = await openIn(face, data.url!);
    const victimBrowser = cookiesOf(start);
    const atProvider = location(start);
    atProvider.searchParams.set("fake_id", victimGithub);
    const callback = location(await env.OUTBOUND!.fetch(atProvider.toString(), { redirect: "manual" }));
    const landing = location(await openIn(face, callback, victimBrowser));
    const back = location(await openIn(face, landing, victimBrowser));
    const fragment = new URLSearchParams(back.hash.slice(1));
    const { data: whoVictimIs } = await attacker.auth.getUser(fragment.get("access_token")!);
    console.log("victim's browser is now signed in as the attacker:", whoVictimIs.user?.id === me.user?.id, "provider_token in the victim's fragment:", fragment.get("provider_token"));
    const { data: ids } = await attacker.auth.getUserIdentities();
    console.log("attacker's identities:", JSON.stringify(ids?.identities.map((i) => [i.provider, i.id])), "victim github id:", victimGithub);
    expect(ids?.identities.some((i) => i.id === victimGithub)).toBe(false);
  });
});
