import { Hono } from "hono";
import { z } from "zod";
import { auditAdminAction } from "../audit/admin-action";
import type { AppEnv } from "../http/app-env";
import { NO_CONTENT, operation } from "../http/documented";
import { pageQuery, pageSchema } from "../http/paging";
import { jsonBody, queryParams } from "../http/validation";
import { listDeliveries, redeliver } from "./deliveries";
import { createEndpoint, deleteEndpoint, getEndpoint, listEndpoints, updateEndpoint } from "./endpoints";
import {
  createEndpointSchema,
  DELIVERY_STATUSES,
  updateEndpointSchema,
  wireDeliverySchema,
  wireEndpointSchema,
} from "./wire";

const deliveriesQuery = pageQuery.extend({ status: z.enum(DELIVERY_STATUSES).optional() });

/** Webhook endpoints in the admin API (contract move-in §5.2), behind the admin secret (mounted by src/runtime/app.ts). */
export const webhookAdminRoutes = new Hono<AppEnv>()
  .post(
    "/webhooks",
    operation({
      summary: "Register a webhook endpoint",
      description:
        "Events are POSTed to `url`, signed per Standard Webhooks with `secret` (docs/webhooks.md), which is in this " +
        "answer only (kept sealed). `events` narrows the types delivered (empty or absent: all); an unknown type is " +
        "400. The URL must be https and name a public host (contract §1's outbound-URL policy): 400 otherwise. Audited.",
      security: "admin-secret",
      answers: { 201: { description: "The endpoint, with its secret.", schema: wireEndpointSchema } },
    }),
    jsonBody(createEndpointSchema),
    async (c) => {
      const endpoint = await createEndpoint(c.var.deps, c.req.valid("json"));
      auditAdminAction(c, "webhook.create", null, { endpointId: endpoint.id, url: endpoint.url });
      return c.json(endpoint, 201);
    },
  )
  .get(
    "/webhooks",
    operation({
      summary: "List webhook endpoints",
      description: "Oldest first; never their secrets.",
      security: "admin-secret",
      answers: { 200: { description: "A page of endpoints.", schema: pageSchema(wireEndpointSchema) } },
    }),
    queryParams(pageQuery),
    async (c) => c.json(await listEndpoints(c.var.deps, c.req.valid("query"))),
  )
  .get(
    "/webhooks/:id",
    operation({
      summary: "Get a webhook endpoint",
      description: "404 `not-found` for an unknown id.",
      security: "admin-secret",
      answers: { 200: { description: "The endpoint (never its secret).", schema: wireEndpointSchema } },
    }),
    async (c) => c.json(await getEndpoint(c.var.deps, c.req.param("id"))),
  )
  .patch(
    "/webhooks/:id",
    operation({
      summary: "Change a webhook endpoint",
      description:
        "Any of `url`, `events`, `description`, `disabled`; what the body leaves out stays. A disabled endpoint gets " +
        "no new delivery, and what was queued for it stays pending, unsent (redeliver sends it). Audited.",
      security: "admin-secret",
      answers: { 200: { description: "The endpoint as it is now.", schema: wireEndpointSchema } },
    }),
    jsonBody(updateEndpointSchema),
    async (c) => {
      const endpoint = await updateEndpoint(c.var.deps, c.req.param("id"), c.req.valid("json"));
      auditAdminAction(c, "webhook.update", null, { endpointId: endpoint.id });
      return c.json(endpoint);
    },
  )
  .delete(
    "/webhooks/:id",
    operation({
      summary: "Delete a webhook endpoint",
      description: "With its deliveries; nothing more is posted to it. Audited.",
      security: "admin-secret",
      answers: { 204: NO_CONTENT("Deleted.") },
    }),
    async (c) => {
      const id = c.req.param("id");
      await deleteEndpoint(c.var.deps, id);
      auditAdminAction(c, "webhook.delete", null, { endpointId: id });
      return c.body(null, 204);
    },
  )
  .get(
    "/webhooks/:id/deliveries",
    operation({
      summary: "List an endpoint's deliveries",
      description:
        "Newest first, each with its status (`pending`, `delivered`, `failed` once out of retries), attempts and " +
        "the receiver's last answer. `status` narrows the list.",
      security: "admin-secret",
      answers: { 200: { description: "A page of deliveries.", schema: pageSchema(wireDeliverySchema) } },
    }),
    queryParams(deliveriesQuery),
    async (c) => c.json(await listDeliveries(c.var.deps, c.req.param("id"), c.req.valid("query"))),
  )
  .post(
    "/webhooks/:id/deliveries/:deliveryId/redeliver",
    operation({
      summary: "Send a delivery again",
      description:
        "The delivery is pending again and queued at once, with a fresh set of retries; the receiver gets the same " +
        "`webhook-id` (the event id) as before. Audited.",
      security: "admin-secret",
      answers: { 202: { description: "Queued; the delivery as it is now.", schema: wireDeliverySchema } },
    }),
    async (c) => {
      const deps = c.var.deps;
      const endpointId = c.req.param("id");
      const delivery = await redeliver(
        { db: deps.db, queue: deps.env.WEBHOOK_DELIVERIES },
        endpointId,
        c.req.param("deliveryId"),
      );
      auditAdminAction(c, "webhook.redeliver", null, { endpointId, deliveryId: delivery.id });
      return c.json(delivery, 202);
    },
  );
