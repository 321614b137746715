import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ERRORS } from "../../src/errors";
import { requestPartOf } from "../../src/http/documented";
import { jsonSchemaOf, type OpenApiDocument, openApiPath } from "../../src/openapi/document";
import { createAuthApp } from "../../src/runtime/app";
import { getConfig } from "../../src/runtime/config";
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

const PAGE =
  /^\/(admin\/console|oauth2\/interaction|oauth2\/device$|oauth2\/ciba$|oauth2\/invitation$|(signin|signup|reset)$|account(\/|$)|setup(\/|$)|dev\/(inbox|landing)|reference$)/;

/** Pages for people: served by the app, never in the API's document. */
const AUTH_PAGES = [
  "get /admin/console",
  "get /oauth2/interaction",
  "post /oauth2/interaction/consent",
  "get /oauth2/device",
  "get /oauth2/ciba",
  // The hosted pages of the app; `POST /signin/email-password` and the like are API (checked by the document test).
  "get /signin",
  "get /signup",
  "get /reset",
  // The account center (contract §13) and its forms.
  "get /account",
  "post /account/password",
  // The setup link's pages (contract operators.md §5).
  "get /setup",
  "post /setup/domains",
  "get /dev/inbox",
  "get /dev/landing",
  "get /reference",
];

/** Every documented operation says what it is and what it answers: words, a success answer, schemas, examples. */
function expectComplete(doc: OpenApiDocument) {
  let operations = 0;
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const key = `${method} ${path}`;
      operations++;
      expect(operation.summary.length, `${key}: summary`).toBeGreaterThan(3);
      expect(operation.summary, `${key}: a summary in words`).not.toMatch(/^(GET|POST|PUT|PATCH|DELETE) \//);
      expect(operation.description.length, `${key}: description`).toBeGreaterThan(20);
      const statuses = Object.keys(operation.responses);
      expect(
        statuses.some((status) => /^[23]\d\d$/.test(status)),
        `${key}: a success answer (${statuses.join(", ")})`,
      ).toBe(true);
      expect(statuses, `${key}: a generic 2XX`).not.toContain("2XX");
      for (const [status, answer] of Object.entries(operation.responses)) {
        expect(answer.description, `${key} ${status}`).toBeTruthy();
        for (const [type, media] of Object.entries(answer.content ?? {})) {
          // A page, a text or an XML document is declared too: a string (the OpenAPI-driven fuzz of issue 42 read
          // `text/html: {}` on GET/POST /unlock and the SAML metadata as no declared answer).
          expect(media.schema, `${key} ${status} ${type}: schema`).toBeDefined();
          if (type !== "application/json") continue;
          expect(media.example, `${key} ${status}: example`).toBeDefined();
        }
      }
      for (const [type, media] of Object.entries(operation.requestBody?.content ?? {}))
        expect(media.example, `${key} ${type}: request example`).toBeDefined();
    }
  }
  return operations;
}

