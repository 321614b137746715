// The Supabase face's provider sign-in (contract supabase.md §2): auth-js's signInWithOAuth, in the implicit and the
// PKCE flow, and exchangeCodeForSession, with the real supabase-js and the fake GitHub of test/fakes/outbound.js. The
// browser is played by hand: the face's /authorize → the provider → the core's callback (the provider's redirect URI
// stays the Nhost one) → the face's /callback → the app's redirect_to.
// Threats: a redirect_to off the allow-list, a replayed code, a wrong verifier, a forged or reused state, login CSRF
// (an attacker's finished flow opened in a victim's browser).

import { env } from "cloudflare:test";
import { createClient } from "@supabase/supabase-js";
import { base64url } from "jose";
import { describe, expect, it } from "vitest";
import { decodeJwt, follow, mailbox, uniqueEmail, verifyPath } from "../../helpers";
import {
  APP,
  CALLBACK,
  cookiesOf,
  FAKE_PROVIDERS,
  type FakeUser,
  location,
  openIn,
} from "../../providers/support";
import { eachStatementFailingOnce } from "../../support/faults";
import { FACE, fetchThrough, PUBLISHABLE_KEY, supabaseClient, supabaseService } from "./support";

const svc = supabaseService({ ...FAKE_PROVIDERS, AUTH_EMAIL_PASSWORDLESS_ENABLED: "true" });
const uniqueId = () => String(Math.floor(Math.random() * 1e12));
const person = (over: FakeUser = {}): FakeUser => {
  const id = uniqueId();
  return { fake_id: id, fake_email: `gh${id}@example.com`, ...over };
};

/** A supabase-js client with the PKCE flow: the verifier kept in its own (memory) storage, as in a browser's. */
function pkceClient() {
  return createClient(FACE, PUBLISHABLE_KEY, {
    global: { fetch: fetchThrough(svc) },
    auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false, flowType: "pkce" },
  });
}

/** One browser from the face's URL to the face's /callback: where the core sends it, and the browser's cookies. */
async function toFaceCallback(url: string, who: FakeUser, cookie = "") {
  const start = await openIn(svc, url, cookie);
  const atProvider = location(start);
  const browser = cookie || cookiesOf(start);
  for (const [name, value] of Object.entries(who)) atProvider.searchParams.set(name, value);
  const callback = location(await env.OUTBOUND!.fetch(atProvider.toString(), { redirect: "manual" }));
  const landing = location(await openIn(svc, callback, browser));
  return { atProvider, callback, landing, browser };
}

const fragmentOf = (url: URL) => Object.fromEntries(new URLSearchParams(url.hash.slice(1)));

