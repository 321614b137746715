import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../http/app-env";
import { operation } from "../http/documented";
import { pageQuery, pageSchema } from "../http/paging";
import { queryParams } from "../http/validation";
import { listAuditEvents } from "./audit";
import { auditEventSchema } from "./wire";

/** `GET /admin/audit`'s query, and `AuthAdmin.listAudit`'s. */
export const auditQuery = pageQuery.extend({
  userId: z.string().max(100).optional(),
  type: z.string().max(100).optional(),
});

/** The audit log in the admin API (contract §10). */
export const auditAdminRoutes = new Hono<AppEnv>().get(
  "/audit",
  operation({
    summary: "The audit log",
    description:
      "Security events, newest first: sign-ins and their failures, sign-ups, credential changes, admin actions. " +
      "Filter by `userId` and `type`; kept `AUTH_AUDIT_RETENTION_DAYS`.",
    security: "admin-secret",
    answers: { 200: { description: "A page of events.", schema: pageSchema(auditEventSchema) } },
  }),
  queryParams(auditQuery),
  async (c) => c.json(await listAuditEvents(c.var.deps, c.req.valid("query"))),
);
