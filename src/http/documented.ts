import type { MiddlewareHandler } from "hono";
import { type ZodType, z } from "zod";

/**
 * What a route tells the OpenAPI document about itself, attached to functions in its own handler chain: the request
 * schema a validating middleware checks with (`documented`), and the operation's words and answers (`operation`).
 * The document (src/openapi/document.ts) is read off the routes the app registered, so what it shows is what the
 * route runs; there is no second copy to drift, and the suite checks every answer it gets against it
 * (test/openapi/answers.ts).
 */
export interface RequestPart {
  target: "json" | "query" | "form" | "multipart";
  schema: ZodType;
}

/** One answer of an operation: what it means, and its body's schema (JSON unless `media` says otherwise). */
export interface AnswerDoc {
  description: string;
  schema?: ZodType;
  /**
   * `json` (default when there is a schema), `scim` (`application/scim+json`, RFC 7644 §3.1), `redirect` (a
   * `Location`), `html`, `binary`, `text`, `saml-metadata` (`application/samlmetadata+xml`), `empty`.
   */
  media?: "json" | "scim" | "redirect" | "html" | "binary" | "text" | "saml-metadata" | "empty";
  example?: unknown;
}

/** Who may call an operation: the access token of a session, an elevated one, the admin secret, OAuth2 clients. */
export type Security =
  | "none"
  | "bearer"
  | "optional-bearer"
  | "elevated"
  | "admin-secret"
  | "oauth2-client"
  | "oauth2-token";

export interface OperationDoc {
  summary: string;
  /** Markdown: what it does, when to call it, what can go wrong (error codes). */
  description: string;
  security?: Security;
  /** A request the route parses itself (OAuth2's forms and queries): its fields, for the document only. */
  request?: RequestPart;
  /** Answers by status; errors not listed here are the API's default error answer. */
  answers: Record<number, AnswerDoc>;
}

/** A request header a middleware reads (Turnstile's token), for the document's parameters. */
export interface HeaderDoc {
  name: string;
  description: string;
}

const PARTS = Symbol.for("edge-auth.openapi.request");
const HEADERS = Symbol.for("edge-auth.openapi.header");
const OPERATION = Symbol.for("edge-auth.openapi.operation");

export function documented<T extends object>(middleware: T, part: RequestPart): T {
  Object.defineProperty(middleware, PARTS, { value: part, enumerable: false });
  return middleware;
}

export function requestPartOf(handler: unknown): RequestPart | undefined {
  return typeof handler === "function"
    ? (handler as unknown as Record<symbol, RequestPart>)[PARTS]
    : undefined;
}

export function documentedHeader<T extends object>(middleware: T, header: HeaderDoc): T {
  Object.defineProperty(middleware, HEADERS, { value: header, enumerable: false });
  return middleware;
}

export function headerOf(handler: unknown): HeaderDoc | undefined {
  return typeof handler === "function"
    ? (handler as unknown as Record<symbol, HeaderDoc>)[HEADERS]
    : undefined;
}

/** A pass-through middleware that carries the operation's documentation; put it first in the route's chain. */
export function operation(doc: OperationDoc): MiddlewareHandler {
  const middleware: MiddlewareHandler = (_c, next) => next();
  Object.defineProperty(middleware, OPERATION, { value: doc, enumerable: false });
  return middleware;
}

export function operationOf(handler: unknown): OperationDoc | undefined {
  return typeof handler === "function"
    ? (handler as unknown as Record<symbol, OperationDoc>)[OPERATION]
    : undefined;
}

/** The answer most operations give: the JSON string "OK" (contract §1). */
export const OK_ANSWER = (description = "Done."): AnswerDoc => ({
  description,
  schema: z.literal("OK"),
  example: "OK",
});

/** A browser-facing answer: 302 to `Location` (contract §1, redirect errors travel in its query). */
export const REDIRECT_ANSWER = (description: string): AnswerDoc => ({ description, media: "redirect" });

/**
 * A page's faults (routes mounted with `asPages`, src/browser/page-faults.ts): the fault page, not the API's JSON error.
 */
export const FAULT_PAGE_ANSWERS: Record<500 | 503, AnswerDoc> = {
  500: { description: "The service failed: the fault page, with the request id to report.", media: "html" },
  503: {
    description: "A dependency cannot be reached now: the fault page, with Retry-After; try again.",
    media: "html",
  },
};

/** 204, no body. */
export const NO_CONTENT = (description = "Done; no body."): AnswerDoc => ({ description, media: "empty" });