describe("signInWithOAuth, implicit flow", () => {
  it("goes to the provider with the Nhost callback as redirect URI and lands on redirect_to with GoTrue's session in the fragment", async () => {
    const client = supabaseClient(svc);
    const { data, error } = await client.auth.signInWithOAuth({
      provider: "github",
      options: { redirectTo: APP, skipBrowserRedirect: true, scopes: "repo" },
    });
    expect(error).toBeNull();
    expect(data.url).toContain(`${FACE}/auth/v1/authorize?provider=github`);
    const who = person();
    const { atProvider, landing, browser } = await toFaceCallback(data.url!, who);
    expect(atProvider.searchParams.get("redirect_uri")).toBe(CALLBACK("github"));
    // GoTrue's `scopes` come on top of the provider's own.
    expect(atProvider.searchParams.get("scope")).toBe("read:user user:email repo");
    expect(`${landing.origin}${landing.pathname}`).toBe(`${FACE}/auth/v1/callback`);
    const back = location(await openIn(svc, landing, browser));
    expect(`${back.origin}${back.pathname}`).toBe(APP);
    const fragment = fragmentOf(back);
    expect(fragment).toMatchObject({ token_type: "bearer", provider_token: expect.any(String) });
    expect(Number(fragment.expires_in)).toBeGreaterThan(0);
    expect(Number(fragment.expires_at)).toBeGreaterThan(Date.now() / 1000);
    const claims = decodeJwt(fragment.access_token!).payload;
    expect(claims.amr).toEqual([{ method: "oauth", timestamp: expect.any(Number) }]);
    // The tokens are a session of the face: getUser and refreshSession take them.
    const { data: user } = await client.auth.getUser(fragment.access_token);
    expect(user.user?.email).toBe(who.fake_email);
    expect(user.user?.identities?.map((identity) => identity.provider)).toEqual(["email", "github"]);
    const refreshed = await client.auth.refreshSession({ refresh_token: fragment.refresh_token! });
    expect(refreshed.error).toBeNull();
  });

  // Threat: an open redirect through redirect_to. GoTrue falls back to SITE_URL; the face to AUTH_CLIENT_URL.
  it("sends a redirect_to off the allow-list to AUTH_CLIENT_URL instead", async () => {
    const url = `${FACE}/auth/v1/authorize?provider=github&redirect_to=${encodeURIComponent("https://evil.example.com/x")}`;
    const { landing, browser } = await toFaceCallback(url, person());
    const back = location(await openIn(svc, landing, browser));
    expect(back.origin).not.toBe("https://evil.example.com");
    expect(fragmentOf(back).access_token).toBeTruthy();
    // A /callback URL typed with another target is checked again.
    landing.searchParams.set("redirect_to", "https://evil.example.com/x");
    expect(location(await openIn(svc, landing, browser)).origin).not.toBe("https://evil.example.com");
  });

  // Threat: login CSRF. An attacker finishes a flow of their own and sends the victim the last link: the victim's
  // browser has another binding (or none), so the code's verifier does not match and nothing signs in.
  it("does not sign a victim's browser in with an attacker's finished flow, nor replay it", async () => {
    const attacker = await toFaceCallback(
      `${FACE}/auth/v1/authorize?provider=github&redirect_to=${encodeURIComponent(APP)}`,
      person(),
    );
    const victimStart = await openIn(svc, `${FACE}/auth/v1/authorize?provider=github`);
    const victim = cookiesOf(victimStart);
    for (const cookie of [victim, ""]) {
      const back = location(await openIn(svc, attacker.landing, cookie));
      expect(fragmentOf(back)).toMatchObject({ error: "invalid_request", error_code: "bad_oauth_state" });
      expect(back.searchParams.get("error_code")).toBe("bad_oauth_state");
    }
    // The code was taken by the first try: even the attacker's own browser cannot use it again (single use).
    const again = location(await openIn(svc, attacker.landing, attacker.browser));
    expect(fragmentOf(again).error_code).toBe("bad_oauth_state");
  });

  // Threat: a forged or reused state at the provider's redirect back (the core's state, bound to the browser).
  it("ends a forged or reused state at redirect_to with GoTrue's error", async () => {
    const { callback, browser, landing } = await toFaceCallback(
      `${FACE}/auth/v1/authorize?provider=github&redirect_to=${encodeURIComponent(APP)}`,
      person(),
    );
    // The same callback again: its state was taken. The core has no target for an unknown state but its default.
    const reused = location(await openIn(svc, callback, browser));
    expect(reused.searchParams.get("error")).toBe("invalid-state");
    const forged = new URL(callback);
    forged.searchParams.set("state", "forged-state-forged-state-forged-state-forged");
    expect(location(await openIn(svc, forged, browser)).searchParams.get("error")).toBe("invalid-state");
    // The first pass had finished: its code still signs in once, in its browser (and leaves no code behind).
    expect(fragmentOf(location(await openIn(svc, landing, browser))).access_token).toBeTruthy();
  });

  it("brings the provider's refusal back to redirect_to as GoTrue does (query and fragment)", async () => {
    const { landing, browser } = await toFaceCallback(
      `${FACE}/auth/v1/authorize?provider=github&redirect_to=${encodeURIComponent(APP)}`,
      person({ fake_deny: "1" }),
    );
    const back = location(await openIn(svc, landing, browser));
    expect(`${back.origin}${back.pathname}`).toBe(APP);
    expect(back.searchParams.get("error_code")).toBe("bad_oauth_callback");
    expect(fragmentOf(back)).toMatchObject({ error: "invalid_request", error_code: "bad_oauth_callback" });
  });

  it("refuses an unknown provider and a half PKCE request with GoTrue's 400", async () => {
    for (const query of [
      "provider=myspace",
      "provider=github&code_challenge=abc",
      "provider=github&code_challenge_method=s256",
    ]) {
      const answer = await svc.request("GET", `${FACE}/auth/v1/authorize?${query}`);
      expect(answer.status).toBe(400);
      expect(await answer.json()).toMatchObject({ error_code: "validation_failed" });
    }
  });
});

