import type { Context } from "hono";
import { Hono } from "hono";
import { z } from "zod";
import { auditAdminAction } from "../audit/admin-action";
import { type BuildResult, buildBegin, buildCopy, buildStatus } from "../db/directory-build";
import type { MoveScope } from "../db/slot-moves";
import type { AppEnv } from "../http/app-env";
import { operation } from "../http/documented";
import { jsonBody } from "../http/validation";
import { mapSchema } from "./shard-routes";

/**
 * The build of a one-shard deployment's directory in the admin API (docs/scaling.md, "Growing from one shard";
 * src/db/directory-build.ts), for scripts/move-slots.mjs `--build-directory`: read where it is, begin, copy page by
 * page (the marker goes with the last page).
 */

const slotRow = z.array(z.number().int().min(0)).length(2).describe("`[source, rowid]`: a row to try again");
const cursor = z
  .object({
    since: z.number().int().min(0),
    source: z.number().int().min(0).max(100),
    after: z.number().int().min(0),
    retry: z.array(slotRow).max(400),
  })
  .nullable()
  .default(null)
  .describe("The `cursor` of the previous answer (null or absent: start the pass)");

const statusSchema = z.object({
  map: mapSchema,
  since: z
    .number()
    .int()
    .nullable()
    .describe(
      "When every isolate was asked to write keys (0: not begun); null: no build, the directory is complete",
    ),
});
const stepSchema = statusSchema.extend({
  cursor,
  waitMs: z.number().int().optional().describe("Call again after this long: the grace, or a claim in flight"),
  keys: z.number().int().optional().describe("Keys written by this call"),
});

const scopeOf = (c: Context<AppEnv>): MoveScope => ({
  env: c.env,
  names: c.var.config.shards,
  now: Date.now(),
});

const example = {
  map: { version: 1, ranges: [[0, 4095, "DB"] as [number, number, string]], moving: null, leftover: null },
  since: 1767225600000,
};
const answers = (what: string) => ({
  200: { description: what, schema: stepSchema, example: { ...example, cursor: null } },
  400: { description: "The step does not apply now (no build, one shard listed, a move under way…)." },
});

const stepOf = (c: Context<AppEnv>, action: string, result: BuildResult) => {
  auditAdminAction(c, `shards.build-${action}`, null, { since: result.since, keys: result.keys ?? 0 });
  return c.json({ ...result, waitMs: result.waitMs === undefined ? undefined : Math.ceil(result.waitMs) });
};

export const buildAdminRoutes = new Hono<AppEnv>()
  .get(
    "/shards/directory/build",
    operation({
      summary: "Read where the directory's build is",
      description:
        "`since`: the build of a deployment that ran one shard is under way (0: pinned, not begun); null: none, " +
        "every user's keys are in the directory.",
      security: "admin-secret",
      answers: { 200: { description: "The map and the build's state.", schema: statusSchema, example } },
    }),
    async (c) => c.json(await buildStatus(scopeOf(c))),
  )
  .post(
    "/shards/directory/build/begin",
    operation({
      summary: "Begin the directory's build",
      description:
        "Once the Worker lists the new shard (and every slot is still in the home shard, pinned with one shard): " +
        "records now, after which the copy may run once `graceMs` has passed. Run again, it starts over.",
      security: "admin-secret",
      answers: answers("The build's new start."),
    }),
    async (c) => stepOf(c, "begin", await buildBegin(scopeOf(c))),
  )
  .post(
    "/shards/directory/build/copy",
    operation({
      summary: "Build the directory, a page",
      description:
        "Writes the keys of the home shard's users, identities, imported tokens and files, a page per call. Call " +
        "again with `cursor` until it is null (then `since` is null: the build is done); `waitMs`: the grace since " +
        "`begin`, or a claim in flight on a key a row holds.",
      security: "admin-secret",
      answers: answers("The page done and where the next starts."),
    }),
    jsonBody(z.object({ graceMs: z.number().int().min(0).max(600_000).default(60_000), cursor })),
    async (c) => stepOf(c, "copy", await buildCopy(scopeOf(c), c.req.valid("json"))),
  );
