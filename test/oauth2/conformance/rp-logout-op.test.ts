// The OpenID Foundation's `oidcc-rp-initiated-logout-certification-test-plan` (RP-Initiated Logout OP: server metadata
// from discovery, a static client with a registered post_logout_redirect_uri), one test per module, titled with the
// module's name and in the plan's order. Each does what its module does through the real HTTP surface: a normal
// authorization in a browser on the built-in page (AbstractOIDCCRpInitiatedLogout), then the browser at the
// end_session_endpoint with the module's request (CreateEndSessionEndpointRequest: id_token_hint,
// post_logout_redirect_uri and a 128-character state, no client_id), and asserts what the module asserts; the comment
// above says what that is. Where the module asks for a screenshot, the page is checked for what the screenshot must
// show. Threats the plan stands for: an open redirector at logout (unregistered or altered post-logout URIs), forged
// logout links (modified, unsigned or foreign ID tokens as hints), and a logout that leaves the session standing.
import { generateKeyPair, SignJWT, UnsecuredJWT } from "jose";
import { describe, expect, it } from "vitest";
import { confirmationFields, sessionExists } from "../logout-support";
import { ORIGIN } from "../page-browser";
import { form, ISSUER, location, newClient, provider } from "../support";
import {
  discoveryOf,
  expectAuthorizationError,
  flow,
  type Party,
  partyOf,
  random,
  requestOf,
  rpOf,
} from "./support";

const svc = provider();

/** The module's post_logout_redirect_uri: the redirect URI with `/post_logout_redirect` (CreatePostLogoutRedirectUri). */
const POST_LOGOUT = "https://rp.example.com/post_logout_redirect";

/** Errors that say a user interface is needed (CheckErrorFromAuthorizationEndpointIsOneThatRequiredAUserInterface). */
const NEEDS_A_USER = [
  "login_required",
  "interaction_required",
  "account_selection_required",
  "consent_required",
];

interface LoggedIn {
  who: Party;
  idToken: string;
  sid: string;
}

/** The first authorization: a person signed in to a static client with a registered post-logout URI. */
async function loggedIn(): Promise<LoggedIn> {
  const rp = rpOf(await newClient(svc, { postLogoutRedirectUris: [POST_LOGOUT] }));
  const who = await partyOf(svc, rp);
  const first = await flow(who);
  return { who, idToken: first.tokens.id_token!, sid: first.idToken.sid as string };
}

/** CreateEndSessionEndpointRequest, then the module's customisation (`undefined` removes a parameter). */
function endSessionRequest(session: LoggedIn, custom: Record<string, string | undefined> = {}) {
  return {
    id_token_hint: session.idToken,
    post_logout_redirect_uri: POST_LOGOUT,
    state: random(128),
    ...custom,
  };
}

function atEndSession(session: LoggedIn, request: Record<string, string | undefined>): Promise<Response> {
  return session.who.browser.get(`/oauth2/logout?${form(request)}`);
}

/** The module's screenshot: a page (never the post_logout_redirect), with what it must say. */
async function screenshot(response: Response, status: 200 | 400, says: string): Promise<string> {
  expect(response.headers.get("location")).toBeNull();
  expect(response.status).toBe(status);
  const page = await response.text();
  expect(page).toContain(says);
  return page;
}

/** The second authorization, with prompt=none: must fail with an error asking for a user (the user logged out). */
async function expectLoggedOut(session: LoggedIn) {
  const params = requestOf(session.who.rp, { prompt: "none" });
  const response = await session.who.browser.get(`/oauth2/authorize?${form(params)}`);
  expect(response.status).toBe(302);
  expectAuthorizationError(location(response), NEEDS_A_USER, params.state);
  expect(await sessionExists(session.who.userId, session.sid)).toBe(false);
}

/** The person answers the page's question: the confirmation form, posted from the page. */
async function confirm(session: LoggedIn, page: string): Promise<Response> {
  const { action, fields } = confirmationFields(page);
  return session.who.browser.post(action, fields, ORIGIN);
}

