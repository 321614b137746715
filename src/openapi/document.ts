import type { Hono } from "hono";
import { COMPOSED_HANDLER } from "hono/utils/constants";
import { z } from "zod";
import {
  type AnswerDoc,
  headerOf,
  type OperationDoc,
  operationOf,
  requestPartOf,
  type Security,
} from "../http/documented";

/** The part of OpenAPI 3.1 this service writes. */
export interface OpenApiDocument {
  openapi: "3.1.0";
  info: { title: string; version: string; description: string };
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: Record<string, unknown>;
}

export interface MediaObject {
  schema?: unknown;
  example?: unknown;
}

export interface ResponseObject {
  description: string;
  content?: Record<string, MediaObject>;
  headers?: Record<string, unknown>;
  $ref?: string;
}

export interface Operation {
  operationId: string;
  tags: string[];
  summary: string;
  description: string;
  security?: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: { required: boolean; content: Record<string, MediaObject> };
  responses: Record<string, ResponseObject>;
}

export interface Parameter {
  name: string;
  in: "path" | "query" | "header";
  required: boolean;
  description?: string;
  schema: unknown;
}

export interface DocumentInput {
  title: string;
  version: string;
  description: string;
  serverUrl: string;
  /** How this API answers an error: its response object (schema and the codes it may carry). */
  errorResponse: ResponseObject;
  /** Routes that are pages for people (consoles, login pages), not API: left out of the document. */
  exclude?: RegExp;
  extraComponents?: Record<string, unknown>;
}

/** `/users/:id`, `/dev/inbox/:id{[0-9]+}` → `/users/{id}`, `/dev/inbox/{id}`. */
export function openApiPath(honoPath: string): string {
  return honoPath.replace(/:([A-Za-z0-9_]+)(\{[^}]*(\}[^/]*)?\})?/g, "{$1}");
}

/** The JSON Schema of what a client sends (zod's own conversion, input side: before defaults and transforms). */
export function jsonSchemaOf(schema: z.ZodType, io: "input" | "output" = "input"): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Record<
    string,
    unknown
  >;
  return rest;
}

function queryParameters(schema: z.ZodType): Parameter[] {
  const json = jsonSchemaOf(schema) as {
    properties?: Record<string, { description?: string }>;
    required?: string[];
  };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: "query",
    required: json.required?.includes(name) ?? false,
    ...(property.description ? { description: property.description } : {}),
    schema: property,
  }));
}

/**
 * The group an operation is listed under: its first path segment (`/signin/…` → signin); discovery documents and key
 * sets under "discovery", one-segment service paths (`/healthz`, `/version`, `/openapi.json`) under "system".
 */
function tagOf(path: string): string {
  if (path.startsWith("/.well-known/") || path === "/oauth2/jwks") return "discovery";
  const segments = path.split("/").filter((segment) => segment && !segment.startsWith("{"));
  if (segments.length <= 1 && /^(healthz|version|openapi\.json)?$/.test(segments[0] ?? "")) return "system";
  return segments[0]!;
}

/**
 * The order a reader meets the groups in (the reference page, issue 34): what a new user of the API does first (sign
 * up, sign in, tokens, their user), then the other flows, storage's files, the OAuth2 server, discovery and system,
 * the admin API last. A group not named here goes in the middle (before oauth2), by name.
 */
const TAG_ORDER = [
  "signup",
  "signin",
  "token",
  "user",
  "signout",
  "verify",
  "mfa",
  "elevate",
  "pat",
  "link",
  "unlock",
  "files",
  "buckets",
  "orgs",
  "sso",
  "scim",
  "oauth2",
  "discovery",
  "dev",
  "system",
  "ops",
  "admin",
];

export function compareTags(a: string, b: string): number {
  const rank = (tag: string) => {
    const at = TAG_ORDER.indexOf(tag);
    return at === -1 ? TAG_ORDER.indexOf("oauth2") - 0.5 : at;
  };
  return rank(a) - rank(b) || a.localeCompare(b);
}

/** OpenAPI security requirements (the schemes are the document's components). */
const SECURITY: Record<Security, Record<string, string[]>[]> = {
  none: [],
  bearer: [{ bearer: [] }],
  "optional-bearer": [{}, { bearer: [] }],
  elevated: [{ bearer: [] }],
  "admin-secret": [{ adminSecret: [] }],
  "oauth2-client": [{ clientBasic: [] }, {}],
  "oauth2-token": [{ oauth2Token: [] }],
};

const MEDIA: Record<NonNullable<AnswerDoc["media"]>, string | null> = {
  json: "application/json",
  scim: "application/scim+json",
  html: "text/html",
  binary: "application/octet-stream",
  text: "text/plain",
  "saml-metadata": "application/samlmetadata+xml",
  redirect: null,
  empty: null,
};

const FORMAT_EXAMPLES: Record<string, string> = {
  uuid: "2c5fb4bd-5a43-4ae8-8e0b-0e2b1c2b6f0e",
  "date-time": "2026-11-23T10:00:00.000Z",
  email: "ana@example.com",
  uri: "https://app.example.com/callback",
};

/**
 * An example value for a JSON Schema: its own `examples` where it has some (zod `.meta({ examples })`), else one
 * made from its parts, so every documented answer shows one.
 */
