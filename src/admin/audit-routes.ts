import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../http/app-env";
import { pageQuery } from "../http/paging";
import { queryParams } from "../http/validation";
import { listAuditEvents } from "./audit";

const auditQuery = pageQuery.extend({
  userId: z.string().max(100).optional(),
  type: z.string().max(100).optional(),
});

/** The audit log in the admin API (contract §10). */
export const auditAdminRoutes = new Hono<AppEnv>().get("/audit", queryParams(auditQuery), async (c) =>
  c.json(await listAuditEvents(c.var.deps, c.req.valid("query"))),
);
