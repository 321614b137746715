// Shared by the logout tests (logout, backchannel-logout, the logout conformance files): a relying party built with
// openid-client 6 inside the workers pool, a person signed in to it through the built-in page in a `Browser` (so the ID
// token's `sid` is that browser's session), and what the tests look at afterwards (the session row, prompt=none).
import * as oidc from "openid-client";
import { expect } from "vitest";
import type { WireClient } from "../../src/oauth2/clients";
import { signUp, type TestService } from "../helpers";
import { userD1 } from "../support/shards";
import { authorizeInBrowser } from "./conformance/support";
import { Browser } from "./page-browser";
import { discover } from "./relying-party-in-pool";
import { form, newClient, REDIRECT_URI } from "./support";

export const POST_LOGOUT_URI = "https://rp.example.com/signed-out";

export interface SignedIn {
  client: WireClient;
  config: oidc.Configuration;
  browser: Browser;
  email: string;
  userId: string;
  idToken: string;
  /** The browser session at the service the ID token names. */
  sid: string;
  refreshToken?: string;
}

/** A client with a post-logout URI (and whatever else `body` sets), as the admin API makes it. */
export function logoutClient(svc: TestService, body: Record<string, unknown> = {}): Promise<WireClient> {
  return newClient(svc, { postLogoutRedirectUris: [POST_LOGOUT_URI], ...body });
}

/**
 * openid-client's code flow with PKCE, the person played in `browser` on the built-in page (signing in as `email`
 * when it asks): the tokens, the ID token's claims checked by openid-client (signature, iss, aud, nonce).
 */
export async function signInThrough(
  svc: TestService,
  client: WireClient,
  browser: Browser,
  email: string,
  scope = "openid",
): Promise<{ config: oidc.Configuration; idToken: string; sid: string; refreshToken?: string }> {
  const config = await discover(svc, client.clientId, oidc.ClientSecretBasic(client.clientSecret!));
  const pkceCodeVerifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT_URI,
    scope,
    code_challenge: await oidc.calculatePKCECodeChallenge(pkceCodeVerifier),
    code_challenge_method: "S256",
    state,
    nonce,
  });
  const { callback } = await authorizeInBrowser(browser, Object.fromEntries(url.searchParams), { email });
  const tokens = await oidc.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier,
    expectedState: state,
    expectedNonce: nonce,
  });
  const sid = tokens.claims()?.sid;
  expect(typeof sid).toBe("string");
  return { config, idToken: tokens.id_token!, sid: sid as string, refreshToken: tokens.refresh_token };
}

/** A new person, signed in to a new (or the given) client in a browser of their own. */
export async function signedIn(
  svc: TestService,
  client?: WireClient,
  scope = "openid",
  browser = new Browser(svc),
): Promise<SignedIn> {
  const rp = client ?? (await logoutClient(svc));
  const { user } = await signUp(svc);
  const flow = await signInThrough(svc, rp, browser, user.email, scope);
  return { client: rp, browser, email: user.email, userId: user.id, ...flow };
}

/** Whether the session row is still there: signing out must end the session, not only drop the cookie. */
export async function sessionExists(userId: string, sid: string): Promise<boolean> {
  const row = await userD1(userId).prepare("SELECT id FROM sessions WHERE id = ?").bind(sid).first();
  return row !== null;
}

/** prompt=none in the browser (OIDC Core §3.1.2.1): `login_required` once the browser is signed out. */
export async function silentAnswer(who: SignedIn): Promise<URLSearchParams> {
  const response = await who.browser.get(
    `/oauth2/authorize?${form({
      client_id: who.client.clientId,
      redirect_uri: REDIRECT_URI,
      response_type: "code",
      scope: "openid",
      prompt: "none",
      state: "silent",
      nonce: "n",
    })}`,
  );
  expect(response.status).toBe(302);
  return new URL(response.headers.get("location")!).searchParams;
}

/** The browser at an end-session URL (openid-client's buildEndSessionUrl, or one a test built). */
export function visit(who: { browser: Browser }, url: URL | string): Promise<Response> {
  return who.browser.get(url.toString());
}

/** The fields of the page's confirmation form (logout-pages.ts), as a browser would post them back. */
export function confirmationFields(page: string): { action: string; fields: Record<string, string> } {
  const formHtml = /<form method="post" action="([^"]+)">([\s\S]*?)<\/form>/.exec(page);
  expect(formHtml, "a confirmation form").toBeTruthy();
  const fields: Record<string, string> = {};
  for (const [, name, value] of formHtml![2]!.matchAll(
    /<input type="hidden" name="([^"]+)" value="([^"]*)">/g,
  )) {
    fields[name!] = decodeEntities(value!);
  }
  return { action: decodeEntities(formHtml![1]!).replace(/^\/auth\/v1/, ""), fields };
}

const decodeEntities = (text: string) =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
