import { Hono } from "hono";
import type { AppEnv } from "../../../http/app-env";
import { floodGuard } from "../../../rate-limits/flood-guard";
import { checkApiKey, type KeyRole } from "../api-keys";
import { bucketRoutes } from "./bucket-routes";
import { rememberCaller } from "./caller";
import { StorageApiError, storageErrorResponse } from "./errors";
import { listV2Routes } from "./list-v2-routes";
import { objectRoutes } from "./object-routes";
import { storageCaller } from "./request";
import { resumableRoutes } from "./resumable-routes";
import { urlRoutes } from "./url-routes";

/**
 * Supabase Storage's API under `/supabase/storage/v1` (contract supabase.md §3), for `@supabase/storage-js`:
 * buckets, objects addressed by path, signed and public URLs, image transformation, over the service's files.
 */

/**
 * Routes a browser reaches without a key, as Supabase's gateway leaves them (§1): a public bucket's files, a signed
 * URL's download, and the upload to a signed upload URL. Their token, or the bucket being public, is the credential.
 */
function isOpen(method: string, path: string): boolean {
  const route = path.slice(path.indexOf("/storage/v1") + "/storage/v1".length);
  if (method === "PUT") return route.startsWith("/object/upload/sign/");
  if (method !== "GET" && method !== "HEAD") return false;
  return /^\/(object\/(public|sign)|render\/image\/(public|sign))\//.test(route);
}

/** The gateway's answers to a missing or wrong key (Kong's words), in Storage's shape. */
const KEY_REFUSALS = {
  missing: "No API key found in request",
  invalid: "Invalid API key",
  "secret-in-browser": "Forbidden use of secret API key in browser",
} as const;

export function storageFaceApp(): Hono<AppEnv> {
  const storage = new Hono<AppEnv>();
  storage.use(floodGuard, async (c, next) => {
    let role: KeyRole | null = null;
    if (!isOpen(c.req.method, c.req.path)) {
      const key = await checkApiKey(c, c.var.config);
      if ("retryAfterSeconds" in key) {
        throw new StorageApiError(429, "SlowDown", "too_many_requests", "Too many requests", 429, {
          "Retry-After": String(key.retryAfterSeconds),
        });
      }
      if ("refused" in key)
        throw new StorageApiError(401, "Unauthorized", "Unauthorized", KEY_REFUSALS[key.refused]);
      role = key.role;
    }
    // Under STORAGE_PERMISSIONS=hasura the core asks the app's Hasura with this caller's token, as the storage API does.
    rememberCaller(c, await storageCaller(c, role));
    await next();
  });
  storage.route("/", bucketRoutes);
  storage.route("/", urlRoutes);
  storage.route("/", resumableRoutes);
  // Before objectRoutes: its `POST /object/:bucket/*` (upload) would take `/object/list-v2/{bucket}`.
  storage.route("/", listV2Routes);
  storage.route("/", objectRoutes);
  // A sub-app's notFound is not its own once mounted: the last route answers every other path in Storage's shape.
  storage.all("*", () => {
    throw new StorageApiError(404, "NotFound", "Not Found", "Route not found", 404);
  });
  storage.onError((caught, c) =>
    storageErrorResponse(c, caught, c.req.path.includes("/storage/v1/upload/resumable")),
  );
  return storage;
}
