import { zValidator } from "@hono/zod-validator";
import { createMiddleware } from "hono/factory";
import type { ZodType } from "zod";
import type { AppEnv } from "../app-env";
import { AppError } from "../errors";

/**
 * The SDK POSTs without a body on several calls, sometimes with a JSON Content-Type (client.md §9): an empty body
 * is `{}`. Reading the text here fills Hono's body cache, which the JSON validator then reads.
 */
export const emptyBodyAsJson = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.method !== "GET" && c.req.method !== "HEAD") {
    const text = await c.req.text();
    // Hono keeps promises in its body cache at run time, though its type says `string`.
    if (text.trim() === "") (c.req.bodyCache as { text?: Promise<string> }).text = Promise.resolve("{}");
  }
  await next();
});

function describe(issues: readonly { path: PropertyKey[]; message: string }[]): string {
  const first = issues[0];
  if (!first) return "invalid request";
  const field = first.path.map(String).join(".");
  return field ? `${field}: ${first.message}` : first.message;
}

function failWith<T extends ZodType>(schema: T, target: "json" | "query") {
  return zValidator(target, schema, (result) => {
    if (!result.success) throw new AppError("invalid-request", describe(result.error.issues));
  });
}

/** Validates the JSON body; a failure is 400 `invalid-request` naming the field (contract §1). */
export const jsonBody = <T extends ZodType>(schema: T) => failWith(schema, "json");
export const queryParams = <T extends ZodType>(schema: T) => failWith(schema, "query");
