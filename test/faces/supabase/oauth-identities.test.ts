// The Supabase face's identities (contract supabase.md §2): auth-js's getUserIdentities, linkIdentity and
// unlinkIdentity over the core's linked providers, with the real supabase-js and the fake GitHub of
// test/fakes/outbound.js.
// Threats: linking without a signed-in user; linking to another user (the flow is the token's user's, and bound to the
// browser that opened it: a victim completing an attacker's link flow links nothing); an identity of another account;
// unlinking someone else's identity or the last way in.

import { env } from "cloudflare:test";
import { createClient } from "@supabase/supabase-js";
import { describe, expect, it } from "vitest";
import { PASSWORD, uniqueEmail } from "../../helpers";
import {
  APP,
  answerQuestion,
  cookiesOf,
  FAKE_PROVIDERS,
  type FakeUser,
  location,
  openIn,
} from "../../providers/support";
import { FACE, fetchThrough, PUBLISHABLE_KEY, supabaseClient, supabaseService } from "./support";

const svc = supabaseService(FAKE_PROVIDERS);
const uniqueId = () => String(Math.floor(Math.random() * 1e12));

/** A signed-in supabase-js client (email and password), as an app holds it. */
async function signedInClient() {
  const client = supabaseClient(svc);
  const email = uniqueEmail();
  const { error } = await client.auth.signUp({ email, password: PASSWORD });
  expect(error).toBeNull();
  await client.auth.signInWithPassword({ email, password: PASSWORD });
  return { client, email };
}

/**
 * The browser's way from the link (or sign-in) URL to the app: a link's question (the person says yes), the provider,
 * the core's callback, the face's callback.
 */
async function follow(url: string, who: FakeUser, cookie = "") {
  const start = await openIn(svc, url, cookie);
  const browser = cookie || cookiesOf(start);
  const atProvider = location(start.status === 200 ? await answerQuestion(svc, start, browser) : start);
  for (const [name, value] of Object.entries(who)) atProvider.searchParams.set(name, value);
  const callback = location(await env.OUTBOUND!.fetch(atProvider.toString(), { redirect: "manual" }));
  const landing = location(await openIn(svc, callback, browser));
  return { landing, browser, back: location(await openIn(svc, landing, browser)) };
}

async function linkUrl(client: Pick<ReturnType<typeof supabaseClient>, "auth">) {
  const { data, error } = await client.auth.linkIdentity({
    provider: "github",
    options: { redirectTo: APP, skipBrowserRedirect: true },
  });
  expect(error).toBeNull();
  return data.url!;
}

