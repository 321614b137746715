import { Hono } from "hono";
import { auditAdminAction } from "../audit/admin-action";
import type { AppEnv } from "../http/app-env";
import { pageQuery } from "../http/paging";
import { jsonBody, queryParams } from "../http/validation";
import { clientBodySchema } from "./client-schema";
import {
  createClient,
  deleteClient,
  getClient,
  listClients,
  replaceClient,
  rotateClientSecret,
} from "./clients";

/** OAuth2 clients in the admin API (contract §10), behind the admin secret (mounted by src/admin/app.ts). */
export const oauth2ClientAdminRoutes = new Hono<AppEnv>()
  .post("/oauth2/clients", jsonBody(clientBodySchema), async (c) => {
    const client = await createClient(c.var.deps, c.req.valid("json"));
    auditAdminAction(c, "oauth2-client.create", null, { clientId: client.clientId });
    return c.json(client, 201);
  })
  .get("/oauth2/clients", queryParams(pageQuery), async (c) =>
    c.json(await listClients(c.var.deps, c.req.valid("query"))),
  )
  .get("/oauth2/clients/:clientId", async (c) => c.json(await getClient(c.var.deps, c.req.param("clientId"))))
  .put("/oauth2/clients/:clientId", jsonBody(clientBodySchema), async (c) => {
    const client = await replaceClient(c.var.deps, c.req.param("clientId"), c.req.valid("json"));
    auditAdminAction(c, "oauth2-client.update", null, { clientId: client.clientId });
    return c.json(client);
  })
  .delete("/oauth2/clients/:clientId", async (c) => {
    const clientId = c.req.param("clientId");
    await deleteClient(c.var.deps, clientId);
    auditAdminAction(c, "oauth2-client.delete", null, { clientId });
    return c.body(null, 204);
  })
  .post("/oauth2/clients/:clientId/secret", async (c) => {
    const clientId = c.req.param("clientId");
    const rotated = await rotateClientSecret(c.var.deps, clientId);
    auditAdminAction(c, "oauth2-client.secret-rotate", null, { clientId });
    return c.json(rotated);
  });
