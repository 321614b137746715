import { zValidator } from "@hono/zod-validator";
import type { Context, Next } from "hono";
import { createMiddleware } from "hono/factory";
import type { ZodType } from "zod";
import { AppError } from "../errors";
import { loneSurrogatePath } from "../lib/well-formed";
import type { AppEnv } from "./app-env";
import { documented } from "./documented";

/**
 * The request body as text. Read as bytes and decoded here: workerd warns ("does not appear to be text") when
 * `.text()` meets a form or multipart body, and Hono keeps the bytes for any later read of another kind.
 */
export async function bodyText(c: Context<AppEnv>): Promise<string> {
  return new TextDecoder().decode(await c.req.arrayBuffer());
}

/**
 * The SDK POSTs without a body on several calls, sometimes with a JSON Content-Type (client.md §9): an empty body
 * is `{}`. Reading the body here fills Hono's body cache, which the JSON validator then reads.
 */
export const emptyBodyAsJson = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.method !== "GET" && c.req.method !== "HEAD") {
    const text = await bodyText(c);
    // Hono keeps promises in its body cache at run time, though its type says `string`.
    if (text.trim() === "") (c.req.bodyCache as { text?: Promise<string> }).text = Promise.resolve("{}");
  }
  await next();
});

/** A validation failure as the contract words it: the first issue, naming its field. */
export function describeIssues(issues: readonly { path: PropertyKey[]; message: string }[]): string {
  const first = issues[0];
  if (!first) return "invalid request";
  const field = first.path.map(String).join(".");
  return field ? `${field}: ${first.message}` : first.message;
}

function failWith<T extends ZodType>(schema: T, target: "json" | "query") {
  return zValidator(target, schema, (result) => {
    if (!result.success) throw new AppError("invalid-request", describeIssues(result.error.issues));
  });
}

/** The bound on an API request's body, the Nhost API's and every face's: no JSON they read is larger. */
export const MAX_JSON_BODY_BYTES = 64 * 1024;

const JSON_TYPE = /^application\/([a-z0-9.+-]+\+)?json(\s*;|$)/i;

/**
 * A body sent without a JSON Content-Type (curl's `-d` sends a form type, `fetch` with a string body `text/plain`)
 * would otherwise be read as no body at all and answered with a confusing "email: required". An empty body stays
 * `{}` whatever its type (emptyBodyAsJson).
 */
export async function notJsonBodyReason(c: Context<AppEnv>): Promise<string | null> {
  const type = c.req.header("content-type") ?? "";
  if (JSON_TYPE.test(type)) return null;
  const text = (await bodyText(c)).trim();
  if (text === "" || text === "{}") return null;
  return `expected a JSON body (Content-Type: application/json), got ${type ? `"${type.slice(0, 80)}"` : "no Content-Type"}`;
}

async function assertJsonBody(c: Context<AppEnv>): Promise<void> {
  const reason = await notJsonBodyReason(c);
  if (reason) throw new AppError("invalid-request", reason);
  // A body that does not parse is the validator's to answer; one that does must hold only well-formed text.
  const parsed: unknown = await c.req.json().catch(() => undefined);
  const path = loneSurrogatePath(parsed);
  if (path !== null) throw new AppError("invalid-request", notWellFormed(path));
}

/**
 * Every JSON body's text must be writable as UTF-8 (src/lib/well-formed.ts): JSON's `\ud800` escape gives a string
 * that `encodeURIComponent`, TextEncoder-based hashing (two passwords would hash alike) and WASM parsers each treat
 * differently or throw on. Refused where it enters, one check for every route, beside the fields that refused it one
 * by one before.
 */
export const notWellFormed = (path: string) =>
  `${path || "body"}: text that is not well-formed Unicode (a lone UTF-16 surrogate)`;

/** Validates the JSON body; a failure is 400 `invalid-request` naming the field (contract §1). */
export const jsonBody = <T extends ZodType>(schema: T) => {
  const validate = failWith(schema, "json");
  const guarded = (async (c: Context<AppEnv>, next: Next) => {
    await assertJsonBody(c);
    return validate(c as never, next);
  }) as unknown as typeof validate;
  return documented(guarded, { target: "json", schema });
};
export const queryParams = <T extends ZodType>(schema: T) =>
  documented(failWith(schema, "query"), { target: "query", schema });
