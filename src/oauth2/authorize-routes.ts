import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../http/app-env";
import { requireAuth } from "../http/auth";
import { operation, REDIRECT_ANSWER } from "../http/documented";
import { jsonBody } from "../http/validation";
import { LOGIN_PAGE_PATH } from "../lib/redirect";
import { AuthorizeRedirect, parseAuthorizationRequest } from "./authorize";
import { keepFetchedClient } from "./clients";
import { completeWithAccessToken, describeRequest, silentAuthorization } from "./interaction";
import { authorizationParams } from "./par";
import { oauth2Params } from "./params";
import { savePendingRequest } from "./pending-requests";
import { errorResponse } from "./redirects";
import type { Ctx } from "./route-support";
import { OAUTH2_ERRORS } from "./wire";

/**
 * `GET` and `POST /oauth2/authorize` (contract §3.5): the checked request goes on to the login page; and
 * `GET`/`POST /oauth2/login`, where an external login UI (`AUTH_OAUTH2_PROVIDER_LOGIN_URL`) reads the pending request
 * it was sent with and completes it with the person's access token.
 */

async function authorize(c: Ctx) {
  const deps = c.var.deps;
  try {
    // A `request_uri` (RFC 9126 §4) brings the request pushed before; anything else on the URL is ignored then.
    const { params, pushedBy } = await authorizationParams(deps, await oauth2Params(c));
    const { request, client } = await parseAuthorizationRequest(deps, params, { pushedBy });
    const loginUrl = deps.config.oauth2.loginUrl;
    if (request.prompt.includes("none") && loginUrl) {
      // An external login UI keeps its own session, which this server cannot see.
      const location = errorResponse(
        deps.config,
        request.redirectUri,
        "login_required",
        "prompt=none needs the built-in login page",
        request.state,
      );
      return c.redirect(location, 302);
    }
    // The request is valid: a client read from its metadata document is stored now, and not before.
    await keepFetchedClient(deps, client);
    if (request.prompt.includes("none")) return c.redirect(await silentAuthorization(c, request), 302);
    await savePendingRequest(c.env, request);
    const ui = new URL(loginUrl ?? deps.config.urls.auth(LOGIN_PAGE_PATH));
    ui.searchParams.set("request_id", request.id);
    return c.redirect(ui.toString(), 302);
  } catch (error) {
    if (error instanceof AuthorizeRedirect) return c.redirect(error.location, 302);
    throw error;
  }
}

/** The parameters the server parses itself (params.ts), for the document. */
export const authorizeQuery = z.object({
  client_id: z.string().describe("A registered client id, or the URL of a client ID metadata document"),
  redirect_uri: z.string().describe("One of the client's, exactly (native loopback URIs: any port)"),
  response_type: z.literal("code"),
  scope: z.string().optional().describe("openid profile email phone offline_access graphql"),
  state: z.string().optional(),
  nonce: z.string().optional(),
  code_challenge: z.string().optional().describe("PKCE S256; required of public clients"),
  code_challenge_method: z.literal("S256").optional(),
  resource: z.string().optional().describe("RFC 8707, repeatable: the API the tokens are for"),
  prompt: z.string().optional().describe("none, login, consent, select_account"),
  max_age: z.string().optional(),
  acr_values: z
    .string()
    .optional()
    .describe(
      "Space-separated, in order of preference; unknown values ignored. The sign-in must reach one of them (levels " +
        "`urn:edge-auth:acr:pwd` < `urn:edge-auth:acr:mfa` < `urn:edge-auth:acr:phr`, a passkey); the built-in page " +
        "steps up when it does not",
    ),
  login_hint: z.string().optional(),
  id_token_hint: z
    .string()
    .optional()
    .describe(
      "An ID token this server issued to this client (expired ones too): with prompt=none, another signed-in user " +
        "answers login_required; any other token is invalid_request",
    ),
  request_uri: z
    .string()
    .optional()
    .describe(
      "RFC 9126: the `request_uri` the pushed authorization request endpoint answered, with `client_id`; the other " +
        "parameters are then the pushed ones (any on the URL are ignored)",
    ),
  organization: z
    .string()
    .optional()
    .describe(
      "The organization (id or slug) the client asks to act in: preselected on the consent page when the person " +
        "is an active member; the tokens then carry `org_id`",
    ),
});

