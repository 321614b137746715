import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { Failure, ServiceError } from "./service.js";

/**
 * The statuses of the catalogue's codes a consumer meets through this package (the service's src/errors.ts and
 * AuthZEN's 400). A code not listed is the service's own failure to the app: 502, the answer of a gateway whose
 * upstream failed, so it is never mistaken for the app's own 500.
 */
const STATUS: Record<string, ContentfulStatusCode> = {
  unauthorized: 401,
  "disabled-user": 401,
  "invalid-pat": 401,
  forbidden: 403,
  "invalid-request": 400,
  "payload-too-large": 413,
  "not-found": 404,
  "too-many-requests": 429,
  "service-unavailable": 503,
};

/**
 * A refusal or a failure of the auth service, typed: `code` is the catalogue's, `status` the HTTP status an app
 * answers with. It is a Hono `HTTPException`, so an app without its own `onError` answers it as the service does
 * (`{status, error, message}`, no-store), and an app with one tells it apart with `instanceof EdgeAuthError`.
 */
export class EdgeAuthError extends HTTPException {
  override readonly name = "EdgeAuthError";
  readonly code: string;
  readonly #headers: Record<string, string>;

  constructor(
    code: string,
    message: string,
    options?: { cause?: unknown; status?: ContentfulStatusCode; headers?: Record<string, string> },
  ) {
    super(options?.status ?? STATUS[code] ?? 502, { message, cause: options?.cause });
    this.code = code;
    this.#headers = options?.headers ?? {};
  }

  static from(error: ServiceError): EdgeAuthError {
    return new EdgeAuthError(error.code, error.message);
  }

  override getResponse(): Response {
    return Response.json(
      { status: this.status, error: this.code, message: this.message },
      // An auth answer is never cached (RFC 6749 §5.1's rule for token answers, kept for every auth error).
      { status: this.status, headers: { ...this.#headers, "cache-control": "no-store" } },
    );
  }
}

/** `{ ok: false, error }`: how the binding answers when it cannot (errors cross Workers RPC as values). */
export function isFailure(value: unknown): value is Failure {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { ok?: unknown }).ok === false &&
    typeof (value as Failure).error?.code === "string"
  );
}

/** The binding's answer, or its error value turned back into the typed error it stands for. */
export function unwrap<T>(answer: T | Failure): Exclude<T, Failure> {
  if (isFailure(answer)) throw EdgeAuthError.from(answer.error);
  return answer as Exclude<T, Failure>;
}
