import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../http/app-env";
import { operation } from "../../http/documented";
import { refuseOverLimit } from "../../rate-limits/buckets";
import { rateLimit } from "../../rate-limits/middleware";
import { clientCredentialFields, clientRequest, NO_STORE } from "../route-support";
import { OAUTH2_DIRECT_ERRORS, oauth2ErrorSchema } from "../wire";
import { startBackchannelAuthentication } from "./start";

/** `POST /oauth2/bc-authorize` (OpenID CIBA Core 1.0 §7): the client's side; the user's is the approval page. */

const answerSchema = z.object({
  auth_req_id: z
    .string()
    .describe("Poll the token endpoint with it (grant urn:openid:params:grant-type:ciba)"),
  expires_in: z.number().int(),
  interval: z.number().int().describe("Seconds between polls"),
});

export const backchannelRoutes = new Hono<AppEnv>().post(
  "/oauth2/bc-authorize",
  operation({
    summary: "Backchannel authentication (OpenID CIBA)",
    description:
      "*form*. For a confidential client an admin allowed CIBA (`backchannelTokenDeliveryMode`): asks the user " +
      "named by `login_hint` (an email or a user id) or `id_token_hint` (an ID token issued to this client) to " +
      "approve, by mail and in the account center, on a page that needs them signed in (with a step-up when " +
      "`acr_values` asks). `scope` must include `openid`. `binding_message`: 1–64 letters, digits, spaces and basic " +
      "punctuation (else `invalid_binding_message`), shown quoted. `requested_expiry`: 10–1800 s (default 300). " +
      "Ping mode needs `client_notification_token`. A hint that names nobody is answered as one that names " +
      "somebody (no user enumeration: CIBA's `unknown_user_id` is never sent). Over " +
      "`AUTH_CIBA_MAX_PENDING_PER_USER` requests waiting for one user: 403 `access_denied`. The mail failing: 503, " +
      "and nothing is left pending.",
    security: "oauth2-client",
    request: {
      target: "form",
      schema: z.object({
        scope: z.string(),
        login_hint: z.string().optional(),
        id_token_hint: z.string().optional(),
        binding_message: z.string().optional(),
        requested_expiry: z.string().optional(),
        acr_values: z.string().optional(),
        client_notification_token: z.string().optional(),
        resource: z.string().optional(),
        authorization_details: z
          .string()
          .optional()
          .describe("RFC 9396: a JSON array of the client's types; shown to the user, carried to the tokens"),
        ...clientCredentialFields,
      }),
    },
    answers: {
      200: { description: "The request's id.", schema: answerSchema },
      ...OAUTH2_DIRECT_ERRORS,
      403: {
        description: "`access_denied`: too many requests wait for this user (CIBA Core §13).",
        schema: oauth2ErrorSchema,
      },
    },
  }),
  rateLimit("OAUTH2"),
  async (c) => {
    const { params, client } = await clientRequest(c);
    const deps = c.var.deps;
    // The client's own bucket, whatever address it calls from: one client cannot flood users' mailboxes.
    await refuseOverLimit(
      c.env,
      deps.config.rateLimits,
      "OAUTH2",
      { account: `client:${client.clientId}` },
      deps.now(),
    );
    return c.json(await startBackchannelAuthentication(deps, client, params), 200, NO_STORE);
  },
);