describe("getUserIdentities, linkIdentity, unlinkIdentity", () => {
  it("links a provider to the signed-in user, lists it in GoTrue's shape, and unlinks it", async () => {
    const { client } = await signedInClient();
    const before = await client.auth.getUserIdentities();
    expect(before.data?.identities.map((identity) => identity.provider)).toEqual(["email"]);
    const url = await linkUrl(client);
    expect(url).toContain(`${FACE}/auth/v1/authorize?`);
    const githubId = uniqueId();
    const { back } = await follow(url, { fake_id: githubId, fake_email: `gh${githubId}@example.com` });
    expect(`${back.origin}${back.pathname}`).toBe(APP);
    // GoTrue's link ends signed in as the user, as its sign-in does.
    const fragment = new URLSearchParams(back.hash.slice(1));
    const { data: linkedUser } = await client.auth.getUser(fragment.get("access_token")!);
    const { data: mine } = await client.auth.getUser();
    expect(linkedUser.user?.id).toBe(mine.user?.id);
    const { data } = await client.auth.getUserIdentities();
    const github = data?.identities.find((identity) => identity.provider === "github");
    expect(github).toMatchObject({
      id: githubId,
      identity_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      user_id: mine.user?.id,
      identity_data: { sub: githubId },
      provider: "github",
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(mine.user?.app_metadata.providers).toEqual(["email", "github"]);
    expect((await client.auth.unlinkIdentity(github!)).error).toBeNull();
    const after = await client.auth.getUserIdentities();
    expect(after.data?.identities.map((identity) => identity.provider)).toEqual(["email"]);
  });

  it("links under PKCE too: the link ends with ?code=, which exchangeCodeForSession opens for the same user", async () => {
    const client = createClient(FACE, PUBLISHABLE_KEY, {
      global: { fetch: fetchThrough(svc) },
      auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false, flowType: "pkce" },
    });
    const email = uniqueEmail();
    await client.auth.signUp({ email, password: PASSWORD });
    const { data: signedIn } = await client.auth.signInWithPassword({ email, password: PASSWORD });
    const { back } = await follow(await linkUrl(client), { fake_id: uniqueId() });
    const { data, error } = await client.auth.exchangeCodeForSession(back.searchParams.get("code")!);
    expect(error).toBeNull();
    expect(data.session?.user.id).toBe(signedIn.user?.id);
    const { data: listed } = await client.auth.getUserIdentities();
    expect(listed?.identities.map((identity) => identity.provider)).toEqual(["email", "github"]);
  });

  // Threat: linking without a signed-in user, or with a token that is not one.
  it("refuses linkIdentity without a session", async () => {
    const answer = await svc.request("GET", `${FACE}/auth/v1/user/identities/authorize?provider=github`, {
      headers: { apikey: PUBLISHABLE_KEY },
    });
    expect(answer.status).toBe(401);
    expect(await answer.json()).toMatchObject({ error_code: "no_authorization" });
    const forged = await svc.request(
      "GET",
      `${FACE}/auth/v1/authorize?provider=github&link_ticket=${"A".repeat(80)}`,
    );
    expect(forged.status).toBe(400);
    expect(await forged.json()).toMatchObject({ error_code: "bad_oauth_state" });
  });

  // Threat: linking to another user. An attacker starts a link flow for their own account and gets a victim's browser
  // to finish it at the provider (the victim's GitHub would then sign in to the attacker's account): the flow is bound
  // to the attacker's browser, so the victim's callback finds no state and links nothing.
  it("does not link when another browser finishes the flow", async () => {
    const { client: attacker } = await signedInClient();
    const url = await linkUrl(attacker);
    const attackerBrowser = await openIn(svc, url);
    const atProvider = location(await answerQuestion(svc, attackerBrowser, cookiesOf(attackerBrowser)));
    atProvider.searchParams.set("fake_id", uniqueId());
    const callback = location(await env.OUTBOUND!.fetch(atProvider.toString(), { redirect: "manual" }));
    const victimBrowser = cookiesOf(await openIn(svc, `${FACE}/auth/v1/authorize?provider=github`));
    const landed = location(await openIn(svc, callback, victimBrowser));
    expect(landed.searchParams.get("error")).toBe("invalid-state");
    const { data } = await attacker.auth.getUserIdentities();
    expect(data?.identities.map((identity) => identity.provider)).toEqual(["email"]);
  });

  // Threat: taking over another account's provider identity by linking it.
  it("refuses an identity linked to another user with identity_already_exists", async () => {
    const githubId = uniqueId();
    const { client: first } = await signedInClient();
    await follow(await linkUrl(first), { fake_id: githubId });
    const { client: second } = await signedInClient();
    const { back } = await follow(await linkUrl(second), { fake_id: githubId });
    expect(new URLSearchParams(back.hash.slice(1)).get("error_code")).toBe("identity_already_exists");
  });

  // Threats: unlinking someone else's identity, and the last way in.
  it("unlinks neither another user's identity nor the last way in", async () => {
    const { client: owner } = await signedInClient();
    await follow(await linkUrl(owner), { fake_id: uniqueId() });
    const github = (await owner.auth.getUserIdentities()).data!.identities.find(
      (i) => i.provider === "github",
    )!;
    const { client: other } = await signedInClient();
    const { error } = await other.auth.unlinkIdentity(github);
    expect(error?.code).toBe("identity_not_found");
    expect(error?.status).toBe(422);
    // A user made by GitHub alone, without a password: the identity is the only way in.
    const only = supabaseClient(svc);
    const { data } = await only.auth.signInWithOAuth({
      provider: "github",
      options: { redirectTo: APP, skipBrowserRedirect: true },
    });
    const { back } = await follow(data.url!, { fake_id: uniqueId() });
    const fragment = new URLSearchParams(back.hash.slice(1));
    await only.auth.setSession({
      access_token: fragment.get("access_token")!,
      refresh_token: fragment.get("refresh_token")!,
    });
    const identities = (await only.auth.getUserIdentities()).data!.identities;
    expect(identities.map((identity) => identity.provider)).toEqual(["github"]);
    const last = await only.auth.unlinkIdentity(identities[0]!);
    expect(last.error?.code).toBe("single_identity_not_deletable");
    const malformed = await only.auth.unlinkIdentity({ ...identities[0]!, identity_id: "not-a-uuid" });
    expect(malformed.error?.status).toBe(404);
  });
});