const AUTHORIZE_DOC = operation({
  summary: "Authorization request",
  description:
    "Starts the code flow (PKCE): a checked request goes to the login page (the built-in one, or " +
    "`AUTH_OAUTH2_PROVIDER_LOGIN_URL`) with `request_id`, and from there back to the client's `redirect_uri` with " +
    "`code`, `state` and `iss`. An unknown client (401 `invalid_client`) or a redirect URI it did not register (400 " +
    "`invalid_request`) is a JSON error, never a redirect; every later failure goes back to the client as `error`. " +
    "`prompt=none` never shows a page. With `request_uri` (RFC 9126), the request pushed to `/oauth2/par` is taken, " +
    "once, for the client that pushed it; an unknown, expired, used or another client's one is 400 " +
    "`invalid_request_uri`. A client (or a deployment, `AUTH_OAUTH2_PROVIDER_REQUIRE_PAR`) that requires PAR gets " +
    "`invalid_request` back for a request that was not pushed.",
  request: { target: "query", schema: authorizeQuery },
  answers: {
    302: REDIRECT_ANSWER("To the login page, or back to the client with `code` or `error`."),
    ...OAUTH2_ERRORS,
  },
});

const loginBody = z.object({
  requestId: z.string().min(1).max(100),
  /** The organization the person let the client act in (contract organizations.md §1); null or absent: none. */
  orgId: z.string().min(1).max(100).nullable().optional(),
});

export const authorizeRoutes = new Hono<AppEnv>()
  .get("/oauth2/authorize", AUTHORIZE_DOC, authorize)
  .post("/oauth2/authorize", AUTHORIZE_DOC, authorize)
  .get(
    "/oauth2/login",
    operation({
      summary: "Read a pending authorization request",
      description:
        "For an external login UI (`AUTH_OAUTH2_PROVIDER_LOGIN_URL`): what the request it was sent with asks, to " +
        "show the person (a device flow's request also has `deviceUserCode`). Unknown or expired: 400 " +
        "`invalid-request`.",
      request: { target: "query", schema: z.object({ request_id: z.string() }) },
      answers: {
        200: {
          description: "The request.",
          schema: z.object({
            requestId: z.string(),
            clientId: z.string(),
            clientName: z.string(),
            scopes: z.array(z.string()),
            redirectUri: z.string(),
            resources: z
              .array(z.string())
              .optional()
              .describe("RFC 8707: the resources the tokens will be for, to show the person with the scopes"),
            organization: z.string().optional(),
            acrValues: z
              .array(z.string())
              .optional()
              .describe(
                "acr_values, in order of preference: the sign-in must reach one (else 401 at completion)",
              ),
            maxAge: z.number().int().optional().describe("Seconds: the sign-in must be no older"),
            prompt: z.array(z.string()).optional().describe("login, consent, select_account"),
            deviceUserCode: z.string().optional(),
            cibaUserId: z
              .string()
              .optional()
              .describe("OpenID CIBA: only this user may complete the request"),
            bindingMessage: z
              .string()
              .nullable()
              .optional()
              .describe("OpenID CIBA: the client's message, to show quoted and attributed to the client"),
            authorizationDetails: z
              .array(z.looseObject({ type: z.string() }))
              .optional()
              .describe(
                "RFC 9396: what the person approves, each shown by its type's template (docs/agents.md)",
              ),
            authorizationDetailsTypes: z
              .array(z.looseObject({ type: z.string() }))
              .optional()
              .describe("With authorizationDetails: the client's types, their schemas and templates"),
          }),
        },
      },
    }),
    async (c) => c.json(await describeRequest(c.var.deps, c.req.query("request_id") ?? "")),
  )
  .post(
    "/oauth2/login",
    operation({
      summary: "Complete a pending authorization request",
      description:
        "The external login UI, having signed the person in and asked for consent, completes the request with the " +
        "person's access token; it then sends the browser to `redirectUri` (the client's, with `code`). `orgId` " +
        "names the organization the person let the client act in (one of their active memberships, else 403 " +
        "`not-org-member`; not for a device request); its tokens then carry it as `org_id`.",
      security: "bearer",
      answers: {
        200: { description: "Where the browser goes.", schema: z.object({ redirectUri: z.string() }) },
      },
    }),
    requireAuth,
    jsonBody(loginBody),
    async (c) => {
      const { requestId, orgId } = c.req.valid("json");
      return c.json(await completeWithAccessToken(c.var.deps, requestId, c.var.auth!, orgId ?? null));
    },
  );
