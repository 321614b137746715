import { type Context, Hono } from "hono";
import { cors } from "hono/cors";
import { HTTPException } from "hono/http-exception";
import { z } from "zod";
import pkg from "../../package.json";
import { platformFault, UnavailableError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { logError } from "../http/context";
import { OK_ANSWER, operation } from "../http/documented";
import { adminRoutes } from "./admin-routes";
import { badRequest, internalError, StorageError } from "./errors";
import { fileRoutes } from "./file-routes";

/** Answers a storage failure in the contract's shape (§3.1); HEAD gets the headers only. */
/** A failure as storage answers it: ours as they are, Hono's own 4xx (a body that is not JSON) as a 400. */
function toStorageError(thrown: unknown): StorageError {
  if (thrown instanceof StorageError) return thrown;
  // A binding that failed for now (D1, R2, KV, a Durable Object): 503 with Retry-After, never a 500 (contract §1).
  const caught = platformFault(thrown) ?? thrown;
  if (caught instanceof UnavailableError) {
    return new StorageError(503, caught.message, {
      headers: { "Retry-After": String(caught.retryAfterSeconds) },
      reason: caught.reason,
    });
  }
  if (caught instanceof HTTPException && caught.status < 500) {
    return badRequest(caught.message || "malformed request body");
  }
  return internalError(String(caught));
}

/**
 * A message as a header value can carry it: a message may quote the request (zod names an unknown key as sent), and
 * `Headers` throws on a control character, which turned the refusal into a 500.
 */
const headerSafe = (message: string) => message.replace(/\p{Cc}/gu, " ");

function errorResponse(c: Context<AppEnv>, caught: unknown): Response {
  const error = toStorageError(caught);
  if (error.status >= 500) {
    logError(c.var.requestId, "storage", error.reason ?? caught);
  }
  const headers = new Headers({
    "X-Error": headerSafe(error.message),
    "Cache-Control": "no-store",
    ...error.headers,
  });
  if (c.req.method === "HEAD") return new Response(null, { status: error.status, headers });
  headers.set("Content-Type", "application/json");
  const body = {
    error: { message: error.message, ...(error.data === undefined ? {} : { data: error.data }) },
  };
  const requestId = error.status >= 500 ? { requestId: c.var.requestId } : {};
  return new Response(JSON.stringify({ ...body, ...error.extra, ...requestId }), {
    status: error.status,
    headers,
  });
}

/**
 * The storage API (storage contract §2), mounted under `STORAGE_API_PREFIX`: files (upload, download with
 * conditional requests, ranges and image transformation, replace, delete, presigned URLs), buckets and `ops/*`
 * (admin), version and health.
 */
export function createStorageApp(corsOrigin: (origin: string, c: Context) => string | null): Hono<AppEnv> {
  const storage = new Hono<AppEnv>();
  storage.use(
    cors({
      origin: corsOrigin,
      credentials: true,
      maxAge: 600,
      exposeHeaders: [
        "ETag",
        "Content-Range",
        "Content-Disposition",
        "Last-Modified",
        "X-Error",
        "X-Request-Id",
      ],
    }),
  );
  storage.onError((caught, c) => errorResponse(c, caught));
  storage
    .get(
      "/version",
      operation({
        summary: "Version",
        description: "The service's version.",
        answers: { 200: { description: "The version.", schema: z.object({ buildVersion: z.string() }) } },
      }),
      (c) => c.json({ buildVersion: pkg.version }),
    )
    .get(
      "/healthz",
      operation({
        summary: "Health check",
        description: 'Answers `"OK"` while the Worker runs.',
        answers: { 200: OK_ANSWER("The service runs.") },
      }),
      (c) => c.json("OK"),
    )
    .route("/", fileRoutes)
    .route("/", adminRoutes);
  return storage;
}