describe("OpenAPI documents", () => {
  it("every operation has a summary, a description and each answer it gives with a schema and an example", async () => {
    const auth = await documentAt("/openapi.json");
    const storage = await documentAt(`${SERVER}/storage/v1/openapi.json`);
    expect(expectComplete(auth)).toBeGreaterThan(80);
    expect(expectComplete(storage)).toBeGreaterThan(10);
    // The answers the code uses: a session's schema is the one the sign-in route answers with.
    const signIn = auth.paths["/signin/email-password"]!.post!.responses["200"]!;
    const session = signIn.content!["application/json"]!.schema as { properties: Record<string, unknown> };
    expect(Object.keys(session.properties)).toEqual(expect.arrayContaining(["session", "mfa"]));
    expect(storage.paths["/files"]!.post!.responses["201"]).toBeDefined();
    // The SAML metadata is declared as what it is served as.
    const metadata = auth.paths["/sso/saml/{connectionId}/metadata"]!.get!.responses["200"]!;
    expect(Object.keys(metadata.content!)).toEqual(["application/samlmetadata+xml"]);
  });

  it("leaves pages for people (console, sign-in and device pages, inbox, landing, this reference) out", async () => {
    const doc = await documentAt("/openapi.json");
    const app = createAuthApp(getConfig({ ...env, AUTH_OAUTH2_PROVIDER_ENABLED: "true" }));
    const operations = registered(app.routes);
    for (const page of AUTH_PAGES) {
      const [method, path] = page.split(" ") as [string, string];
      expect(operations.has(page), `${page} is served`).toBe(true);
      expect(doc.paths[path]?.[method], `${page} is not API`).toBeUndefined();
    }
    expect(Object.keys(doc.paths).filter((path) => path.startsWith("/admin/console"))).toEqual([]);
  });

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
      if (PAGE.test(path)) continue;
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
          const type = {
            json: "application/json",
            form: "application/x-www-form-urlencoded",
            multipart: "multipart/form-data",
          }[part.target];
          expect(operation!.requestBody?.content[type]?.schema, key).toEqual(expected);
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
      if (path === "/reference") continue;
      expect(doc.paths[path]?.[method], key).toBeDefined();
    }
    expect(doc.paths["/files/{id}"]?.get).toBeDefined();
    expect(doc.paths["/buckets"]?.post?.requestBody).toBeDefined();
  });

  it("the reference page shows every operation with its answers and a try-it form, under a strict CSP", async () => {
    const doc = await documentAt("/openapi.json");
    const response = await svc.get("/reference");
    expect(response.status).toBe(200);
    const csp = response.headers.get("content-security-policy")!;
    expect(csp).toMatch(/default-src 'none'/);
    const nonce = /script-src 'nonce-([0-9a-f]+)'/.exec(csp)?.[1];
    expect(nonce).toBeDefined();
    expect(csp).toMatch(/connect-src 'self'/);
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    const page = await response.text();
    // One script, its own, under the nonce; nothing loaded from elsewhere; nothing outside this repository linked.
    expect(page.match(/<script[^>]*>/g)).toEqual([`<script nonce="${nonce}">`]);
    expect(page).not.toMatch(/ src=|\.\.\/shared|contract\//);
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        expect(page, `${method} ${path}`).toContain(`id="${operation.operationId}"`);
        expect(page, `${method} ${path}`).toContain(
          `data-method="${method.toUpperCase()}" data-path="${path}"`,
        );
      }
    }
    // Each answer's status, its schema's fields and its example are on the page, not only in the document.
    const signIn = page.slice(page.indexOf('id="postSigninEmailPassword"'));
    expect(signIn.slice(0, signIn.indexOf("</details>\n</div>"))).toMatch(/>200<[\s\S]*session\.accessToken/);
    expect(page).toContain('id="errors"');
    expect(page).toContain("<code>invalid-email-password</code>");
  });

  it("the reference page searches on the server too (?q=), escaping what it echoes", async () => {
    const found = await (await svc.get("/reference?q=jwks")).text();
    expect(found).toContain('data-path="/.well-known/jwks.json"');
    expect(found).not.toContain('data-path="/signup/email-password"');
    const none = await (
      await svc.get(`/reference?q=${encodeURIComponent("<img src=x onerror=alert(1)>")}`)
    ).text();
    expect(none).toContain("No operation matches");
    expect(none).not.toContain("<img src=x");
    const storage = await svc.get(`${SERVER}/storage/v1/reference`);
    expect(storage.status).toBe(200);
    expect(await storage.text()).toContain('data-path="/files/{id}"');
  });

  // Issue 34, tried as a new user would: the reference starts where a new user starts, the admin API comes last.
  it("the reference page orders its sections sign-up, sign-in, tokens, user first and admin last", async () => {
    const page = await (await svc.get("/reference")).text();
    const sections = [...page.matchAll(/<h2 id="tag-([^"]+)">/g)].map((match) => match[1]!);
    expect(sections.slice(0, 4)).toEqual(["signup", "signin", "token", "user"]);
    expect(sections.at(-1)).toBe("admin");
    expect(sections.indexOf("oauth2")).toBeGreaterThan(sections.indexOf("mfa"));
    expect(sections.indexOf("system")).toBeGreaterThan(sections.indexOf("discovery"));
    const nav = [...page.matchAll(/<a href="#tag-([^"]+)">/g)].map((match) => match[1]!);
    expect(nav).toEqual(sections);
    const storage = await (await svc.get(`${SERVER}/storage/v1/reference`)).text();
    const storageSections = [...storage.matchAll(/<h2 id="tag-([^"]+)">/g)].map((match) => match[1]!);
    expect(storageSections[0]).toBe("files");
  });
});
