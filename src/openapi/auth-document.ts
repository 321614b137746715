import type { Hono } from "hono";
import pkg from "../../package.json";
import type { Config } from "../config";
import { ERRORS } from "../errors";
import type { AppEnv } from "../http/app-env";
import { buildDocument, type OpenApiDocument } from "./document";

/**
 * Contract §4's error body, one alternative per code with its status: the document lists every code the auth API
 * can answer with, from the same catalogue the error handler uses.
 */
export function authErrorSchema() {
  return {
    type: "object",
    required: ["status", "message", "error"],
    oneOf: Object.entries(ERRORS).map(([code, [status, message]]) => ({
      title: code,
      description: message,
      properties: { error: { const: code }, status: { const: status }, message: { type: "string" } },
    })),
  };
}

/**
 * Pages for people (the console, the OAuth2 login, device, CIBA approval and invitation pages, the hosted sign-in, sign-up and reset
 * pages, the account center, the development inbox): not API. Only the hosted pages' exact paths: `/signin/…` and
 * `/signup/…` are API.
 */
const PAGES =
  /^\/(admin\/console|oauth2\/interaction|oauth2\/device$|oauth2\/ciba$|oauth2\/invitation$|(signin|signup|reset)$|account(\/|$)|setup(\/|$)|dev\/(inbox|landing)|reference$)/;

export function authDocument(app: Hono<AppEnv>, config: Config): OpenApiDocument {
  return buildDocument(app as never, {
    title: "Auth API",
    version: pkg.version,
    description:
      "Wire-compatible with Nhost Auth (`@nhost/nhost-js` works unchanged). Bodies are JSON unless an operation says " +
      "*form*. Protected operations take `Authorization: Bearer <accessToken>` (a session's access token); the admin " +
      "API under /admin needs the header `x-hasura-admin-secret`. Errors are `{status, message, error}` with the " +
      "codes listed below; the OAuth2 endpoints answer RFC 6749's `{error, error_description}` instead.",
    serverUrl: config.urls.server,
    exclude: PAGES,
    errorResponse: {
      description: "An error: `error` is one of the codes of components.schemas.Error, each with its status.",
      content: {
        "application/json": {
          schema: { $ref: "#/components/schemas/Error" },
          example: { status: 400, message: "email: Invalid email address", error: "invalid-request" },
        },
      },
    },
    extraComponents: {
      schemas: { Error: authErrorSchema() },
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT",
          description: "A session's access token (`session.accessToken`), 15 minutes by default.",
        },
        adminSecret: { type: "apiKey", in: "header", name: "x-hasura-admin-secret" },
        clientBasic: {
          type: "http",
          scheme: "basic",
          description:
            "An OAuth2 client's id and secret (client_secret_basic); client_secret_post sends them in the form.",
        },
        oauth2Token: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "at+jwt",
          description: "An access token this server issued to an OAuth2 client.",
        },
      },
    },
  });
}
