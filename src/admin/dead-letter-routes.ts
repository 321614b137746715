import { Hono } from "hono";
import { z } from "zod";
import { auditAdminAction } from "../audit/admin-action";
import { redeliverDeadLetters } from "../events/dead-letters";
import type { AppEnv } from "../http/app-env";
import { operation } from "../http/documented";
import { pageQuery, pageSchema } from "../http/paging";
import { jsonBody, queryParams } from "../http/validation";
import { listDeadLetterPage, wireDeadLetterSchema } from "./dead-letters";

const redeliverBody = z.object({
  ids: z.array(z.string().min(1).max(200)).min(1).max(100).describe("Dead letters' ids, from the list"),
});

/** The event stream's dead letters in the admin API (contract move-in §5). */
export const deadLetterAdminRoutes = new Hono<AppEnv>()
  .get(
    "/events/dead-letters",
    operation({
      summary: "List dead letters",
      description:
        "Events and webhook deliveries that ran out of retries (about 59 hours of them), newest first. A webhook " +
        "delivery among them is `failed` in its endpoint's deliveries.",
      security: "admin-secret",
      answers: { 200: { description: "A page of dead letters.", schema: pageSchema(wireDeadLetterSchema) } },
    }),
    queryParams(pageQuery),
    async (c) => c.json(await listDeadLetterPage(c.var.deps, c.req.valid("query"))),
  )
  .post(
    "/events/dead-letters/redeliver",
    operation({
      summary: "Send dead letters again",
      description:
        "Each goes back to the queue it failed on, with a fresh set of retries, and leaves the list. Unknown ids are " +
        "skipped: `redelivered` counts those sent. Audited.",
      security: "admin-secret",
      answers: {
        202: {
          description: "Queued.",
          schema: z.object({ redelivered: z.number().int() }),
          example: { redelivered: 2 },
        },
      },
    }),
    jsonBody(redeliverBody),
    async (c) => {
      const { env, db } = c.var.deps;
      const { ids } = c.req.valid("json");
      const redelivered = await redeliverDeadLetters(
        db,
        { events: env.EVENTS, deliveries: env.WEBHOOK_DELIVERIES, logoutDeliveries: env.LOGOUT_DELIVERIES },
        ids,
      );
      auditAdminAction(c, "dead-letters.redeliver", null, { asked: ids.length, redelivered });
      return c.json({ redelivered }, 202);
    },
  );
