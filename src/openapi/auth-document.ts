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

export function authDocument(app: Hono<AppEnv>, config: Config): OpenApiDocument {
  return buildDocument(app as never, {
    title: "Auth API",
    version: pkg.version,
    description:
      "Wire-compatible with Nhost Auth. Bearer tokens are the access " +
      "tokens of a session; the admin API under /admin needs the header x-hasura-admin-secret.",
    serverUrl: config.AUTH_SERVER_URL,
    errorResponse: {
      description: "An error: `error` is one of the codes of components.schemas.Error, each with its status.",
      content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
    },
    extraComponents: {
      schemas: { Error: authErrorSchema() },
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
        adminSecret: { type: "apiKey", in: "header", name: "x-hasura-admin-secret" },
      },
    },
  });
}
