import type { ZodType } from "zod";

/**
 * What a validating middleware tells the OpenAPI document about the request it accepts: the zod schema it validates
 * with, attached to the middleware function itself. The document (document.ts) is then read off the routes the app
 * registered, so the schema it shows is the one the route runs; there is no second copy to drift.
 */
export interface RequestPart {
  target: "json" | "query";
  schema: ZodType;
}

const PARTS = Symbol.for("edge-auth.openapi.request");

export function documented<T extends object>(middleware: T, part: RequestPart): T {
  Object.defineProperty(middleware, PARTS, { value: part, enumerable: false });
  return middleware;
}

export function requestPartOf(handler: unknown): RequestPart | undefined {
  return typeof handler === "function"
    ? (handler as unknown as Record<symbol, RequestPart>)[PARTS]
    : undefined;
}
