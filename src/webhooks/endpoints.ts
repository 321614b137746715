import { asc, eq } from "drizzle-orm";
import type { Config } from "../config";
import type { Db } from "../db/client";
import { webhookEndpoints } from "../db/schema";
import { AppError } from "../errors";
import { EVENT_TYPES, isEventType } from "../events/types";
import { type Page, pastCursor, toPage } from "../http/paging";
import { encrypt } from "../lib/crypto";
import { toHex } from "../lib/hex";
import { checkOutboundUrl, outboundPolicy } from "../lib/outbound-url";
import { newStandardWebhookSecret } from "../lib/standard-webhooks";
import { type CreateEndpointBody, toWireEndpoint, type UpdateEndpointBody, type WireEndpoint } from "./wire";

/**
 * Webhook endpoints (contract move-in §5.2): where events are posted. The signing secret is made here, shown in the
 * answer that made it and never again; it is kept sealed (AES-256-GCM under `AUTH_ENCRYPTION_KEY`), because signing
 * needs it in clear.
 */

export interface EndpointDeps {
  db: Db;
  config: Config;
  now: () => number;
}

export const randomId = (prefix: string) => `${prefix}${toHex(crypto.getRandomValues(new Uint8Array(16)))}`;

const notFound = () => new AppError("not-found", "no webhook endpoint with this id");

/**
 * The outbound-URL policy (contract auth.md §1) at registration, so that an operator learns at once that a URL will
 * never be posted to. It is checked again before every delivery, which is the check that counts.
 */
function checkedUrl(config: Config, url: string): string {
  const verdict = checkOutboundUrl(url, outboundPolicy(config));
  if (!verdict.ok)
    throw new AppError("invalid-request", `url: not a URL this service posts to: ${verdict.reason}`);
  return verdict.url.href;
}

/** Known event types, each once, in the stream's own order; unknown ones are named in the refusal. */
function checkedEvents(events: string[]): string[] {
  const unknown = [...new Set(events.filter((type) => !isEventType(type)))];
  if (unknown.length > 0) {
    throw new AppError(
      "invalid-request",
      `events: unknown event types: ${unknown.join(", ").slice(0, 300)} (known: ${EVENT_TYPES.join(", ")})`,
    );
  }
  return EVENT_TYPES.filter((type) => events.includes(type));
}

export async function createEndpoint(deps: EndpointDeps, body: CreateEndpointBody): Promise<WireEndpoint> {
  const url = checkedUrl(deps.config, body.url);
  const events = checkedEvents(body.events ?? []);
  const secret = newStandardWebhookSecret();
  const now = deps.now();
  const row = await deps.db
    .insert(webhookEndpoints)
    .values({
      id: randomId("wh_"),
      url,
      events,
      description: body.description ?? null,
      secretSealed: await encrypt(deps.config.secrets.encryptionKey, secret),
      createdAt: now,
      updatedAt: now,
    })
    .returning()
    .get();
  return toWireEndpoint(row, secret);
}

export async function listEndpoints(
  deps: Pick<EndpointDeps, "db">,
  query: { limit: number; cursor?: string },
): Promise<Page<WireEndpoint>> {
  const rows = await deps.db
    .select()
    .from(webhookEndpoints)
    .where(pastCursor(query.cursor, webhookEndpoints.createdAt, webhookEndpoints.id, "asc"))
    .orderBy(asc(webhookEndpoints.createdAt), asc(webhookEndpoints.id))
    .limit(query.limit + 1)
    .all();
  return toPage(
    rows,
    query.limit,
    (row) => [row.createdAt, row.id],
    (row) => toWireEndpoint(row),
  );
}

export async function getEndpoint(deps: Pick<EndpointDeps, "db">, id: string): Promise<WireEndpoint> {
  const row = await deps.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id)).get();
  if (!row) throw notFound();
  return toWireEndpoint(row);
}

export async function updateEndpoint(
  deps: EndpointDeps,
  id: string,
  body: UpdateEndpointBody,
): Promise<WireEndpoint> {
  const changes = {
    ...(body.url !== undefined ? { url: checkedUrl(deps.config, body.url) } : {}),
    ...(body.events !== undefined ? { events: checkedEvents(body.events) } : {}),
    ...(body.description !== undefined ? { description: body.description } : {}),
    ...(body.disabled !== undefined ? { disabled: body.disabled } : {}),
  };
  const row = await deps.db
    .update(webhookEndpoints)
    .set({ ...changes, updatedAt: deps.now() })
    .where(eq(webhookEndpoints.id, id))
    .returning()
    .get();
  if (!row) throw notFound();
  return toWireEndpoint(row);
}

/** Deletes the endpoint and its deliveries (ON DELETE CASCADE); messages still queued for it are acknowledged unsent. */
export async function deleteEndpoint(deps: Pick<EndpointDeps, "db">, id: string): Promise<void> {
  const gone = await deps.db
    .delete(webhookEndpoints)
    .where(eq(webhookEndpoints.id, id))
    .returning({ id: webhookEndpoints.id })
    .get();
  if (!gone) throw notFound();
}
