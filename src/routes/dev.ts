import { desc, eq } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../app-env";
import { devMailbox } from "../db/schema";
import { queryParams } from "../middleware/validate";

/** Development-only endpoints. Mounted only when `AUTH_DEV_MAILBOX=true`; otherwise these paths are 404. */
export const devRoutes = new Hono<AppEnv>().get(
  "/dev/mailbox",
  queryParams(z.object({ to: z.string().min(1).max(254) })),
  async (c) => {
    const rows = await c.var.deps.db
      .select()
      .from(devMailbox)
      .where(eq(devMailbox.to, c.req.valid("query").to.toLowerCase()))
      .orderBy(desc(devMailbox.id))
      .limit(100)
      .all();
    return c.json(
      rows.map(({ to, subject, text, html, createdAt }) => ({
        to,
        subject,
        text,
        html,
        createdAt: new Date(createdAt).toISOString(),
      })),
    );
  },
);
