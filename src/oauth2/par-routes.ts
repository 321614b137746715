import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../http/app-env";
import { operation } from "../http/documented";
import { rateLimit } from "../rate-limits/middleware";
import { authorizeQuery } from "./authorize-routes";
import { bindPushedRequestToProof } from "./dpop";
import { PUSHED_REQUEST_LIFETIME_S, pushAuthorizationRequest, REQUEST_URI_PREFIX } from "./par";
import { clientCredentialFields, clientRequest, NO_STORE } from "./route-support";
import { OAUTH2_DIRECT_ERRORS } from "./wire";

/**
 * `POST /oauth2/par` (RFC 9126, contract §12): a client pushes its authorization request here, authenticated as at
 * the token endpoint, and gets the `request_uri` it then sends the browser to `/oauth2/authorize` with (par.ts).
 */

const parForm = authorizeQuery.omit({ request_uri: true }).extend({
  code_challenge: z.string().describe("PKCE S256: required of every client here"),
  ...clientCredentialFields,
});

const parAnswerSchema = z.object({
  request_uri: z.string().describe(`\`${REQUEST_URI_PREFIX}…\`: single use, for this client only`),
  expires_in: z.number().int().describe("Seconds the request_uri may be used in"),
});

export const parRoutes = new Hono<AppEnv>().post(
  "/oauth2/par",
  operation({
    summary: "Pushed authorization request (RFC 9126)",
    description:
      "*form*. The authorization request's parameters, with the client's authentication as at the token endpoint " +
      "(`client_id` is then optional, and must name the authenticated client when sent). The request is checked as " +
      "`/oauth2/authorize` checks it, and every error is JSON (RFC 9126 §2.3): the redirect URI must be one the client " +
      "registered (for confidential clients too), PKCE (`S256`) is required, `request_uri` is refused. 201: the " +
      `\`request_uri\` to send the browser to \`/oauth2/authorize\` with (with \`client_id\`), usable once within ` +
      `${PUSHED_REQUEST_LIFETIME_S} seconds. A client assertion (\`private_key_jwt\`) here must have the issuer ` +
      "identifier as its `aud`, as a single string. A `DPoP` proof (RFC 9449 §10.1) binds the code to its key, as " +
      "`dpop_jkt` does; both must then name the same key (else `invalid_dpop_proof`). `Cache-Control: no-store`.",
    security: "oauth2-client",
    request: { target: "form", schema: parForm },
    answers: {
      201: { description: "The request URI.", schema: parAnswerSchema },
      ...OAUTH2_DIRECT_ERRORS,
    },
  }),
  rateLimit("OAUTH2"),
  async (c) => {
    const { params, client } = await clientRequest(c);
    // RFC 9449 §10.1: a DPoP proof sent here binds the code to its key, as `dpop_jkt` does (dpop.ts).
    await bindPushedRequestToProof(c, params);
    return c.json(await pushAuthorizationRequest(c.var.deps, client, params), 201, NO_STORE);
  },
);
