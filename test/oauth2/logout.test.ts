// RP-Initiated Logout 1.0 (contract §12) through the real HTTP surface: openid-client 6 builds the end-session URL, a
// browser (a cookie jar, page-browser.ts) follows it. Threats, one per test below: logout CSRF (a GET that signs
// someone out without their own session's ID token; a cross-site post of the confirmation form), an open redirector
// (an unregistered post-logout URI, another client's, one with a query added), forged or altered hints (`alg: none`,
// a changed signature, another key, a session access token), a hint for someone else's session (signing out the
// wrong person, or telling whose session it is), and a sign-out that only drops the cookie (the session row, and with
// it the refresh tokens, must go).
import { generateKeyPair, SignJWT, UnsecuredJWT } from "jose";
import * as oidc from "openid-client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { decodeJwt, SERVER, signUp } from "../helpers";
import { later } from "./conformance/support";
import {
  confirmationFields,
  logoutClient,
  POST_LOGOUT_URI,
  sessionExists,
  signedIn,
  silentAnswer,
  visit,
} from "./logout-support";
import { ORIGIN } from "./page-browser";
import { form, ISSUER, provider } from "./support";

const svc = provider();

afterEach(() => {
  vi.useRealTimers();
});

const endSession = (params: Record<string, string | undefined>) => `/oauth2/logout?${form(params)}`;

/** An answer that is a page and not a redirect: no `Location`, whatever the status. */
async function pageOf(response: Response, status: number): Promise<string> {
  expect(response.headers.get("location")).toBeNull();
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toMatch(/^text\/html/);
  return response.text();
}

