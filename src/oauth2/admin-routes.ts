import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../app-env";
import { jsonBody, queryParams } from "../middleware/validate";
import { clientBodySchema } from "./client-schema";
import {
  createClient,
  deleteClient,
  getClient,
  listClients,
  replaceClient,
  rotateClientSecret,
} from "./clients";

/** Paging of every admin list (contract §10): `limit` 1–500, default 50, and the opaque `cursor`. */
const pageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().max(500).optional(),
});

/** OAuth2 clients in the admin API (contract §10), behind the admin secret (mounted by src/admin/app.ts). */
export const oauth2ClientAdminRoutes = new Hono<AppEnv>()
  .post("/oauth2/clients", jsonBody(clientBodySchema), async (c) =>
    c.json(await createClient(c.var.deps, c.req.valid("json")), 201),
  )
  .get("/oauth2/clients", queryParams(pageQuery), async (c) =>
    c.json(await listClients(c.var.deps, c.req.valid("query"))),
  )
  .get("/oauth2/clients/:clientId", async (c) => c.json(await getClient(c.var.deps, c.req.param("clientId"))))
  .put("/oauth2/clients/:clientId", jsonBody(clientBodySchema), async (c) =>
    c.json(await replaceClient(c.var.deps, c.req.param("clientId"), c.req.valid("json"))),
  )
  .delete("/oauth2/clients/:clientId", async (c) => {
    await deleteClient(c.var.deps, c.req.param("clientId"));
    return c.body(null, 204);
  })
  .post("/oauth2/clients/:clientId/secret", async (c) =>
    c.json(await rotateClientSecret(c.var.deps, c.req.param("clientId"))),
  );
