import { type Context, Hono } from "hono";
import { createMiddleware } from "hono/factory";
import { findUserById } from "../../auth";
import { AppError } from "../../errors";
import type { AppEnv } from "../../http/app-env";
import { documentedHeader, NO_CONTENT, operation } from "../../http/documented";
import { actorOf, impersonationRefusal } from "../../http/impersonation";
import { importedSystemOf, verifyUserAccessToken } from "../../http/imported-tokens";
import { turnstile, turnstileHeaderDoc } from "../../http/turnstile";
import { bodyText } from "../../http/validation";
import { rateLimit } from "../../rate-limits/middleware";
import { OAuth2Error } from "../errors";
import {
  clientInformationSchema,
  clientMetadataSchema,
  oauth2ErrorSchema,
  registrationAnswerSchema,
  replacedRegistrationSchema,
} from "../wire";
import {
  deleteRegistration,
  managedClient,
  metadataOf,
  registerClient,
  replaceRegistration,
} from "./registration";

/**
 * `POST /oauth2/register` (RFC 7591) and `GET`/`PUT`/`DELETE /oauth2/register/{clientId}` (RFC 7592), contract §3.6.
 * Errors are RFC 7591 §3.2.2 bodies (`invalid_client_metadata`, `invalid_redirect_uri`); the management calls answer
 * 401 `invalid_token` to anything but the client's own registration access token.
 */

type Ctx = Context<AppEnv>;

/** Registration answers hold a secret and a token: never stored by a cache (RFC 7591 §3.2.1). */
const noStore = { "Cache-Control": "no-store", Pragma: "no-cache" };

function bearerOf(c: Ctx): string | undefined {
  return /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "")?.[1];
}

/** The request's JSON object, or `invalid_client_metadata` saying why not. */
async function metadataBody(c: Ctx): Promise<unknown> {
  const type = c.req.header("content-type")?.split(";")[0]?.trim().toLowerCase();
  if (type !== "application/json") {
    throw new OAuth2Error(
      "invalid_client_metadata",
      "the body must be JSON (Content-Type: application/json)",
    );
  }
  try {
    const body: unknown = JSON.parse(await bodyText(c));
    if (body !== null && typeof body === "object" && !Array.isArray(body)) return body;
  } catch {}
  throw new OAuth2Error("invalid_client_metadata", "the body must be a JSON object of client metadata");
}

/** Registration switched off (the default): 403 before anything is counted or read. */
const registrationOn = createMiddleware<AppEnv>(async (c, next) => {
  if (c.var.config.oauth2.registration === "off") {
    throw new OAuth2Error(
      "access_denied",
      "client registration is switched off on this server",
      undefined,
      undefined,
      403,
    );
  }
  await next();
});

/**
 * Who registers, by `AUTH_OAUTH2_PROVIDER_REGISTRATION`: anyone (`open`), or a signed-in user whose access token
 * comes as the bearer (`authenticated`); the client then belongs to that user. An anonymous user has no account to
 * answer for a client.
 */
async function registrant(c: Ctx) {
  const { config } = c.var;
  if (config.oauth2.registration === "open") return { mode: "open" } as const;
  const token = bearerOf(c);
  const payload = token ? await verifyUserAccessToken(c.var.deps, token) : null;
  // An old system's token reads only (supabase.md §6), an impersonation's creates nothing (operators.md §1): neither
  // registers a client.
  if (importedSystemOf(payload) || actorOf(payload)) {
    throw new OAuth2Error(
      "access_denied",
      actorOf(payload)
        ? impersonationRefusal("registering a client").message
        : "a token of the previous system cannot change credentials",
      undefined,
      undefined,
      403,
    );
  }
  const user = payload ? await findUserById(c.var.deps.shards, payload.sub) : undefined;
  if (!user || user.disabled) {
    throw new OAuth2Error("invalid_token", "registering a client needs a signed-in user's access token");
  }
  if (user.isAnonymous) {
    throw new OAuth2Error(
      "access_denied",
      "an anonymous user cannot register a client",
      undefined,
      undefined,
      403,
    );
  }
  return { mode: "authenticated", userId: user.id } as const;
}

const clientIdOf = (c: Ctx) => c.req.param("clientId") ?? "";

const checkTurnstile = turnstile("oauth2-registration");

/** Turnstile on registration (when configured), its refusals in RFC 7591's error shape. */
const registrationTurnstile = documentedHeader(
  createMiddleware<AppEnv>(async (c, next) => {
    try {
      await checkTurnstile(c, async () => {});
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      if (error.code === "turnstile-required") throw new OAuth2Error("invalid_request", error.message);
      if (error.code === "turnstile-failed")
        throw new OAuth2Error("access_denied", error.message, undefined, error.reason, 403);
      throw new OAuth2Error("temporarily_unavailable", error.message, undefined, error.reason, 503);
    }
    return next();
  }),
  turnstileHeaderDoc("oauth2-registration"),
);

