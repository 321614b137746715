import { Hono } from "hono";
import { z } from "zod";
import { auditAdminAction } from "../audit/admin-action";
import { AppError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { operation } from "../http/documented";
import { jsonBody } from "../http/validation";
import { MirrorUnreachable, openMirror } from "./postgres";
import { PAGE, PHASES, parseCursor, resyncPage } from "./resync";
import { ensureSchema, forgetSchema } from "./schema";

const resyncBody = z.object({
  cursor: z
    .string()
    .max(200)
    .optional()
    .describe("The `next` of the previous call; none to start from the beginning."),
});

const resyncAnswer = z.object({
  phase: z.enum(PHASES).describe("What this call did: pruned rows D1 no longer has, or wrote rows D1 has."),
  written: z.number().int(),
  deleted: z.number().int(),
  skipped: z.number().int().describe("Rows the mirror already had newer, or whose id is not a UUID."),
  next: z.string().nullable().describe("The cursor of the next call; null once the mirror is rebuilt."),
});

const unavailable = (message: string, reason: string) => new AppError("service-unavailable", message, reason);

/** The Postgres mirror's admin API (contract move-in §5.1), behind the admin secret (mounted by src/runtime/app.ts). */
export const mirrorAdminRoutes = new Hono<AppEnv>().post(
  "/mirror/resync",
  operation({
    summary: "Rebuild the Postgres mirror",
    description:
      `One page (up to ${PAGE} rows) of rebuilding the mirror's \`auth\` and \`storage\` tables from the service's ` +
      "own data: rows the service no longer has are deleted, the others upserted (tables are never dropped, so the " +
      "app's foreign keys hold), each recorded at its stream's current sequence so that events carry on from there. " +
      "Call again with `next` until it is null; `npm run admin -- mirror-resync` does (docs/hasura.md). " +
      "409 `disabled-endpoint` when `MIRROR_DB` is not configured; 503 `service-unavailable` when its Postgres cannot be reached.",
    security: "admin-secret",
    answers: { 200: { description: "What the page did, and where the next starts.", schema: resyncAnswer } },
  }),
  jsonBody(resyncBody),
  async (c) => {
    const { cursor } = c.req.valid("json");
    try {
      parseCursor(cursor);
    } catch {
      throw new AppError("invalid-request", "cursor: not a cursor this endpoint gave");
    }
    const binding = c.env.MIRROR_DB;
    // A missing setting is not "try again later" (a 503 would have the command retry forever): 409 naming it.
    if (!binding) {
      throw new AppError(
        "disabled-endpoint",
        "the Postgres mirror is not configured: bind MIRROR_DB (AUTH_MIRROR_DATABASE_URL for `npm start`; docs/hasura.md)",
      );
    }
    let client: Awaited<ReturnType<typeof openMirror>>;
    try {
      client = await openMirror(binding);
    } catch (error) {
      throw unavailable("the mirror's Postgres cannot be reached; try again shortly", String(error));
    }
    try {
      await ensureSchema(client);
      const page = await resyncPage({ sql: client, shards: c.var.deps.shards, now: c.var.deps.now }, cursor);
      if (!cursor) auditAdminAction(c, "mirror.resync");
      return c.json(page);
    } catch (error) {
      forgetSchema();
      if (error instanceof MirrorUnreachable || isConnectionLoss(error)) {
        throw unavailable("the mirror's Postgres cannot be reached; try again shortly", String(error));
      }
      throw unavailable("the mirror's Postgres refused this page; try again shortly", String(error));
    } finally {
      await client.end().catch(() => {});
    }
  },
);

/** pg's words for a connection that went away mid-query. */
const isConnectionLoss = (error: unknown) =>
  /terminat|Connection ended|ECONNRESET|ECONNREFUSED|timeout/i.test(
    String((error as Error)?.message ?? error),
  );
