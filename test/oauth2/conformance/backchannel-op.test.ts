// The OpenID Foundation's `oidcc-backchannel-rp-initiated-logout-certification-test-plan` (Back-Channel OP: server
// metadata from discovery, a static client with client_secret_basic, the default response mode), one test per module,
// titled with the module's name and in the plan's order. The client registers a backchannel_logout_uri (a receiver of
// test/fakes/outbound.js, as the suite listens at `/backchannel_logout`) with backchannel_logout_session_required, and
// a post_logout_redirect_uri. Threats the plan stands for: a logout token an RP cannot tell from a forged or replayed
// one (signature, iss, aud, iat, jti, events, no nonce), one that names the wrong person or session (sub, sid against
// the ID token's), and a logout that leaves the session standing at the OP.
import { createLocalJWKSet, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { eventually, received, receiverUrl } from "../../webhooks/support";
import { form, ISSUER, location, newClient, provider } from "../support";
import {
  discoveryOf,
  expectAuthorizationError,
  flow,
  partyOf,
  random,
  requestOf,
  rpOf,
  serverKeys,
} from "./support";

const svc = provider();
const POST_LOGOUT = "https://rp.example.com/post_logout_redirect";
const EVENT = "http://schemas.openid.net/event/backchannel-logout";

// The module waits for the back-channel request to come through two queues: more than the default 5 s.
describe("oidcc-backchannel-rp-initiated-logout-certification-test-plan", { timeout: 30_000 }, () => {
  // Discovery says back-channel logout is supported, with sid (OIDCBCL-2.1), and names the end_session_endpoint the
  // module's RP-initiated logout starts from.
  it("oidcc-backchannel-logout-discovery-endpoint-verification", async () => {
    const discovery = await discoveryOf(svc);
    expect(discovery.backchannel_logout_supported).toBe(true);
    expect(discovery.backchannel_logout_session_supported).toBe(true);
    expect(discovery.end_session_endpoint).toBe(`${ISSUER}/oauth2/logout`);
  });

  // A normal authorization, then RP-initiated logout. The back-channel request holds only logout_token
  // (ExtractLogoutTokenFromBackchannelLogoutRequest, CheckForUnexpectedParametersInBackchannelLogoutRequest); the token
  // verifies with the server's keys (ValidateLogoutTokenSignature); iss, aud, iat not in the future, jti, and events
  // with exactly the back-channel event as an empty object (ValidateLogoutTokenClaims); sub and sid those of the ID
  // token (CheckIdTokenSubMatchesLogoutToken, CheckIdTokenSidMatchesLogoutToken); no nonce (CheckLogoutTokenNoNonce).
  // The browser comes back with state (CheckPostLogoutState) and nothing else; then prompt=none fails: logged out.
  it("oidcc-backchannel-rp-initiated-logout", async () => {
    const backchannel = receiverUrl("backchannel_logout");
    const rp = rpOf(
      await newClient(svc, {
        postLogoutRedirectUris: [POST_LOGOUT],
        backchannelLogoutUri: backchannel,
        backchannelLogoutSessionRequired: true,
      }),
    );
    const who = await partyOf(svc, rp);
    const { tokens, idToken } = await flow(who);
    expect(idToken.sid).toEqual(expect.any(String));

    const state = random(128);
    const logout = await who.browser.get(
      `/oauth2/logout?${form({ id_token_hint: tokens.id_token, post_logout_redirect_uri: POST_LOGOUT, state })}`,
    );
    expect(logout.status).toBe(303);
    const back = location(logout);
    expect(`${back.origin}${back.pathname}`).toBe(POST_LOGOUT);
    expect([...back.searchParams]).toEqual([["state", state]]);

    const [post] = await eventually(
      () => received(backchannel),
      (posts) => posts.length > 0,
    );
    const body = new URLSearchParams(post!.body);
    expect([...body.keys()]).toEqual(["logout_token"]);
    const { payload, protectedHeader } = await jwtVerify(
      body.get("logout_token")!,
      createLocalJWKSet(await serverKeys(svc)),
      { issuer: ISSUER, audience: rp.clientId },
    );
    expect(protectedHeader.typ).toBe("logout+jwt");
    expect(payload.iat!).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 300);
    expect(payload.jti).toEqual(expect.any(String));
    expect(payload.events).toEqual({ [EVENT]: {} });
    expect(payload.sub).toBe(idToken.sub);
    expect(payload.sid).toBe(idToken.sid);
    expect(payload).not.toHaveProperty("nonce");

    const params = requestOf(rp, { prompt: "none" });
    const again = await who.browser.get(`/oauth2/authorize?${form(params)}`);
    expect(again.status).toBe(302);
    expectAuthorizationError(location(again), ["login_required", "interaction_required"], params.state);
  });
});
