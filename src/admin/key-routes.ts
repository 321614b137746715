import { Hono } from "hono";
import type { AppEnv } from "../app-env";
import { auditAdminAction } from "./audit-action";
import { deleteKey, listKeys, rotateKey } from "./keys";

/** Signing keys in the admin API (contract §10). */
export const keyAdminRoutes = new Hono<AppEnv>()
  .get("/keys", async (c) => c.json({ items: await listKeys(c.var.deps), nextCursor: null }))
  .post("/keys/rotate", async (c) => {
    const key = await rotateKey(c.var.deps);
    auditAdminAction(c, "keys.rotate", null, { kid: key.kid });
    return c.json(key, 201);
  })
  .delete("/keys/:kid", async (c) => {
    const kid = c.req.param("kid");
    await deleteKey(c.var.deps, kid);
    auditAdminAction(c, "key.delete", null, { kid });
    return c.body(null, 204);
  });
