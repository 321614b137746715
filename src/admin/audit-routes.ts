import { Hono } from "hono";
import { z } from "zod";
import { ACTOR_KINDS } from "../audit/actor";
import type { AppEnv } from "../http/app-env";
import { operation } from "../http/documented";
import { pageQuery, pageSchema } from "../http/paging";
import { queryParams } from "../http/validation";
import { listAuditEvents } from "./audit";
import { auditEventSchema } from "./wire";

/** A moment as the audit's filters take it: ISO 8601, a date-time with its offset or a day (UTC midnight). */
const moment = z
  .union([z.iso.datetime({ offset: true }), z.iso.date()])
  .transform((value) => Date.parse(/T/.test(value) ? value : `${value}T00:00:00Z`))
  .describe("ISO 8601: 2026-11-29T08:00:00Z, or a day, 2026-11-29");

/** `GET /admin/audit`'s query, and `AuthAdmin.listAudit`'s. */
export const auditQuery = pageQuery
  .extend({
    userId: z.string().max(100).optional(),
    type: z.string().max(100).optional(),
    actor: z
      .enum(ACTOR_KINDS)
      .optional()
      .describe(`Who acted: ${ACTOR_KINDS.join(", ")}`),
    since: moment.optional().describe("From this moment on, inclusive"),
    until: moment.optional().describe("Before this moment, exclusive"),
  })
  .refine((query) => query.since === undefined || query.until === undefined || query.since < query.until, {
    message: "since must be before until",
    path: ["since"],
  });

/** The audit log in the admin API (contract §10, operators.md §4). */
export const auditAdminRoutes = new Hono<AppEnv>().get(
  "/audit",
  operation({
    summary: "The audit log",
    description:
      "Security events, newest first: sign-ins and their failures, sign-ups, credential changes, admin actions; " +
      "each names its actor, subject, address, user agent, outcome and reason code. Filter by `actor`, `userId`, " +
      "`type` and a time range (`since` inclusive, `until` exclusive); page with `limit` and the opaque `cursor`. " +
      "Kept `AUTH_AUDIT_RETENTION_DAYS`.",
    security: "admin-secret",
    answers: { 200: { description: "A page of events.", schema: pageSchema(auditEventSchema) } },
  }),
  queryParams(auditQuery),
  async (c) => c.json(await listAuditEvents(c.var.deps, c.req.valid("query"))),
);