describe("signInWithOAuth, PKCE flow, and exchangeCodeForSession", () => {
  it("lands on redirect_to with ?code=, which exchangeCodeForSession turns into a session with the provider's token", async () => {
    const client = pkceClient();
    const { data } = await client.auth.signInWithOAuth({
      provider: "github",
      options: { redirectTo: APP, skipBrowserRedirect: true },
    });
    expect(new URL(data.url!).searchParams.get("code_challenge_method")).toBe("s256");
    const who = person();
    const { landing, browser } = await toFaceCallback(data.url!, who);
    const back = location(await openIn(svc, landing, browser));
    expect(`${back.origin}${back.pathname}`).toBe(APP);
    const code = back.searchParams.get("code")!;
    expect(code).toBeTruthy();
    const { data: exchanged, error } = await client.auth.exchangeCodeForSession(code);
    expect(error).toBeNull();
    expect(exchanged.session?.user.email).toBe(who.fake_email);
    expect(exchanged.session?.provider_token).toBeTruthy();
    expect(decodeJwt(exchanged.session!.access_token).payload.amr).toEqual([
      { method: "oauth", timestamp: expect.any(Number) },
    ]);
  });

  // Threats: a replayed code (single use, taken atomically) and a wrong verifier (compared in constant time; it burns
  // the code, so the right one cannot follow).
  it("answers a replayed code flow_state_not_found and a wrong verifier bad_code_verifier", async () => {
    const client = pkceClient();
    const start = async () => {
      const { data } = await client.auth.signInWithOAuth({
        provider: "github",
        options: { redirectTo: APP, skipBrowserRedirect: true },
      });
      const { landing, browser } = await toFaceCallback(data.url!, person());
      return location(await openIn(svc, landing, browser)).searchParams.get("code")!;
    };
    const code = await start();
    expect((await client.auth.exchangeCodeForSession(code)).error).toBeNull();
    const token = (body: Record<string, string>) =>
      svc.request("POST", `${FACE}/auth/v1/token?grant_type=pkce`, {
        headers: { apikey: PUBLISHABLE_KEY, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const verifier = "v".repeat(43);
    const replayed = await token({ auth_code: code, code_verifier: verifier });
    expect(replayed.status).toBe(404);
    expect(await replayed.json()).toMatchObject({ error_code: "flow_state_not_found" });
    const other = await start();
    const wrong = await token({ auth_code: other, code_verifier: verifier });
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ error_code: "bad_code_verifier" });
    expect((await client.auth.exchangeCodeForSession(other)).error?.code).toBe("flow_state_not_found");
    const empty = await token({ auth_code: "", code_verifier: "" });
    expect(await empty.json()).toMatchObject({ error_code: "validation_failed" });
  });

  // One code store: a mailed link's PKCE code (the core's exchange codes) is redeemed here too, as a magic link.
  it("redeems a mailed link's code with grant_type=pkce", async () => {
    const email = uniqueEmail("face-pkce-link");
    const codeVerifier = base64url.encode(crypto.getRandomValues(new Uint8Array(32)));
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(codeVerifier));
    const codeChallenge = base64url.encode(new Uint8Array(digest));
    expect((await svc.post("/signin/passwordless/email", { email, codeChallenge })).status).toBe(200);
    const [mail] = await mailbox(svc, email);
    const code = (await follow(svc, verifyPath(mail!))).get("code")!;
    const answer = await svc.request("POST", `${FACE}/auth/v1/token?grant_type=pkce`, {
      headers: { apikey: PUBLISHABLE_KEY, "content-type": "application/json" },
      body: JSON.stringify({ auth_code: code, code_verifier: codeVerifier }),
    });
    expect(answer.status).toBe(200);
    const session = (await answer.json()) as { access_token: string; user: { email: string } };
    expect(session.user.email).toBe(email);
    expect(decodeJwt(session.access_token).payload.amr).toEqual([
      { method: "magiclink", timestamp: expect.any(Number) },
    ]);
  });

  // Login CSRF under PKCE: the attacker's code reaches the victim's app, whose verifier is another.
  it("does not let another app's verifier redeem a code", async () => {
    const attacker = pkceClient();
    const { data } = await attacker.auth.signInWithOAuth({
      provider: "github",
      options: { redirectTo: APP, skipBrowserRedirect: true },
    });
    const { landing, browser } = await toFaceCallback(data.url!, person());
    const code = location(await openIn(svc, landing, browser)).searchParams.get("code")!;
    const victim = pkceClient();
    await victim.auth.signInWithOAuth({ provider: "github", options: { skipBrowserRedirect: true } });
    const { error } = await victim.auth.exchangeCodeForSession(code);
    expect(error?.code).toBe("bad_code_verifier");
  });
});

