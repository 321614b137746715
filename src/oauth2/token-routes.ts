import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../http/app-env";
import { operation } from "../http/documented";
import { rateLimit } from "../rate-limits/middleware";
import { GRANT_TYPES } from "./clients";
import { startDeviceAuthorization } from "./device";
import { clientCredentialFields, clientRequest, NO_STORE } from "./route-support";
import { tokenRequest } from "./token-requests";
import { deviceAuthorizationSchema, OAUTH2_DIRECT_ERRORS, tokenAnswerSchema } from "./wire";

/**
 * `POST /oauth2/token` (contract §3.5, §3.6): every grant, for an authenticated client; and
 * `POST /oauth2/device_authorization` (RFC 8628 §3.1), where a device gets the codes it then polls the token
 * endpoint with (the person's side is the device page, page/device-routes.ts).
 */

const tokenForm = z.object({
  grant_type: z.enum(GRANT_TYPES),
  code: z.string().optional(),
  redirect_uri: z.string().optional(),
  code_verifier: z.string().optional(),
  refresh_token: z.string().optional(),
  device_code: z.string().optional(),
  scope: z.string().optional().describe("Refresh and client_credentials: narrows"),
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
        "`expired_token` until approved, then once), `client_credentials` (confidential clients an admin made or " +
        "allowed: a token about the client itself, `gty: client_credentials`). Client authentication: HTTP Basic or " +
        "the form, as registered; public clients send `client_id`. `Cache-Control: no-store`.",
      security: "oauth2-client",
      request: { target: "form", schema: tokenForm },
      answers: { 200: { description: "Tokens.", schema: tokenAnswerSchema }, ...OAUTH2_DIRECT_ERRORS },
    }),
    rateLimit("OAUTH2"),
    async (c) => {
      const { params, client } = await clientRequest(c);
      return c.json(await tokenRequest(c.var.deps, client, params), 200, NO_STORE);
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
