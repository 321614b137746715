import type { Hono } from "hono";
import pkg from "../../package.json";
import type { Config } from "../config";
import type { AppEnv } from "../http/app-env";
import { buildDocument, type OpenApiDocument } from "./document";

export function storageDocument(app: Hono<AppEnv>, config: Config): OpenApiDocument {
  return buildDocument(app as never, {
    title: "Storage API",
    version: pkg.version,
    description:
      "Wire-compatible with Nhost Storage: files in R2, downloads with conditions, " +
      "ranges and image transformation, presigned URLs, buckets.",
    serverUrl: `${config.urls.storage}${config.urls.storagePrefix}`,
    extraComponents: {
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT",
          description: "A session's access token.",
        },
        adminSecret: { type: "apiKey", in: "header", name: "x-hasura-admin-secret" },
      },
    },
    exclude: /^\/reference$/,
    errorResponse: {
      description: "An error (storage contract §3.1): the message also comes as the X-Error header.",
      content: {
        "application/json": {
          example: { error: { message: "file not found" } },
          schema: {
            type: "object",
            required: ["error"],
            properties: {
              error: {
                type: "object",
                required: ["message"],
                properties: { message: { type: "string" }, data: {} },
              },
            },
          },
        },
      },
    },
  });
}
