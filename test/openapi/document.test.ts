import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createAuthApp } from "../../src/app";
import { getConfig } from "../../src/config";
import { ERRORS } from "../../src/errors";
import { requestPartOf } from "../../src/http/documented";
import { jsonSchemaOf, type OpenApiDocument, openApiPath } from "../../src/openapi/document";
import { createStorageApp } from "../../src/storage/app";
import { expectError, SERVER, service } from "../helpers";

const svc = service({ AUTH_OAUTH2_PROVIDER_ENABLED: "true" });

async function documentAt(url: string): Promise<OpenApiDocument> {
  const response = await svc.request("GET", url);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/application\/json/);
  return (await response.json()) as OpenApiDocument;
}

/** The routes an app registered, as (method, OpenAPI path), with the handlers on each. */
function registered(routes: { method: string; path: string; handler: unknown }[]) {
  const byOperation = new Map<string, unknown[]>();
  for (const route of routes) {
    if (route.method === "ALL" || route.path.includes("*")) continue;
    const key = `${route.method.toLowerCase()} ${openApiPath(route.path)}`;
    byOperation.set(key, [...(byOperation.get(key) ?? []), route.handler]);
  }
  return byOperation;
}

describe("OpenAPI documents", () => {
  it("the auth document has every route the auth app registers, each with the schema the route validates with", async () => {
    const doc = await documentAt("/openapi.json");
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.servers[0]!.url).toBe(`${SERVER}/auth/v1`);
    const app = createAuthApp(getConfig({ ...env, AUTH_OAUTH2_PROVIDER_ENABLED: "true" }));
    const operations = registered(app.routes);
    expect(operations.size).toBeGreaterThan(80);
    let schemas = 0;
    for (const [key, handlers] of operations) {
      const [method, path] = key.split(" ") as [string, string];
      const operation = doc.paths[path]?.[method];
      expect(operation, key).toBeDefined();
      for (const handler of handlers) {
        const part = requestPartOf(handler);
        if (!part) continue;
        schemas++;
        const expected = jsonSchemaOf(part.schema);
        if (part.target === "query") {
          for (const name of Object.keys((expected as { properties?: object }).properties ?? {})) {
            expect(
              operation!.parameters?.some((p) => p.name === name && p.in === "query"),
              `${key} ?${name}`,
            ).toBe(true);
          }
        } else {
          expect(operation!.requestBody?.content["application/json"]?.schema, key).toEqual(expected);
        }
      }
    }
    expect(schemas).toBeGreaterThan(40);
    // No documented operation the app does not serve.
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of Object.keys(item))
        expect(operations.has(`${method} ${path}`), `${method} ${path}`).toBe(true);
    }
  });

  it("the documented schema is what the route enforces: a field it requires is refused when missing", async () => {
    const doc = await documentAt("/openapi.json");
    const schema = doc.paths["/signup/email-password"]!.post!.requestBody!.content["application/json"]!
      .schema as {
      required: string[];
    };
    expect(schema.required).toEqual(expect.arrayContaining(["email", "password"]));
    await expectError(
      await svc.post("/signup/email-password", { password: "long enough password" }),
      400,
      "invalid-request",
    );
    const admin = doc.paths["/admin/users/{id}"]!.patch!.requestBody!.content["application/json"]!.schema as {
      properties: Record<string, unknown>;
      additionalProperties: boolean;
    };
    expect(Object.keys(admin.properties)).toEqual(
      expect.arrayContaining(["disabled", "roles", "defaultRole"]),
    );
    expect(admin.additionalProperties).toBe(false);
  });

  it("lists every error code of contract §4 with its status", async () => {
    const doc = await documentAt("/openapi.json");
    const error = (
      doc.components.schemas as Record<
        string,
        { oneOf: { properties: Record<string, { const: unknown }> }[] }
      >
    ).Error!;
    const documented = Object.fromEntries(
      error.oneOf.map((alternative) => [
        alternative.properties.error!.const,
        alternative.properties.status!.const,
      ]),
    );
    expect(documented).toEqual(
      Object.fromEntries(Object.entries(ERRORS).map(([code, [status]]) => [code, status])),
    );
  });

  it("the storage document has every route of the storage app", async () => {
    const doc = await documentAt(`${SERVER}/storage/v1/openapi.json`);
    const app = createStorageApp(() => null);
    const operations = registered(app.routes);
    for (const key of operations.keys()) {
      const [method, path] = key.split(" ") as [string, string];
      expect(doc.paths[path]?.[method], key).toBeDefined();
    }
    expect(doc.paths["/files/{id}"]?.get).toBeDefined();
    expect(doc.paths["/buckets"]?.post?.requestBody).toBeDefined();
  });

  it("the reference page renders every operation, with no script, under a strict CSP", async () => {
    const doc = await documentAt("/openapi.json");
    const response = await svc.get("/reference");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-security-policy")).toMatch(/default-src 'none'/);
    const page = await response.text();
    expect(page).not.toContain("<script");
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const operation of Object.values(item))
        expect(page, path).toContain(`id="${operation.operationId}"`);
    }
  });
});
