// The token vault (contract operators.md §3) against `wrangler dev`, with openid-client v6 as the agent: a person
// connects Google (faked on loopback, test/compat/fake-provider-server.ts) for the agent, signs in to the agent
// through the code flow, and the agent exchanges the person's token for Google's (RFC 8693 §2.1,
// `audience=provider:google`); once the person removes the connection, the same exchange is refused. Every other
// rule (refresh, races, faults, refusals) is proved in the workers project (test/vault/).
import * as oidc from "openid-client";
import { describe, expect, inject, it } from "vitest";
import { authUrl, browse, REDIRECT, verifiedUser } from "./client";
import {
  authorizationRequest,
  completeLoginStep,
  discover,
  pendingRequestOf,
  registerClient,
} from "./relying-party";

const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";
const ACCESS_TOKEN = "urn:ietf:params:oauth:token-type:access_token";
const fakeProviders = inject("fakeProviders");

describe("the token vault with openid-client (contract operators.md §3; RFC 8693 §2.1)", () => {
  it("an agent exchanges its user's token for Google's, and not after the user removed the connection", async () => {
    const person = await verifiedUser("vault");
    const agent = await registerClient({
      clientName: "Calendar agent",
      redirectUris: [REDIRECT],
      scopes: ["openid", "profile"],
      grantTypes: ["authorization_code", TOKEN_EXCHANGE],
      vaultProviders: ["google"],
    });
    const asked = await fetch(`${authUrl}/user/connections/google`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${person.accessToken}` },
      body: JSON.stringify({ redirectTo: REDIRECT, clientIds: [agent.clientId] }),
    });
    expect(asked.status).toBe(200);
    const googleId = `compat-${crypto.randomUUID()}`;
    const landed = await browse(((await asked.json()) as { url: string }).url, {
      fake_id: googleId,
      fake_email: "vault@gmail.example",
    });
    expect(landed.searchParams.get("connected")).toBe("google");

    const config = await discover(agent, oidc.ClientSecretBasic(agent.clientSecret!));
    const { url, checks } = await authorizationRequest(config, REDIRECT, "openid profile");
    const callback = await completeLoginStep(await pendingRequestOf(url), person.accessToken);
    const tokens = await oidc.authorizationCodeGrant(config, callback, checks);

    const exchange = () =>
      oidc.genericGrantRequest(config, TOKEN_EXCHANGE, {
        subject_token: tokens.access_token,
        subject_token_type: ACCESS_TOKEN,
        requested_token_type: ACCESS_TOKEN,
        audience: "provider:google",
      });
    const google = await exchange();
    expect(google).toMatchObject({ issued_token_type: ACCESS_TOKEN, token_type: "bearer" });
    expect(google.refresh_token).toBeUndefined();
    expect(google.expires_in).toBeGreaterThan(3000);
    expect(google.scope).toContain("https://www.googleapis.com/auth/calendar.readonly");
    // Google's own token: its userinfo knows the person by it.
    const info = await fetch(`${fakeProviders}/oidc.fake/userinfo`, {
      headers: { authorization: `Bearer ${google.access_token}` },
    });
    expect(((await info.json()) as { sub: string }).sub).toBe(googleId);

    const removed = await fetch(`${authUrl}/user/connections/google`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${person.accessToken}` },
    });
    expect(await removed.json()).toEqual({ revokedAtProvider: true });
    await expect(exchange()).rejects.toMatchObject({ error: "invalid_grant" });
  });
});
