import { Hono } from "hono";
import pkg from "../../package.json";
import { getKeySet } from "../lib/keys";
import type { AppEnv } from "./app-env";

/** getJWKs, getVersion, healthCheckGet/Head (contract §3.1). */
export const systemRoutes = new Hono<AppEnv>()
  .get("/.well-known/jwks.json", async (c) => {
    const { jwks } = await getKeySet(c.var.config);
    // Verifiers may cache briefly; a new key is published before it signs (docs/operations.md), so 5 min is safe.
    c.header("Cache-Control", "public, max-age=300");
    return c.json({ keys: jwks });
  })
  .get("/version", (c) => c.json({ version: pkg.version }))
  // Hono answers HEAD with the GET handler's headers and no body.
  .get("/healthz", (c) => c.json("OK"));
