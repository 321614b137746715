import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../http/app-env";
import { operation } from "../http/documented";
import { rateLimit } from "../rate-limits/middleware";
import { GRANT_TYPES } from "./clients";
import { startDeviceAuthorization } from "./device";
import { dpopEndpoint, tokenRequestBinding } from "./dpop";
import { clientCredentialFields, clientRequest, NO_STORE } from "./route-support";
import { tokenRequest } from "./token-requests";
import {
  deviceAuthorizationSchema,
  OAUTH2_DIRECT_ERRORS,
  oauth2ErrorSchema,
  tokenAnswerSchema,
} from "./wire";

/**
 * `POST /oauth2/token` (contract §3.5, §3.6): every grant, for an authenticated client; and
 * `POST /oauth2/device_authorization` (RFC 8628 §3.1), where a device gets the codes it then polls the token
 * endpoint with (the person's side is the device page, src/pages/device-routes.ts).
 */

const tokenForm = z.object({
  grant_type: z.enum(GRANT_TYPES),
  code: z.string().optional(),
  redirect_uri: z.string().optional(),
  code_verifier: z.string().optional(),
  refresh_token: z.string().optional(),
  device_code: z.string().optional(),
  auth_req_id: z.string().optional().describe("OpenID CIBA: the id `/oauth2/bc-authorize` answered"),
  subject_token: z.string().optional().describe("Token exchange (RFC 8693): an access token of ours"),
  subject_token_type: z.string().optional().describe("Token exchange: `…:token-type:access_token`"),
  actor_token: z.string().optional().describe("Token exchange, optional: the client's own token"),
  actor_token_type: z.string().optional(),
  requested_token_type: z.string().optional().describe("Token exchange: `…:token-type:access_token`"),
  audience: z.string().optional().describe("Token exchange: a resource, as `resource`"),
  assertion: z.string().optional().describe("JWT bearer (RFC 7523): a trusted issuer's JWT or ID-JAG"),
  scope: z.string().optional().describe("Refresh, client_credentials, token exchange, JWT bearer: narrows"),
  resource: z.string().optional().describe("RFC 8707, repeatable: narrows"),
  ...clientCredentialFields,
});

export const tokenRoutes = new Hono<AppEnv>()
  .post(
    "/oauth2/token",
    operation({
      summary: "Token endpoint",
      description:
        "*form*. `authorization_code` (with the PKCE verifier and the same redirect URI; a replayed code revokes " +
        "what it issued), `refresh_token` (rotates; a replay revokes the grant), " +
        "`urn:ietf:params:oauth:grant-type:device_code` (`authorization_pending`, `slow_down`, `access_denied`, " +
        "`expired_token` until approved, then once), `urn:openid:params:grant-type:ciba` (`auth_req_id`, the same " +
        "answers as the device grant: OpenID CIBA Core §11), `client_credentials` (confidential clients an admin made or " +
        "allowed: a token about the client itself, `gty: client_credentials`), " +
        "`urn:ietf:params:oauth:grant-type:token-exchange` (RFC 8693: one of this server's access tokens given to " +
        "the client, for a `resource`/`audience` it may reach, down-scoped, with `act` naming the client; " +
        "`issued_token_type` in the answer; with `audience=provider:<name>`, the token vault's exchange of a token " +
        "issued to the client for that provider's current access token, docs/agents.md), `urn:ietf:params:oauth:grant-type:jwt-bearer` (RFC 7523: an " +
        "`assertion` from an issuer the client trusts, naming a user id; an ID-JAG, `typ: oauth-id-jag+jwt`, for " +
        "its `client_id`, `resource` and `scope`). Both for confidential clients an admin made or allowed; no " +
        "refresh token. Client authentication: HTTP Basic or " +
        "the form, as registered; public clients send `client_id`. `Cache-Control: no-store`. With a `DPoP` proof " +
        "(RFC 9449; any grant) the access token is bound to its key (`cnf.jkt`, `token_type: DPoP`), and a public " +
        "client's refresh token too; a bad proof: 400 `invalid_dpop_proof`; with server nonces on, `DPoP-Nonce` on " +
        "every answer and 400 `use_dpop_nonce` for a proof without the current one.",
      security: "oauth2-client",
      request: { target: "form", schema: tokenForm },
      answers: {
        200: { description: "Tokens.", schema: tokenAnswerSchema },
        ...OAUTH2_DIRECT_ERRORS,
        500: {
          description:
            "`server_error`: the service failed (the description names the request); or, with " +
            "`audience=provider:<name>`, the provider refused this service's own client credentials at the token's " +
            "renewal, which the operator must fix (the connection is kept).",
          schema: oauth2ErrorSchema,
        },
      },
    }),
    rateLimit("OAUTH2"),
    dpopEndpoint,
    async (c) => {
      const { params, client } = await clientRequest(c);
      const binding = await tokenRequestBinding(c, client);
      return c.json(await tokenRequest(c.var.deps, client, params, binding), 200, NO_STORE);
    },
  )
  .post(
    "/oauth2/device_authorization",
    operation({
      summary: "Device authorization (RFC 8628)",
      description:
        "*form*. A device code to poll the token endpoint with, and a user code for the person to enter at " +
        "`verification_uri` (the built-in device page). The client needs the device_code grant.",
      security: "oauth2-client",
      request: {
        target: "form",
        schema: z.object({
          scope: z.string().optional(),
          resource: z.string().optional(),
          ...clientCredentialFields,
        }),
      },
      answers: {
        200: { description: "The codes.", schema: deviceAuthorizationSchema },
        ...OAUTH2_DIRECT_ERRORS,
      },
    }),
    rateLimit("OAUTH2"),
    async (c) => {
      const { params, client } = await clientRequest(c);
      return c.json(await startDeviceAuthorization(c.var.deps, client, params), 200, NO_STORE);
    },
  );
