// `id_token_hint` on the authorization request (OIDC Core §3.1.2.1): the user the client believes is signed in. Only
// an ID token this server issued to this client is a hint. Threats: a silent (prompt=none) request completing for
// someone other than the user the client expects (another person took over the shared browser: the app would
// otherwise go on as the new person while showing the old one's data), and a hint forged or taken from another client
// passing for a real one.
import { UnsecuredJWT } from "jose";
import { describe, expect, it } from "vitest";
import {
  authorizeInBrowser,
  codeOf,
  expectAuthorizationError,
  flow,
  partyOf,
  requestOf,
  rpOf,
} from "./conformance/support";
import { newClient, provider } from "./support";

const svc = provider();
const party = async () => partyOf(svc, rpOf(await newClient(svc)));

describe("id_token_hint", () => {
  it("prompt=none with a hint naming the signed-in user completes silently", async () => {
    const who = await party();
    const first = await flow(who);
    const params = requestOf(who.rp, { prompt: "none", id_token_hint: first.tokens.id_token });
    const silent = await authorizeInBrowser(who.browser, params, { email: who.email });
    expect(silent.shown).toEqual({ signIn: false, consent: false });
    expect(codeOf(silent.callback, params.state)).toBeTruthy();
  });

  it("threat: prompt=none with a hint naming another user than the signed-in one answers login_required", async () => {
    const alice = await party();
    const aliceTokens = (await flow(alice)).tokens;
    // Bob signs in to the same client in his own browser; his browser then carries Alice's hint (an app that kept it).
    const bob = await partyOf(svc, alice.rp);
    await flow(bob);
    const params = requestOf(bob.rp, { prompt: "none", id_token_hint: aliceTokens.id_token });
    const answer = await authorizeInBrowser(bob.browser, params, { email: bob.email });
    expectAuthorizationError(answer.callback, ["login_required"], params.state);
  });

  it("threat: a hint this server did not sign, or signed for another client, is refused at the redirect URI", async () => {
    const who = await party();
    const theirs = await flow(await party());
    const unsigned = new UnsecuredJWT({ sub: who.userId, aud: who.rp.clientId }).setIssuer("x").encode();
    for (const hint of [theirs.tokens.id_token, unsigned, "not-a-jwt"]) {
      const params = requestOf(who.rp, { id_token_hint: hint });
      const answer = await authorizeInBrowser(who.browser, params, { email: who.email });
      expectAuthorizationError(answer.callback, ["invalid_request"], params.state);
    }
  });
});
