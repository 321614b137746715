// A relying party built on a certified OpenID library, panva's openid-client v6, drives the authorization server on
// `wrangler dev` with no special cases: discovery, an authorization URL with PKCE, nonce and state, the login step,
// the code grant with ID-token validation, userinfo, refresh, introspection and revocation — for a confidential
// client with each authentication method and for a public client.
import * as oidc from "openid-client";
import { describe, expect, it } from "vitest";
import { authUrl, verifiedUser } from "./client";
import {
  authorizationRequest,
  completeLoginStep,
  discover,
  pendingRequestOf,
  registerClient,
} from "./relying-party";

const REDIRECT_URI = "https://rp.example.com/callback";
const SCOPE = "openid profile email offline_access";

/** The login step of an external login UI: the request id from the redirect, completed with the user's token. */
async function loginStep(authorizationUrl: URL, accessToken: string): Promise<URL> {
  const requestId = await pendingRequestOf(authorizationUrl);
  const described = (await (await fetch(`${authUrl}/oauth2/login?request_id=${requestId}`)).json()) as {
    scopes: string[];
  };
  expect(described.scopes).toEqual(SCOPE.split(" "));
  return completeLoginStep(requestId, accessToken);
}

const METHODS: [string, (secret?: string) => oidc.ClientAuth][] = [
  ["client_secret_basic", (secret) => oidc.ClientSecretBasic(secret)],
  ["client_secret_post", (secret) => oidc.ClientSecretPost(secret)],
  ["none", () => oidc.None()],
];

describe("openid-client v6 against the authorization server", () => {
  for (const [method, clientAuth] of METHODS) {
    it(`completes the code flow with PKCE for a ${method} client`, async () => {
      const registered = await registerClient({
        clientName: `openid-client ${method}`,
        redirectUris: [REDIRECT_URI],
        tokenEndpointAuthMethod: method,
      });
      const config = await discover(registered, clientAuth(registered.clientSecret));
      expect(config.serverMetadata().issuer).toBe(authUrl);

      const { url, checks } = await authorizationRequest(config, REDIRECT_URI, SCOPE);
      const user = await verifiedUser("rp");
      const callback = await loginStep(url, user.accessToken);

      const tokens = await oidc.authorizationCodeGrant(config, callback, {
        ...checks,
        idTokenExpected: true,
      });
      const claims = tokens.claims()!;
      expect(claims.email).toBe(user.email);
      expect(claims.auth_time).toEqual(expect.any(Number));

      const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
      expect(info).toMatchObject({ sub: claims.sub, email: user.email, email_verified: true });

      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
      expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
      expect(refreshed.claims()?.sub).toBe(claims.sub);

      // A public client has no credentials to introspect with (contract §3.5: client authentication required).
      if (method !== "none") {
        const introspection = await oidc.tokenIntrospection(config, refreshed.access_token);
        expect(introspection).toMatchObject({
          active: true,
          sub: claims.sub,
          client_id: registered.clientId,
        });
      }
      await oidc.tokenRevocation(config, refreshed.refresh_token!);
      if (method !== "none") {
        expect((await oidc.tokenIntrospection(config, refreshed.access_token)).active).toBe(false);
      }
      await expect(oidc.refreshTokenGrant(config, refreshed.refresh_token!)).rejects.toMatchObject({
        error: "invalid_grant",
      });
      await expect(oidc.fetchUserInfo(config, refreshed.access_token, claims.sub)).rejects.toThrow();
    });
  }
});
