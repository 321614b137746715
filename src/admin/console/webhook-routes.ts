import { Hono } from "hono";
import { auditAdminAction } from "../../audit/admin-action";
import { AppError } from "../../errors";
import { redeliverDeadLetters } from "../../events/dead-letters";
import type { AppEnv } from "../../http/app-env";
import { describeIssues } from "../../http/validation";
import {
  createEndpoint,
  createEndpointSchema,
  deleteEndpoint,
  getEndpoint,
  listDeliveries,
  listEndpoints,
  redeliver,
  updateEndpoint,
  type WireEndpoint,
} from "../../webhooks";
import { countDeadLetters, listDeadLetterPage } from "../dead-letters";
import { action, back, type Ctx, chromeOf, page, render } from "./handlers";
import { deadLettersPage, webhookPage, webhooksPage } from "./pages-webhooks";
import type { ConsoleSession } from "./session";

/**
 * Webhooks and dead letters in the console: the admin API's services and rules, every change audited like the API's.
 * A new endpoint's secret is shown on the page that answers the post, once, never in a URL.
 */

const endpointPath = (id: string) => `/webhooks/${encodeURIComponent(id)}`;
const STATUSES = ["pending", "delivered", "failed"] as const;

/** The form as the admin API's body: the event types as checkboxes, an empty description as none. */
async function endpointBody(c: Ctx) {
  const form = await c.req.parseBody({ all: true });
  const one = (name: string) => (typeof form[name] === "string" ? (form[name] as string).trim() : "");
  const events = [form.events ?? []].flat().filter((item): item is string => typeof item === "string");
  const parsed = createEndpointSchema.safeParse({
    url: one("url").slice(0, 2100),
    events,
    description: one("description").slice(0, 500) || null,
  });
  if (!parsed.success) throw new AppError("invalid-request", describeIssues(parsed.error.issues));
  return parsed.data;
}

async function showEndpoint(
  c: Ctx,
  session: ConsoleSession,
  endpoint: WireEndpoint,
  options: { secret?: string; error?: string } = {},
  status: 200 | 400 = 200,
) {
  const asked = c.req.query("status");
  const wanted = STATUSES.find((known) => known === asked);
  const deliveries = await listDeliveries(c.var.deps, endpoint.id, {
    limit: 50,
    cursor: c.req.query("cursor") || undefined,
    status: wanted,
  });
  const chrome = await chromeOf(c, session, "webhooks");
  return render(
    c,
    endpoint.description ?? "Webhook endpoint",
    webhookPage(chrome, endpoint, { ...deliveries, status: wanted }, options),
    status,
  );
}

async function showEndpoints(c: Ctx, session: ConsoleSession, error?: string) {
  const deps = c.var.deps;
  const endpoints = await listEndpoints(deps, { limit: 500 });
  const chrome = await chromeOf(c, session, "webhooks");
  return render(
    c,
    "Webhooks",
    webhooksPage(chrome, endpoints.items, await countDeadLetters(deps), { error }),
    error ? 400 : 200,
  );
}

/** Refusals (a bad URL, an unknown type) show on the form's page; faults go on to the console's fault page. */
const refusal = (error: unknown) => (error instanceof AppError && error.status < 500 ? error.message : null);

export const consoleWebhookRoutes = new Hono<AppEnv>()
  .get(
    "/webhooks",
    page((c, session) => showEndpoints(c, session)),
  )
  .post(
    "/webhooks/create",
    action(async (c, session) => {
      try {
        const endpoint = await createEndpoint(c.var.deps, await endpointBody(c));
        auditAdminAction(c, "webhook.create", null, { endpointId: endpoint.id, url: endpoint.url });
        return showEndpoint(c, session, endpoint, { secret: endpoint.secret });
      } catch (error) {
        const message = refusal(error);
        if (message === null) throw error;
        return showEndpoints(c, session, message);
      }
    }),
  )
  .get(
    "/webhooks/:id",
    page(async (c, session) => showEndpoint(c, session, await getEndpoint(c.var.deps, c.req.param("id")!))),
  )
  .post(
    "/webhooks/:id/edit",
    action(async (c, session) => {
      const id = c.req.param("id")!;
      const current = await getEndpoint(c.var.deps, id);
      try {
        await updateEndpoint(c.var.deps, id, await endpointBody(c));
        auditAdminAction(c, "webhook.update", null, { endpointId: id });
        return back(c, endpointPath(id), "saved");
      } catch (error) {
        const message = refusal(error);
        if (message === null) throw error;
        return showEndpoint(c, session, current, { error: message }, 400);
      }
    }),
  )
  .post(
    "/webhooks/:id/disable",
    action(async (c) => {
      const id = c.req.param("id")!;
      await updateEndpoint(c.var.deps, id, { disabled: true });
      auditAdminAction(c, "webhook.update", null, { endpointId: id, disabled: true });
      return back(c, endpointPath(id), "webhook-disabled");
    }),
  )
  .post(
    "/webhooks/:id/enable",
    action(async (c) => {
      const id = c.req.param("id")!;
      await updateEndpoint(c.var.deps, id, { disabled: false });
      auditAdminAction(c, "webhook.update", null, { endpointId: id, disabled: false });
      return back(c, endpointPath(id), "webhook-enabled");
    }),
  )
  .post(
    "/webhooks/:id/delete",
    action(async (c) => {
      const form = await c.req.parseBody();
      if (form.confirm !== "yes") throw new AppError("invalid-request", "confirm the deletion");
      const id = c.req.param("id")!;
      await deleteEndpoint(c.var.deps, id);
      auditAdminAction(c, "webhook.delete", null, { endpointId: id });
      return back(c, "/webhooks", "webhook-deleted");
    }),
  )
  .post(
    "/webhooks/:id/deliveries/:deliveryId/redeliver",
    action(async (c) => {
      const deps = c.var.deps;
      const id = c.req.param("id")!;
      const delivery = await redeliver(
        { db: deps.db, queue: deps.env.WEBHOOK_DELIVERIES },
        id,
        c.req.param("deliveryId")!,
      );
      auditAdminAction(c, "webhook.redeliver", null, { endpointId: id, deliveryId: delivery.id });
      return back(c, endpointPath(id), "redelivered");
    }),
  )
  .get(
    "/dead-letters",
    page(async (c, session) => {
      const letters = await listDeadLetterPage(c.var.deps, {
        limit: 100,
        cursor: c.req.query("cursor") || undefined,
      });
      const chrome = await chromeOf(c, session, "webhooks");
      return render(c, "Dead letters", deadLettersPage(chrome, letters.items, letters.nextCursor));
    }),
  )
  .post(
    "/dead-letters/redeliver",
    action(async (c) => {
      const form = await c.req.parseBody({ all: true });
      const ids = [form.ids ?? []]
        .flat()
        .filter((id): id is string => typeof id === "string")
        .slice(0, 100);
      if (ids.length === 0) throw new AppError("invalid-request", "pick at least one dead letter");
      const { db, env } = c.var.deps;
      const redelivered = await redeliverDeadLetters(
        db,
        { events: env.EVENTS, deliveries: env.WEBHOOK_DELIVERIES, logoutDeliveries: env.LOGOUT_DELIVERIES },
        ids,
      );
      auditAdminAction(c, "dead-letters.redeliver", null, { asked: ids.length, redelivered });
      return back(c, "/dead-letters", "dead-letters-redelivered");
    }),
  );
