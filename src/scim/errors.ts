import type { Context } from "hono";
import { AppError, platformFault } from "../errors";
import type { AppEnv } from "../http/app-env";
import { logError } from "../http/context";

/** RFC 7644 §3.12: SCIM answers errors in its own body, with its own media type. */
export const SCIM_ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error";
export const SCIM_MEDIA_TYPE = "application/scim+json";

/** RFC 7644 Table 9, the `scimType`s this service answers with. */
export type ScimType =
  | "invalidFilter"
  | "invalidSyntax"
  | "invalidValue"
  | "invalidPath"
  | "noTarget"
  | "mutability"
  | "uniqueness"
  | "tooMany";

export type ScimStatus = 400 | 401 | 403 | 404 | 409 | 413 | 429 | 500 | 503;

/** A SCIM failure: status, RFC 7644's `scimType` where one fits, and a detail for the IdP's administrator. */
export class ScimError extends Error {
  constructor(
    readonly status: ScimStatus,
    detail: string,
    readonly scimType?: ScimType,
  ) {
    super(detail);
    this.name = "ScimError";
  }
}

export interface ScimErrorBody {
  schemas: [typeof SCIM_ERROR_SCHEMA];
  status: string;
  scimType?: ScimType;
  detail: string;
}

export function scimErrorBody(error: ScimError): ScimErrorBody {
  return {
    schemas: [SCIM_ERROR_SCHEMA],
    // RFC 7644 §3.12: "status" is the HTTP status code as a string.
    status: String(error.status),
    ...(error.scimType ? { scimType: error.scimType } : {}),
    detail: error.message,
  };
}

/** A SCIM JSON answer with RFC 7644 §3.1's media type. */
export function scimJson(body: unknown, status: 200 | 201 = 200, headers?: HeadersInit) {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": SCIM_MEDIA_TYPE, "Cache-Control": "no-store", ...headers },
  });
}

/** Whatever failed behind a SCIM route, as a SCIM error (an AppError keeps its status and message; faults 503/500). */
export function asScimError(error: unknown, requestId: string): ScimError {
  if (error instanceof ScimError) return error;
  if (error instanceof AppError && error.status < 500) {
    const known = [400, 401, 403, 404, 409, 413, 429].includes(error.status);
    return new ScimError((known ? error.status : 400) as ScimStatus, error.message);
  }
  const fault = error instanceof AppError && error.status === 503 ? error : platformFault(error);
  if (fault) {
    logError(requestId, "scim", fault.reason ?? error);
    return new ScimError(503, fault.message);
  }
  logError(requestId, "scim", error);
  return new ScimError(500, "internal server error");
}

/** The SCIM router's error handler: every failure in SCIM's body (RFC 7644 §3.12), never the API's own shape. */
export function scimErrorResponse(error: unknown, c: Context<AppEnv>): Response {
  const scim = asScimError(error, c.var.requestId);
  if (scim.status < 500 && !(error instanceof ScimError) && error instanceof Error)
    logError(c.var.requestId, "scim", error, "warn");
  const headers: Record<string, string> = { "Content-Type": SCIM_MEDIA_TYPE, "Cache-Control": "no-store" };
  if (scim.status === 401) headers["WWW-Authenticate"] = 'Bearer realm="scim"';
  if (scim.status === 503 || scim.status === 429)
    headers["Retry-After"] = String((error as { retryAfterSeconds?: number }).retryAfterSeconds ?? 5);
  return new Response(JSON.stringify(scimErrorBody(scim)), { status: scim.status, headers });
}
