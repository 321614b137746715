import { Hono } from "hono";
import { z } from "zod";
import { auditAdminAction } from "../audit/admin-action";
import type { AppEnv } from "../http/app-env";
import { queryParams } from "../http/validation";
import { deleteKey, listKeys, rotateKey } from "./keys";

/** Signing keys in the admin API (contract §10). */
export const keyAdminRoutes = new Hono<AppEnv>()
  .get("/keys", async (c) => c.json({ items: await listKeys(c.var.deps), nextCursor: null }))
  .post("/keys/rotate", async (c) => {
    const key = await rotateKey(c.var.deps);
    auditAdminAction(c, "keys.rotate", null, { kid: key.kid });
    return c.json(key, 201);
  })
  // `?force=true`: delete even while tokens it signed may be valid (after a leak), see deleteKey.
  .delete("/keys/:kid", queryParams(z.object({ force: z.enum(["true", "false"]).optional() })), async (c) => {
    const kid = c.req.param("kid");
    const force = c.req.valid("query").force === "true";
    await deleteKey(c.var.deps, kid, { force });
    auditAdminAction(c, "key.delete", null, { kid, force });
    return c.body(null, 204);
  });
