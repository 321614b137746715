import { Hono } from "hono";
import type { AppEnv } from "../http/app-env";
import { setPageHeaders } from "../http/page-headers";
import type { OpenApiDocument } from "./document";
import { referencePage } from "./reference-page";

/**
 * `GET /openapi.json` and `GET /reference` of one API. The document is built once per app, on first request, from
 * the routes the app registered by then (all of them: this is mounted last).
 */
export function documentationRoutes(build: () => OpenApiDocument) {
  let document: OpenApiDocument | undefined;
  const current = () => (document ??= build());
  return new Hono<AppEnv>()
    .get("/openapi.json", (c) => {
      c.header("Cache-Control", "public, max-age=300");
      c.header("Access-Control-Allow-Origin", "*");
      return c.json(current());
    })
    .get("/reference", (c) => {
      const doc = current();
      const nonce = setPageHeaders(c);
      c.header("Cache-Control", "public, max-age=300");
      const errors = (doc.components.schemas as Record<string, unknown> | undefined)?.Error;
      return c.html(referencePage(nonce, doc, "openapi.json", errors));
    });
}