// Each module signs a person in through the page first: more than the default 5 s on a busy machine.
describe("oidcc-rp-initiated-logout-certification-test-plan", { timeout: 20_000 }, () => {
  // Discovery names an end_session_endpoint: an absolute URL under the issuer (CheckDiscEndpointEndSessionEndpoint).
  it("oidcc-rp-initiated-logout-discovery-endpoint-verification", async () => {
    const discovery = await discoveryOf(svc);
    expect(discovery.end_session_endpoint).toBe(`${ISSUER}/oauth2/logout`);
    expect(new URL(String(discovery.end_session_endpoint)).origin).toBe(new URL(ISSUER).origin);
  });

  // The browser comes back to the post_logout_redirect_uri with state exactly as sent (CheckPostLogoutState) and
  // nothing else (CheckForUnexpectedParametersInPostLogoutRedirect); then prompt=none must fail: logged out.
  it("oidcc-rp-initiated-logout", async () => {
    const session = await loggedIn();
    const request = endSessionRequest(session);
    const response = await atEndSession(session, request);
    expect(response.status).toBe(303);
    const back = location(response);
    expect(`${back.origin}${back.pathname}`).toBe(POST_LOGOUT);
    expect(back.searchParams.get("state")).toBe(request.state);
    expect([...back.searchParams.keys()]).toEqual(["state"]);
    await expectLoggedOut(session);
  });

  // A post_logout_redirect_uri the client did not register: no redirect; an error page or a question (screenshot).
  it("oidcc-rp-initiated-logout-bad-post-logout-redirect-uri", async () => {
    const session = await loggedIn();
    const request = endSessionRequest(session, { post_logout_redirect_uri: "https://rp.example.com/other" });
    await screenshot(await atEndSession(session, request), 400, "not registered for it");
  });

  // The hint changed to alg: none (ChangeIdTokenToAlgNone): no redirect; an error page or a question (screenshot).
  it("oidcc-rp-initiated-logout-modified-id-token-hint", async () => {
    const session = await loggedIn();
    const [, payload] = session.idToken.split(".");
    const claims = JSON.parse(atob(payload!.replace(/-/g, "+").replace(/_/g, "/")));
    const request = endSessionRequest(session, { id_token_hint: new UnsecuredJWT(claims).encode() });
    await screenshot(await atEndSession(session, request), 400, "This sign-out link does not work");
    expect(await sessionExists(session.who.userId, session.sid)).toBe(true);
  });

  // No id_token_hint: no redirect; an error page or a question (screenshot). With neither hint nor client_id the
  // post_logout_redirect_uri is nobody's to check: an error page, on which the person may still sign out. Beyond the
  // module: once they do, they are logged out, and still not sent to the post-logout URI.
  it("oidcc-rp-initiated-logout-no-id-token-hint", async () => {
    const session = await loggedIn();
    const request = endSessionRequest(session, { id_token_hint: undefined });
    const page = await screenshot(await atEndSession(session, request), 400, "not registered for it");
    await screenshot(await confirm(session, page), 200, "You are signed out");
    await expectLoggedOut(session);
  });

  // No parameters at all: the OP must log the user out and show that it did (screenshot of the logged-out page). The
  // question comes first: a bare link could be anyone's (logout CSRF); answered, the person is logged out.
  it("oidcc-rp-initiated-logout-no-params", async () => {
    const session = await loggedIn();
    const page = await screenshot(await atEndSession(session, {}), 200, "Sign out of");
    await screenshot(await confirm(session, page), 200, "You are signed out");
    await expectLoggedOut(session);
  });

  // A hint without post_logout_redirect_uri: logged out at once, and the logged-out page (screenshot), no redirect.
  it("oidcc-rp-initiated-logout-no-post-logout-redirect-uri", async () => {
    const session = await loggedIn();
    const request = endSessionRequest(session, { post_logout_redirect_uri: undefined });
    await screenshot(await atEndSession(session, request), 200, "You are signed out");
    await expectLoggedOut(session);
  });

  // No state: back to the post-logout URI without one (CheckPostLogoutState: absent when not sent).
  it("oidcc-rp-initiated-logout-no-state", async () => {
    const session = await loggedIn();
    const response = await atEndSession(session, endSessionRequest(session, { state: undefined }));
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe(POST_LOGOUT);
    await expectLoggedOut(session);
  });

  // Only state: the OP must log the user out (screenshot of the logged-out page), never redirect.
  it("oidcc-rp-initiated-logout-only-state", async () => {
    const session = await loggedIn();
    const request = { state: random(128) };
    const page = await screenshot(await atEndSession(session, request), 200, "Sign out of");
    await screenshot(await confirm(session, page), 200, "You are signed out");
    await expectLoggedOut(session);
  });

  // The registered URI with ?foo=bar added: not registered, so no redirect (screenshot of the error).
  it("oidcc-rp-initiated-logout-query-added-to-post-logout-redirect-uri", async () => {
    const session = await loggedIn();
    const request = endSessionRequest(session, { post_logout_redirect_uri: `${POST_LOGOUT}?foo=bar` });
    await screenshot(await atEndSession(session, request), 400, "not registered for it");
    expect(await sessionExists(session.who.userId, session.sid)).toBe(true);
  });

  // A hint the suite signed itself (GenerateFakeIdTokenClaims, SignFakeIdToken): an error page, no redirect.
  it("oidcc-rp-initiated-logout-bad-id-token-hint", async () => {
    const session = await loggedIn();
    const { privateKey } = await generateKeyPair("RS256");
    const now = Math.floor(Date.now() / 1000);
    const fake = await new SignJWT({ sid: session.sid })
      .setProtectedHeader({ alg: "RS256", kid: "fake" })
      .setIssuer(ISSUER)
      .setSubject(session.who.userId)
      .setAudience(session.who.rp.clientId)
      .setIssuedAt(now)
      .setExpirationTime(now + 300)
      .sign(privateKey);
    const request = endSessionRequest(session, { id_token_hint: fake });
    await screenshot(await atEndSession(session, request), 400, "This sign-out link does not work");
    expect(await sessionExists(session.who.userId, session.sid)).toBe(true);
  });
});