// Each test signs people in through the page and openid-client: more than the default 5 s on a busy machine.
describe("RP-initiated logout", { timeout: 20_000 }, () => {
  it("openid-client's end-session URL signs the browser out at once and returns to the registered URI with state", async () => {
    const who = await signedIn(svc);
    expect(who.browser.signedIn).toBe(true);
    // A state with characters that must survive the round trip exactly (`state` echoed, §3).
    const state = `s &=?/+%é ${crypto.randomUUID()}`;
    const url = oidc.buildEndSessionUrl(who.config, {
      id_token_hint: who.idToken,
      post_logout_redirect_uri: POST_LOGOUT_URI,
      state,
    });
    expect(url.toString().startsWith(`${ISSUER}/oauth2/logout?`)).toBe(true);
    const response = await visit(who, url);
    expect(response.status).toBe(303);
    const back = new URL(response.headers.get("location")!);
    expect(`${back.origin}${back.pathname}`).toBe(POST_LOGOUT_URI);
    expect(back.searchParams.get("state")).toBe(state);
    expect([...back.searchParams.keys()]).toEqual(["state"]);
    // Signed out for real: the cookie and the session row (its refresh tokens end with it), so prompt=none fails.
    expect(who.browser.signedIn).toBe(false);
    expect(await sessionExists(who.userId, who.sid)).toBe(false);
    expect((await silentAnswer(who)).get("error")).toBe("login_required");
  });

  it("a POST from the client (a form it submits) works as the GET; without a return URI the page says so", async () => {
    const who = await signedIn(svc);
    const response = await who.browser.post(
      "/oauth2/logout",
      { id_token_hint: who.idToken },
      { origin: "https://rp.example.com" },
    );
    expect(await pageOf(response, 200)).toContain("You are signed out");
    expect(await sessionExists(who.userId, who.sid)).toBe(false);
  });

  it("an expired hint still names the session (RP-Initiated Logout §2: expiry is not checked)", async () => {
    const who = await signedIn(svc);
    expect(decodeJwt(who.idToken).payload.exp as number).toBeLessThan(Date.now() / 1000 + 3600);
    later(2 * 3600);
    const response = await visit(who, endSession({ id_token_hint: who.idToken }));
    expect(await pageOf(response, 200)).toContain("You are signed out");
    expect(await sessionExists(who.userId, who.sid)).toBe(false);
  });

  it("with nobody signed in, a verified hint goes straight back (there is nothing to sign out)", async () => {
    const who = await signedIn(svc);
    who.browser.jar.clear();
    const response = await visit(
      who,
      endSession({ id_token_hint: who.idToken, post_logout_redirect_uri: POST_LOGOUT_URI, state: "x" }),
    );
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe(`${POST_LOGOUT_URI}?state=x`);
    // Nobody signed out: the session of the ID token belongs to a browser that did not ask.
    expect(await sessionExists(who.userId, who.sid)).toBe(true);
  });

  // Open redirector: the browser is never sent to a URI the client did not register, exactly.
  it("an unregistered post_logout_redirect_uri is a page, never a redirect, and signs nobody out", async () => {
    const who = await signedIn(svc);
    for (const uri of [
      "https://evil.example.com/signed-out",
      `${POST_LOGOUT_URI}?next=https://evil.example.com`,
      `${POST_LOGOUT_URI}/`,
      "https://rp.example.com:8443/signed-out",
    ]) {
      const response = await visit(
        who,
        endSession({ id_token_hint: who.idToken, post_logout_redirect_uri: uri, state: "s" }),
      );
      const page = await pageOf(response, 400);
      expect(page).toContain("not registered for it");
      expect(page).not.toContain("evil.example.com");
    }
    expect(who.browser.signedIn).toBe(true);
    expect(await sessionExists(who.userId, who.sid)).toBe(true);
  });

  // Open redirector through a second client: its URI is registered, but not for the client the hint names.
  it("another client's registered URI with this client's hint is refused, and so is another client_id", async () => {
    const who = await signedIn(svc);
    const other = await logoutClient(svc, { postLogoutRedirectUris: ["https://other.example.com/bye"] });
    const withOtherUri = await visit(
      who,
      endSession({ id_token_hint: who.idToken, post_logout_redirect_uri: "https://other.example.com/bye" }),
    );
    expect(await pageOf(withOtherUri, 400)).toContain("not registered for it");
    // RP-Initiated §2: client_id and the hint's audience must agree.
    const withOtherClient = await visit(
      who,
      endSession({
        id_token_hint: who.idToken,
        client_id: other.clientId,
        post_logout_redirect_uri: "https://other.example.com/bye",
      }),
    );
    expect(await pageOf(withOtherClient, 400)).toContain("changed on the way");
    expect(await sessionExists(who.userId, who.sid)).toBe(true);
  });

  // Forged logout links: only an ID token we signed, unaltered, is a hint.
  it("a modified, unsigned, foreign-key or non-ID-token hint is an error page: no redirect, nobody signed out", async () => {
    const who = await signedIn(svc);
    const [header, payload, signature] = who.idToken.split(".") as [string, string, string];
    const flipped = `${signature.slice(0, -2)}${signature.endsWith("AA") ? "BA" : "AA"}`;
    const claims = decodeJwt(who.idToken).payload;
    const { privateKey } = await generateKeyPair("RS256");
    const foreign = await new SignJWT(claims)
      .setProtectedHeader({ alg: "RS256", kid: decodeJwt(who.idToken).header.kid as string, typ: "JWT" })
      .sign(privateKey);
    const session = await signUp(svc);
    for (const hint of [
      `${header}.${payload}.${flipped}`,
      new UnsecuredJWT(claims).encode(),
      foreign,
      // A session access token: ours, `typ: JWT`, with a `sid`, but no audience: not an ID token.
      session.accessToken,
      "not a jwt",
    ]) {
      const response = await visit(
        who,
        endSession({ id_token_hint: hint, post_logout_redirect_uri: POST_LOGOUT_URI, state: "s" }),
      );
      const page = await pageOf(response, 400);
      expect(page).toContain("This sign-out link does not work");
      // Someone signed in may still sign out of the service, by asking on this page (a form, not this GET).
      expect(page).toContain('id="logout-confirm"');
    }
    expect(who.browser.signedIn).toBe(true);
    expect(await sessionExists(who.userId, who.sid)).toBe(true);
  });

  // The wrong person signed out, or told whose session a link names.
  it("a hint for another user's session asks first, says nothing about them, and signs nobody out by itself", async () => {
    const client = await logoutClient(svc);
    const alice = await signedIn(svc, client);
    const bob = await signedIn(svc, client);
    const response = await visit(
      bob,
      endSession({ id_token_hint: alice.idToken, post_logout_redirect_uri: POST_LOGOUT_URI, state: "s" }),
    );
    const page = await pageOf(response, 200);
    expect(page).toContain("Sign out of localhost:8787?");
    expect(page).toContain(bob.email);
    expect(page).not.toContain(alice.email);
    expect(page).not.toContain(alice.userId);
    expect(bob.browser.signedIn).toBe(true);
    expect(await sessionExists(bob.userId, bob.sid)).toBe(true);
    expect(await sessionExists(alice.userId, alice.sid)).toBe(true);
  });

  // Logout CSRF: a GET without the session's own ID token never signs out; the question's form only from this origin.
  it("a GET without hint asks; the confirmation form signs out only when posted from this origin", async () => {
    const who = await signedIn(svc);
    const asked = await visit(who, "/oauth2/logout");
    // The question's form may carry an ID token: never cached.
    expect(asked.headers.get("cache-control")).toBe("no-store");
    const page = await pageOf(asked, 200);
    expect(page).toContain("Sign out of localhost:8787?");
    expect(who.browser.signedIn).toBe(true);
    expect(await sessionExists(who.userId, who.sid)).toBe(true);
    const { action, fields } = confirmationFields(page);
    expect(action).toBe("/oauth2/logout/confirm");

    const crossSite = await who.browser.post(action, fields, { origin: "https://evil.example.com" });
    expect(await pageOf(crossSite, 403)).toContain("another site");
    const noOrigin = await who.browser.post(action, fields, {});
    expect(noOrigin.status).toBe(403);
    expect(who.browser.signedIn).toBe(true);
    expect(await sessionExists(who.userId, who.sid)).toBe(true);

    const confirmed = await who.browser.post(action, fields, ORIGIN);
    expect(await pageOf(confirmed, 200)).toContain("You are signed out");
    expect(who.browser.signedIn).toBe(false);
    expect(await sessionExists(who.userId, who.sid)).toBe(false);
  });

  it("a stale hint (an earlier session) asks; once confirmed, the browser goes to the registered URI with state", async () => {
    const client = await logoutClient(svc);
    const first = await signedIn(svc, client);
    const state = `state-${crypto.randomUUID()}`;
    // Signed out, then in again: the first ID token's session is not this browser's any more.
    await visit(first, endSession({ id_token_hint: first.idToken }));
    const second = await signedIn(svc, client, "openid", first.browser);
    expect(second.sid).not.toBe(first.sid);
    const page = await visit(
      first,
      endSession({ id_token_hint: first.idToken, post_logout_redirect_uri: POST_LOGOUT_URI, state }),
    );
    const html = await pageOf(page, 200);
    expect(html).toContain("Relying Party asks to sign you out.");
    // The form's post ends at the client's URI, which the page's CSP must let it reach.
    expect(page.headers.get("content-security-policy")).toContain(
      "form-action 'self' https://rp.example.com",
    );
    const { action, fields } = confirmationFields(html);
    const confirmed = await first.browser.post(action, fields, ORIGIN);
    expect(confirmed.status).toBe(303);
    expect(confirmed.headers.get("location")).toBe(`${POST_LOGOUT_URI}?state=${encodeURIComponent(state)}`);
    expect(await sessionExists(second.userId, second.sid)).toBe(false);
  });

  // Open redirector without a hint: client_id names a client but proves nothing about who sent the browser (§3).
  it("client_id and a registered URI without a hint: asked, signed out, but not sent anywhere", async () => {
    const who = await signedIn(svc);
    const params = { client_id: who.client.clientId, post_logout_redirect_uri: POST_LOGOUT_URI, state: "s" };
    const html = await pageOf(await visit(who, endSession(params)), 200);
    const { action, fields } = confirmationFields(html);
    expect(fields).toMatchObject(params);
    const confirmed = await who.browser.post(action, fields, ORIGIN);
    expect(await pageOf(confirmed, 200)).toContain("You are signed out");
    expect(await sessionExists(who.userId, who.sid)).toBe(false);
  });

  it("speaks the language of ui_locales, and refuses a repeated parameter with a page", async () => {
    const who = await signedIn(svc);
    const french = await pageOf(await visit(who, endSession({ ui_locales: "fr" })), 200);
    expect(french).toContain("Vous déconnecter de localhost:8787 ?");
    expect(french).toContain('name="ui_locales" value="fr"');
    const repeated = await visit(who, "/oauth2/logout?state=a&state=b");
    expect(await pageOf(repeated, 400)).toContain("state is repeated");
    expect(await sessionExists(who.userId, who.sid)).toBe(true);
  });

  // Hostile input: never a 5xx, never a redirect, nobody signed out; a page that says the link does not work.
  it("answers malformed requests with a page: a JSON body, oversized values, broken encoding", async () => {
    const who = await signedIn(svc);
    const attempts: [string, string | undefined][] = [
      [JSON.stringify({ id_token_hint: who.idToken }), "application/json"],
      [`id_token_hint=${"x".repeat(9000)}`, "application/x-www-form-urlencoded"],
      [`id_token_hint=${who.idToken}&state=${"s".repeat(3000)}`, "application/x-www-form-urlencoded"],
      ["id_token_hint=%E0%A4%A&state=%zz", "application/x-www-form-urlencoded"],
      [`id_token_hint=${who.idToken}`, undefined],
    ];
    for (const [body, type] of attempts) {
      const hostile = await svc.request("POST", "/oauth2/logout", {
        body,
        headers: { cookie: who.browser.cookie, ...(type ? { "content-type": type } : {}) },
      });
      expect(hostile.status, body.slice(0, 40)).toBe(400);
      expect(hostile.headers.get("location")).toBeNull();
    }
    expect(await sessionExists(who.userId, who.sid)).toBe(true);
  });

  it("is there only with the built-in page: an external login UI keeps its own session", async () => {
    const external = provider({ AUTH_OAUTH2_PROVIDER_LOGIN_URL: `${SERVER}/login` });
    const document = (await (await external.get("/.well-known/openid-configuration")).json()) as Record<
      string,
      unknown
    >;
    expect(document.end_session_endpoint).toBeUndefined();
    expect(document.backchannel_logout_supported).toBe(true);
    expect((await external.get("/oauth2/logout")).status).toBe(404);
  });
});