export function exampleFor(schema: unknown, depth = 0, name = ""): unknown {
  const s = (schema ?? {}) as Record<string, unknown>;
  if (Array.isArray(s.examples) && s.examples.length > 0) return s.examples[0];
  // A password that the service's own rules accept, so "try it" works with the example as it stands.
  if (s.type === "string" && /password/i.test(name)) return "correct horse battery staple";
  if ("const" in s) return s.const;
  if (Array.isArray(s.enum)) return s.enum[0];
  if (depth > 8) return null;
  const choices = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (choices?.length) {
    const concrete = choices.find((choice) => (choice as { type?: string }).type !== "null") ?? choices[0];
    return exampleFor(concrete, depth + 1, name);
  }
  switch (s.type) {
    case "object": {
      const properties = (s.properties ?? {}) as Record<string, unknown>;
      const required = new Set((s.required as string[] | undefined) ?? Object.keys(properties));
      return Object.fromEntries(
        Object.entries(properties)
          .filter(([name]) => required.has(name))
          .map(([key, property]) => [key, exampleFor(property, depth + 1, key)]),
      );
    }
    case "array":
      return [exampleFor(s.items, depth + 1)];
    case "string":
      return FORMAT_EXAMPLES[s.format as string] ?? "string";
    case "integer":
    case "number":
      return 0;
    case "boolean":
      return true;
    case "null":
      return null;
    default:
      return {};
  }
}

/**
 * A page, a text or a file is still a declared body: a string (a client or a fuzzer reading the document otherwise
 * sees a media type with nothing in it, which the OpenAPI-driven fuzz of issue 42 reported as "no declared answer").
 */
const BODY_AS_TEXT: Partial<Record<NonNullable<AnswerDoc["media"]>, Record<string, string>>> = {
  html: { type: "string" },
  text: { type: "string" },
  "saml-metadata": { type: "string" },
  binary: { type: "string", format: "binary" },
};

function responseOf(answer: AnswerDoc): ResponseObject {
  const media = answer.media ?? (answer.schema ? "json" : "empty");
  const type = MEDIA[media];
  const schema = answer.schema ? jsonSchemaOf(answer.schema, "output") : BODY_AS_TEXT[media];
  const example = answer.example ?? (answer.schema ? exampleFor(schema) : undefined);
  return {
    description: answer.description,
    ...(media === "redirect"
      ? { headers: { Location: { description: "Where the browser goes next", schema: { type: "string" } } } }
      : {}),
    ...(type
      ? {
          content: {
            [type]: {
              ...(schema ? { schema } : {}),
              ...(example !== undefined ? { example } : {}),
            },
          },
        }
      : {}),
  };
}

function operationId(method: string, path: string): string {
  return `${method}${path.replace(/[{}]/g, "").replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string) => (c ?? "").toUpperCase())}`;
}

/** What the route documents, or a placeholder that the suite's completeness test refuses (test/openapi). */
const UNDOCUMENTED: OperationDoc = { summary: "", description: "", answers: {} };

/**
 * The OpenAPI document of a Hono app, read off the routes it registered: every method and path, its path parameters,
 * the request schema of each validating middleware, and the operation's words and answers (http/documented.ts).
 */
export function buildDocument(app: Hono<never>, input: DocumentInput): OpenApiDocument {
  const paths: OpenApiDocument["paths"] = {};
  const docs = new Map<Operation, OperationDoc>();
  for (const route of app.routes) {
    if (route.method === "ALL" || route.path.includes("*")) continue;
    const path = openApiPath(route.path);
    if (input.exclude?.test(path)) continue;
    const method = route.method.toLowerCase();
    const item = paths[path] ?? {};
    paths[path] = item;
    const operation: Operation = item[method] ?? {
      operationId: operationId(method, path),
      tags: [tagOf(path)],
      summary: "",
      description: "",
      ...(path.includes("{")
        ? {
            parameters: [...path.matchAll(/\{([^}]+)\}/g)].map(
              ([, name]): Parameter => ({
                name: name!,
                in: "path",
                required: true,
                schema: { type: "string" },
              }),
            ),
          }
        : {}),
      responses: {},
    };
    item[method] = operation;
    if (!docs.has(operation)) docs.set(operation, UNDOCUMENTED);
    // A sub-app with its own error handler has each of its handlers wrapped by `route()`; the documentation is on
    // the handler inside.
    const handler = (route.handler as unknown as Record<string, unknown>)[COMPOSED_HANDLER] ?? route.handler;
    const header = headerOf(handler);
    if (header) {
      operation.parameters = [
        ...(operation.parameters ?? []),
        {
          name: header.name,
          in: "header",
          required: false,
          description: header.description,
          schema: { type: "string" },
        },
      ];
    }
    const doc = operationOf(handler);
    if (doc) docs.set(operation, doc);
    const part = requestPartOf(handler) ?? doc?.request;
    if (!part) continue;
    if (part.target === "query") {
      operation.parameters = [...(operation.parameters ?? []), ...queryParameters(part.schema)];
    } else {
      const type = {
        form: "application/x-www-form-urlencoded",
        multipart: "multipart/form-data",
        json: "application/json",
      }[part.target];
      const schema = jsonSchemaOf(part.schema);
      operation.requestBody = {
        required: true,
        content: { [type]: { schema, example: exampleFor(schema) } },
      };
    }
  }
  for (const [operation, doc] of docs) {
    operation.summary = doc.summary;
    operation.description = doc.description;
    if (doc.security && doc.security !== "none") operation.security = SECURITY[doc.security];
    const answers = Object.entries(doc.answers).map(([status, answer]) => [status, responseOf(answer)]);
    operation.responses = { ...Object.fromEntries(answers), default: input.errorResponse };
  }
  return {
    openapi: "3.1.0",
    info: { title: input.title, version: input.version, description: input.description },
    servers: [{ url: input.serverUrl }],
    paths,
    components: input.extraComponents ?? {},
  };
}
