// Every answer the suite gets through `service()` (test/helpers.ts) is checked against the OpenAPI document of the
// same deployment: its status must be one the operation lists (an error status falls to the API's default error
// answer), and a JSON body must match the schema documented for that status. So the document cannot drift from the
// service: an undocumented status or field fails the test that produced it.

import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { Validator } from "@cfworker/json-schema";
import worker from "../../src/index";
import { getConfig } from "../../src/runtime/config";

interface Doc {
  paths: Record<string, Record<string, { responses: Record<string, Answer> }>>;
  components: { schemas?: Record<string, unknown> };
}

interface Answer {
  description: string;
  content?: Record<string, { schema?: unknown }>;
  $ref?: string;
}

interface Api {
  prefix: string;
  doc: Doc;
  /** Path templates, most specific first, as regular expressions. */
  templates: [string, RegExp][];
  /** Per operation and documented status: the JSON body's validator, or null when the answer documents none. */
  validators: Map<string, Validator | null>;
}

const apisByEnv = new WeakMap<object, Promise<Api[] | null>>();

/**
 * The same documents for every env that configures the same deployment: most test files make their own `service()`
 * (hundreds in a run), often with the same switches, and building a deployment's two documents (every route's zod
 * schemas turned into JSON Schema, a configuration parsed and an app made for the fetch) was the largest single cost in
 * a profile of a workers lane. The key is every variable's value and every binding's name; a binding's own identity (a
 * failing D1 a fault test wraps) changes no document.
 */
const apisByDeployment = new Map<string, Promise<Api[] | null>>();
const deploymentKey = (env: Record<string, unknown>) =>
  JSON.stringify(
    Object.keys(env)
      .sort()
      .map((name) => {
        const value = env[name];
        return [name, ["string", "number", "boolean"].includes(typeof value) ? value : typeof value];
      }),
  );

async function documentOf(env: Record<string, unknown>, url: string): Promise<Doc | null> {
  const ctx = createExecutionContext();
  // Limits off: the check must not count against (or show up in) a rate-limit test's limiter.
  const quiet = { ...env, AUTH_RATE_LIMIT_ENABLE: "false" };
  const response = await worker.fetch!(new Request(url), quiet as never, ctx);
  await waitOnExecutionContext(ctx);
  return response.ok ? ((await response.json()) as Doc) : null;
}

function api(prefix: string, doc: Doc): Api {
  const templates = Object.keys(doc.paths)
    .sort((a, b) => (a.match(/\{/g)?.length ?? 0) - (b.match(/\{/g)?.length ?? 0))
    .map((template): [string, RegExp] => [
      template,
      new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{[^}]+\\?\}/g, "[^/]+")}$`),
    ]);
  return { prefix, doc, templates, validators: new Map() };
}

function apisOf(env: Record<string, unknown>): Promise<Api[] | null> {
  let apis = apisByEnv.get(env);
  if (apis) return apis;
  const key = deploymentKey(env);
  apis = apisByDeployment.get(key);
  if (!apis) {
    apis = (async () => {
      let config: ReturnType<typeof getConfig>;
      try {
        config = getConfig(env);
      } catch {
        return null; // A deployment that does not start answers 500s, which the test itself is about.
      }
      const base = "http://localhost:8787";
      const [auth, storage] = await Promise.all([
        documentOf(env, `${base}${config.urls.authPrefix}/openapi.json`),
        documentOf(env, `${base}${config.urls.storagePrefix}/openapi.json`),
      ]);
      return [
        ...(auth ? [api(config.urls.authPrefix, auth)] : []),
        ...(storage ? [api(config.urls.storagePrefix, storage)] : []),
      ];
    })();
    apisByDeployment.set(key, apis);
  }
  apisByEnv.set(env, apis);
  return apis;
}

/** `$ref`s into components, replaced by what they name (the documents use them for the error schema only). */
function resolved(doc: Doc, value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => resolved(doc, item));
  if (!value || typeof value !== "object") return value;
  const ref = (value as { $ref?: string }).$ref;
  if (ref?.startsWith("#/components/schemas/")) {
    return resolved(doc, doc.components.schemas?.[ref.slice("#/components/schemas/".length)]);
  }
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolved(doc, item)]));
}

/** Throws, naming the operation and what differs, when `response` is not what the document says it can be. */
export async function checkAnswer(
  env: Record<string, unknown>,
  method: string,
  url: string,
  response: Response,
): Promise<void> {
  if (method === "HEAD" || method === "OPTIONS") return;
  const apis = await apisOf(env);
  const path = new URL(url).pathname;
  const owner = apis?.find(
    (candidate) => path === candidate.prefix || path.startsWith(`${candidate.prefix}/`),
  );
  if (!owner) return;
  const relative = path.slice(owner.prefix.length) || "/";
  const template = owner.templates.find(([, pattern]) => pattern.test(relative))?.[0];
  const operation = template ? owner.doc.paths[template]?.[method.toLowerCase()] : undefined;
  // Not an operation of the document (a page, an unknown path): nothing it promises.
  if (!operation) return;
  const name = `${method} ${template}`;
  const status = String(response.status);
  const answer =
    operation.responses[status] ?? (response.status >= 400 ? operation.responses.default : undefined);
  if (!answer) {
    const text = await response.clone().text();
    throw new Error(
      `${name} answered ${status}, which its OpenAPI document does not list: ${text.slice(0, 300)}`,
    );
  }
  // Resolved and compiled once per operation and status: resolving copies the answer's whole schema, which a profile
  // of a workers lane found costing more than the validation itself when it was done for every answer.
  const key = `${name} ${status in operation.responses ? status : "default"}`;
  let validator = owner.validators.get(key);
  if (validator === undefined) {
    const schema = (resolved(owner.doc, answer) as Answer).content?.["application/json"]?.schema;
    validator = schema ? new Validator(schema as never, "2020-12", false) : null;
    owner.validators.set(key, validator);
  }
  if (!validator) return;
  if (!/application\/json/.test(response.headers.get("content-type") ?? "")) {
    throw new Error(
      `${name} answered ${status} with ${response.headers.get("content-type")}, documented as JSON`,
    );
  }
  const body = await response.clone().json();
  const result = validator.validate(body);
  if (!result.valid) {
    const errors = result.errors
      .slice(-3)
      .map((error) => `${error.instanceLocation}: ${error.error}`)
      .join("; ");
    throw new Error(
      `${name} answered ${status} with a body its OpenAPI document does not describe (${errors}): ${JSON.stringify(body).slice(0, 400)}`,
    );
  }
}