export const registrationRoutes = new Hono<AppEnv>()
  // Counted per address before anything else is read: a flood registers nothing and learns nothing.
  .post(
    "/oauth2/register",
    operation({
      summary: "Register a client (RFC 7591)",
      description:
        "An MCP host, CLI or app registers itself: RFC 7591 metadata in, the client id (and secret for confidential " +
        "clients) and a registration access token out; grant types `authorization_code`, `refresh_token` and the " +
        "device grant (`client_credentials` is for clients an admin creates or allows). Who may: " +
        "`AUTH_OAUTH2_PROVIDER_REGISTRATION` (`off`: 403 " +
        "`access_denied`; `authenticated`: a signed-in user's bearer; `open`). Redirect URIs are https, loopback http " +
        "or a reverse-domain scheme for native clients; a client that names no type and has no https redirect URI is " +
        "native. Errors `invalid_redirect_uri`, `invalid_client_metadata`; a flood from one address: 429.",
      security: "optional-bearer",
      request: { target: "json", schema: clientMetadataSchema },
      answers: {
        201: {
          description: "The client's information, secret and registration token.",
          schema: registrationAnswerSchema,
        },
        400: {
          description: "`invalid_client_metadata` or `invalid_redirect_uri`.",
          schema: oauth2ErrorSchema,
        },
        401: { description: "`invalid_token` (authenticated mode).", schema: oauth2ErrorSchema },
        403: {
          description:
            "`access_denied`: registration is off, the user is anonymous, or a Turnstile challenge was not passed.",
          schema: oauth2ErrorSchema,
        },
        503: {
          description: "`temporarily_unavailable`: the Turnstile challenge cannot be checked right now.",
          schema: oauth2ErrorSchema,
        },
      },
    }),
    registrationOn,
    rateLimit("REGISTRATION"),
    registrationTurnstile,
    async (c) => {
      const registeredBy = await registrant(c);
      const answer = await registerClient(c.var.deps, await metadataBody(c), registeredBy);
      c.var.deps.audit({
        type: "oauth2.client-registered",
        userId: registeredBy.mode === "authenticated" ? registeredBy.userId : null,
        detail: { clientId: answer.client_id, clientName: answer.client_name, mode: registeredBy.mode },
      });
      return c.json(answer, 201, noStore);
    },
  )
  .get(
    "/oauth2/register/:clientId",
    operation({
      summary: "Read a registration (RFC 7592)",
      description:
        "With the registration access token as the bearer. Never shows the secret or the token again.",
      security: "oauth2-token",
      answers: {
        200: { description: "The client's information.", schema: clientInformationSchema },
        401: { description: "`invalid_token`.", schema: oauth2ErrorSchema },
      },
    }),
    async (c) => {
      const client = await managedClient(c.var.deps, clientIdOf(c), bearerOf(c));
      return c.json(metadataOf(c.var.deps, client), 200, noStore);
    },
  )
  .put(
    "/oauth2/register/:clientId",
    operation({
      summary: "Replace a registration (RFC 7592)",
      description:
        "The full metadata, with the client's own `client_id`; a public client stays public and a confidential one " +
        "confidential. The answer holds a new `registration_access_token`: the one this request used stops working. " +
        "`client_credentials` is kept only where an admin allowed it.",
      security: "oauth2-token",
      request: { target: "json", schema: clientMetadataSchema },
      answers: {
        200: {
          description: "The client's information and its new registration access token.",
          schema: replacedRegistrationSchema,
        },
        400: {
          description: "`invalid_client_metadata` or `invalid_redirect_uri`.",
          schema: oauth2ErrorSchema,
        },
        401: { description: "`invalid_token`.", schema: oauth2ErrorSchema },
      },
    }),
    async (c) => {
      const client = await managedClient(c.var.deps, clientIdOf(c), bearerOf(c));
      return c.json(await replaceRegistration(c.var.deps, client, await metadataBody(c)), 200, noStore);
    },
  )
  .delete(
    "/oauth2/register/:clientId",
    operation({
      summary: "Delete a registration (RFC 7592)",
      description: "The client goes with its grants, codes and consents; its tokens stop working.",
      security: "oauth2-token",
      answers: {
        204: NO_CONTENT("Deleted."),
        401: { description: "`invalid_token`.", schema: oauth2ErrorSchema },
      },
    }),
    async (c) => {
      const deps = c.var.deps;
      const client = await managedClient(deps, clientIdOf(c), bearerOf(c));
      await deleteRegistration(deps, client);
      deps.audit({
        type: "oauth2.client-deleted",
        userId: client.registeredByUserId,
        detail: { clientId: client.clientId, by: "registration-token" },
      });
      return c.body(null, 204, noStore);
    },
  );
