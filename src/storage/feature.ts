import type { Config } from "../config";
import * as tables from "../db/tables/storage";
import { allowedOrigin, corsOrigins } from "../http/cors";
import type { Deps } from "../http/deps";
import { documentationRoutes } from "../openapi/document-routes";
import { storageDocument } from "../openapi/storage-document";
import { createStorageApp } from "./app";
import { sweepStaleUploads } from "./housekeeping";
import { storageSettings } from "./settings";

/** The storage API (storage contract §2): one app, with its own CORS and error shape, and its OpenAPI document. */
export const storageFeature = {
  name: "storage",
  settings: storageSettings,
  tables,
  routes: (config: Config) => {
    const storage = createStorageApp(allowedOrigin(config, corsOrigins(config)));
    storage.route(
      "/",
      documentationRoutes(() => storageDocument(storage, config)),
    );
    return { storage };
  },
  housekeeping: (services: Deps, now: number) => sweepStaleUploads(services, now),
};
