import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../http/app-env";
import { operation } from "../http/documented";
import { setPageHeaders } from "../http/page-headers";
import type { OpenApiDocument } from "./document";
import { referencePage } from "./reference-page";

const DOCUMENT_DOC = {
  summary: "This OpenAPI document",
  description:
    "The OpenAPI 3.1 document of this API, built from the routes the service runs: every operation, its request " +
    "schema, its answers with their schemas and examples, and the error codes. Any origin may read it (for code " +
    "generators and API tools). The same document, rendered for people, is at `reference`.",
  answers: {
    200: {
      description: "The document.",
      schema: z
        .looseObject({
          openapi: z.literal("3.1.0"),
          info: z.looseObject({ title: z.string(), version: z.string() }),
          paths: z.record(z.string(), z.unknown()),
        })
        .meta({ examples: [{ openapi: "3.1.0", info: { title: "Auth API", version: "0.1.0" }, paths: {} }] }),
    },
  },
};

/**
 * `GET /openapi.json` and `GET /reference` of one API. The document is built once per app, on first request, from
 * the routes the app registered by then (all of them: this is mounted last).
 */
export function documentationRoutes(build: () => OpenApiDocument) {
  let document: OpenApiDocument | undefined;
  const current = () => (document ??= build());
  return new Hono<AppEnv>()
    .get("/openapi.json", operation(DOCUMENT_DOC), (c) => {
      c.header("Cache-Control", "public, max-age=300");
      c.header("Access-Control-Allow-Origin", "*");
      return c.json(current());
    })
    .get("/reference", (c) => {
      const doc = current();
      // Its own script sends "try it" requests to this origin only.
      const nonce = setPageHeaders(c, { script: true, connect: true });
      // A fresh nonce per answer: a cached page would keep one.
      c.header("Cache-Control", "no-store");
      const errors = (doc.components.schemas as Record<string, unknown> | undefined)?.Error;
      const query = (c.req.query("q") ?? "").slice(0, 200);
      return c.html(referencePage({ nonce, doc, documentUrl: "openapi.json", errors, query }));
    });
}
