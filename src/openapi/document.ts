import type { Hono } from "hono";
import { z } from "zod";
import { requestPartOf } from "../http/documented";

/** The part of OpenAPI 3.1 this service writes. */
export interface OpenApiDocument {
  openapi: "3.1.0";
  info: { title: string; version: string; description: string };
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: Record<string, unknown>;
}

export interface Operation {
  operationId: string;
  tags: string[];
  summary: string;
  parameters?: Parameter[];
  requestBody?: { required: boolean; content: Record<string, { schema: unknown }> };
  responses: Record<string, unknown>;
}

interface Parameter {
  name: string;
  in: "path" | "query";
  required: boolean;
  schema: unknown;
}

export interface DocumentInput {
  title: string;
  version: string;
  description: string;
  serverUrl: string;
  /** How this API answers an error: its response object (schema and the codes it may carry). */
  errorResponse: unknown;
  extraComponents?: Record<string, unknown>;
}

/** `/users/:id`, `/dev/inbox/:id{[0-9]+}` → `/users/{id}`, `/dev/inbox/{id}`. */
export function openApiPath(honoPath: string): string {
  return honoPath.replace(/:([A-Za-z0-9_]+)(\{[^}]*(\}[^/]*)?\})?/g, "{$1}");
}

/** The JSON Schema of what a client sends (zod's own conversion, input side: before defaults and transforms). */
export function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<
    string,
    unknown
  >;
  return rest;
}

function queryParameters(schema: z.ZodType): Parameter[] {
  const json = jsonSchemaOf(schema) as { properties?: Record<string, unknown>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: "query",
    required: json.required?.includes(name) ?? false,
    schema: property,
  }));
}

const tagOf = (path: string) =>
  path.split("/").find((segment) => segment && !segment.startsWith("{")) ?? "system";

/**
 * The OpenAPI document of a Hono app, read off the routes it registered: every method and path, its path
 * parameters, and the request schema of each validating middleware on it (metadata.ts). Routes are what the app
 * serves, so a route cannot be missing from the document, and a schema cannot differ from the one it validates with.
 */
export function buildDocument(app: Hono<never>, input: DocumentInput): OpenApiDocument {
  const paths: OpenApiDocument["paths"] = {};
  for (const route of app.routes) {
    if (route.method === "ALL" || route.path.includes("*")) continue;
    const path = openApiPath(route.path);
    const method = route.method.toLowerCase();
    const item = paths[path] ?? {};
    paths[path] = item;
    const operation = item[method] ?? {
      operationId: `${method}${path.replace(/[{}]/g, "").replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string) => (c ?? "").toUpperCase())}`,
      tags: [tagOf(path)],
      summary: `${route.method} ${path}`,
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
      responses: {
        "2XX": { description: "Success: the answer the contract describes for this operation." },
        default: input.errorResponse,
      },
    };
    item[method] = operation;
    const part = requestPartOf(route.handler);
    if (!part) continue;
    if (part.target === "query") {
      operation.parameters = [...(operation.parameters ?? []), ...queryParameters(part.schema)];
    } else {
      operation.requestBody = {
        required: true,
        content: { "application/json": { schema: jsonSchemaOf(part.schema) } },
      };
    }
  }
  return {
    openapi: "3.1.0",
    info: { title: input.title, version: input.version, description: input.description },
    servers: [{ url: input.serverUrl }],
    paths,
    components: input.extraComponents ?? {},
  };
}
