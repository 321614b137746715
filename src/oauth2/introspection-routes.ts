import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../http/app-env";
import { operation } from "../http/documented";
import { rateLimit } from "../rate-limits/middleware";
import { introspect, revoke } from "./introspection";
import { clientCredentialFields, clientRequest, NO_STORE, requiredToken } from "./route-support";
import { introspectionSchema, OAUTH2_DIRECT_ERRORS } from "./wire";

/** `POST /oauth2/introspect` (RFC 7662) and `POST /oauth2/revoke` (RFC 7009): a client about its own tokens. */

/** The form both take: the token, and which kind the client thinks it is. */
const tokenHintForm = z.object({
  token: z.string(),
  token_type_hint: z.enum(["access_token", "refresh_token"]).optional(),
  ...clientCredentialFields,
});

export const introspectionRoutes = new Hono<AppEnv>()
  .post(
    "/oauth2/introspect",
    operation({
      summary: "Token introspection (RFC 7662)",
      description:
        "*form*. Whether a token of the calling client is active, and what it says; another client's token is just " +
        "`{active: false}`.",
      security: "oauth2-client",
      request: { target: "form", schema: tokenHintForm },
      answers: {
        200: { description: "The token's state.", schema: introspectionSchema },
        ...OAUTH2_DIRECT_ERRORS,
      },
    }),
    rateLimit("OAUTH2"),
    async (c) => {
      const { params, client } = await clientRequest(c);
      return c.json(await introspect(c.var.deps, client.clientId, requiredToken(params)), 200, NO_STORE);
    },
  )
  .post(
    "/oauth2/revoke",
    operation({
      summary: "Token revocation (RFC 7009)",
      description:
        "*form*. Ends the grant of any token of the calling client (its refresh tokens, and its access tokens at " +
        "introspection and userinfo). The same empty 200 for unknown tokens.",
      security: "oauth2-client",
      request: { target: "form", schema: tokenHintForm },
      answers: {
        200: { description: "Revoked (or nothing to revoke); no body.", media: "empty" },
        ...OAUTH2_DIRECT_ERRORS,
      },
    }),
    async (c) => {
      const { params, client } = await clientRequest(c);
      await revoke(c.var.deps, client.clientId, requiredToken(params));
      return c.body(null, 200, NO_STORE);
    },
  );
