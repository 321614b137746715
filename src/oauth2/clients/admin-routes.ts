import { Hono } from "hono";
import { z } from "zod";
import { auditAdminAction } from "../../audit/admin-action";
import type { AppEnv } from "../../http/app-env";
import { NO_CONTENT, operation } from "../../http/documented";
import { pageQuery, pageSchema } from "../../http/paging";
import { jsonBody, queryParams } from "../../http/validation";
import {
  createClient,
  deleteClient,
  getClient,
  listClients,
  replaceClient,
  rotateClientSecret,
  wireClientSchema,
} from "./admin-clients";
import { clientBodySchema } from "./client-schema";

/** OAuth2 clients in the admin API (contract §10), behind the admin secret (mounted by src/runtime/app.ts). */
export const oauth2ClientAdminRoutes = new Hono<AppEnv>()
  .post(
    "/oauth2/clients",
    operation({
      summary: "Create an OAuth2 client",
      description:
        "A relying party of the authorization server (docs/oauth2.md). A confidential client gets `clientSecret`, " +
        "shown in this answer only (stored hashed); `tokenEndpointAuthMethod: none` makes a public client (PKCE " +
        "required). Audited.",
      security: "admin-secret",
      answers: { 201: { description: "The client, with its secret.", schema: wireClientSchema } },
    }),
    jsonBody(clientBodySchema),
    async (c) => {
      const client = await createClient(c.var.deps, c.req.valid("json"));
      auditAdminAction(c, "oauth2-client.create", null, { clientId: client.clientId });
      return c.json(client, 201);
    },
  )
  .get(
    "/oauth2/clients",
    operation({
      summary: "List OAuth2 clients",
      description: "Oldest first, with how each was registered and when it was last used.",
      security: "admin-secret",
      answers: { 200: { description: "A page of clients.", schema: pageSchema(wireClientSchema) } },
    }),
    queryParams(pageQuery),
    async (c) => c.json(await listClients(c.var.deps, c.req.valid("query"))),
  )
  .get(
    "/oauth2/clients/:clientId",
    operation({
      summary: "Get an OAuth2 client",
      description: "404 `not-found` for an unknown id.",
      security: "admin-secret",
      answers: { 200: { description: "The client (never its secret).", schema: wireClientSchema } },
    }),
    async (c) => c.json(await getClient(c.var.deps, c.req.param("clientId"))),
  )
  .put(
    "/oauth2/clients/:clientId",
    operation({
      summary: "Replace an OAuth2 client's settings",
      description:
        "The same body as create replaces every setting. A client made confidential gets a secret (in this answer); " +
        "one made public loses its secret. Audited.",
      security: "admin-secret",
      answers: { 200: { description: "The client as it is now.", schema: wireClientSchema } },
    }),
    jsonBody(clientBodySchema),
    async (c) => {
      const client = await replaceClient(c.var.deps, c.req.param("clientId"), c.req.valid("json"));
      auditAdminAction(c, "oauth2-client.update", null, { clientId: client.clientId });
      return c.json(client);
    },
  )
  .delete(
    "/oauth2/clients/:clientId",
    operation({
      summary: "Delete an OAuth2 client",
      description: "With its grants, codes and consents: its refresh tokens stop working. Audited.",
      security: "admin-secret",
      answers: { 204: NO_CONTENT("Deleted.") },
    }),
    async (c) => {
      const clientId = c.req.param("clientId");
      await deleteClient(c.var.deps, clientId);
      auditAdminAction(c, "oauth2-client.delete", null, { clientId });
      return c.body(null, 204);
    },
  )
  .post(
    "/oauth2/clients/:clientId/secret",
    operation({
      summary: "Make a new client secret",
      description:
        "The old secret stops working (within ten seconds everywhere). Public clients have none (400). Audited.",
      security: "admin-secret",
      answers: {
        200: { description: "The new secret, shown once.", schema: z.object({ clientSecret: z.string() }) },
      },
    }),
    async (c) => {
      const clientId = c.req.param("clientId");
      const rotated = await rotateClientSecret(c.var.deps, clientId);
      auditAdminAction(c, "oauth2-client.secret-rotate", null, { clientId });
      return c.json(rotated);
    },
  );