describe("exchangeCodeForSession of a provider's code with D1 failing once at each statement", () => {
  const settings = { ...FAKE_PROVIDERS, AUTH_EMAIL_PASSWORDLESS_ENABLED: "true" };
  /** A provider sign-in under PKCE up to the app's `?code=`, through the healthy service; the verifier is ours. */
  const providerCode = async () => {
    const codeVerifier = base64url.encode(crypto.getRandomValues(new Uint8Array(32)));
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(codeVerifier));
    const authorize = new URL(`${FACE}/auth/v1/authorize`);
    authorize.search = new URLSearchParams({
      provider: "github",
      redirect_to: APP,
      code_challenge: base64url.encode(new Uint8Array(digest)),
      code_challenge_method: "s256",
    }).toString();
    const who = person();
    const { landing, browser } = await toFaceCallback(authorize.toString(), who);
    const code = location(await openIn(svc, landing, browser)).searchParams.get("code")!;
    return { email: who.fake_email!, body: { auth_code: code, code_verifier: codeVerifier } };
  };
  const pkceGrant = (face: ReturnType<typeof supabaseService>, body: Record<string, string>) =>
    face.request("POST", `${FACE}/auth/v1/token?grant_type=pkce`, {
      headers: { apikey: PUBLISHABLE_KEY, "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  /** The provider's tokens still waiting for a hand-off to the user, under any key (a take's claim included). */
  const handoffsOf = async (userId: string) =>
    (
      await env.DB.prepare("SELECT provider FROM provider_token_handoffs WHERE user_id = ?")
        .bind(userId)
        .all()
    ).results;

  // Threat (before): the provider's tokens (single use, taken once) were taken before a fault after the session's
  // writes (the user's identities and factors read for the answer): the 503 put the code back, but the retry signed in
  // without `provider_token`, and the app could no longer call the provider's API for the person. Threat (after): the
  // hand-off's take ran but its answer was lost: the 503 put the code back, but not the tokens, lost for good; and the
  // code's own take (one DELETE … RETURNING) run with its answer lost left nothing to put back: the retry was told 404
  // `flow_state_not_found` and the person had to sign in again. Each statement of the exchange fails once, before it
  // ran or after (its answer lost); a success leaves no tokens behind, and the code is spent afterwards.
  it.each(["before", "after"] as const)(
    "each statement failing %s it ran: the retry with the same code gets the provider's tokens, and none stay",
    async (when) => {
      let retried = 0;
      const steps = await eachStatementFailingOnce(
        env,
        async (bindings) => {
          const first = await pkceGrant(
            supabaseService({ ...settings, ...bindings }),
            (await providerCode()).body,
          );
          expect(first.status).toBe(200);
        },
        async (bindings, context) => {
          const failing = supabaseService({ ...settings, ...bindings });
          const { email, body } = await providerCode();
          let answer = await pkceGrant(failing, body);
          if (answer.status !== 200) {
            expect(answer.status, `${context}: ${await answer.text()}`).toBe(503);
            retried++;
            answer = await pkceGrant(failing, body);
            expect(answer.status, `${context}: ${await answer.clone().text()}`).toBe(200);
          }
          const session = (await answer.json()) as {
            provider_token?: string;
            provider_refresh_token?: string;
            user: { id: string; email: string };
          };
          expect(session.user.email, context).toBe(email);
          expect(session.provider_token ?? "(none)", context).toMatch(/^access-/);
          expect(session.provider_refresh_token ?? "(none)", context).toMatch(/^refresh-/);
          expect(await handoffsOf(session.user.id), context).toEqual([]);
          expect((await pkceGrant(supabaseService(settings), body)).status, context).toBe(404);
        },
        { when },
      );
      expect(steps.some((sql) => /provider_token_handoffs/.test(sql))).toBe(true);
      // The code's own take is among them: its lost answer, too, must leave the code for the retry.
      expect(steps.some((sql) => /^(update|delete from) "authorization_codes"/.test(sql))).toBe(true);
      expect(retried).toBeGreaterThan(1);
    },
    60_000,
  );
});
