import type { Context } from "hono";
import { Hono } from "hono";
import { z } from "zod";
import { auditAdminAction } from "../audit/admin-action";
import { type RekeyResult, rekeyCopy, rekeyFence, rekeyStatus, rekeySwitch } from "../db/directory-rekey";
import type { MoveScope } from "../db/slot-moves";
import type { AppEnv } from "../http/app-env";
import { operation } from "../http/documented";
import { jsonBody } from "../http/validation";
import { mapSchema } from "./shard-routes";

/**
 * The re-key of the directory's old layout in the admin API (docs/scaling.md, "A deployment that ran several shards
 * before"; src/db/directory-rekey.ts), for scripts/move-slots.mjs `--rekey-directory`: read where it is, fence the
 * next range, copy it page by page, switch.
 */

const cursor = z
  .object({ phase: z.enum(["copy", "purge"]), after: z.string().max(64) })
  .nullable()
  .default(null)
  .describe("The `cursor` of the previous answer (null or absent: start)");

const statusSchema = z.object({
  map: mapSchema,
  homeFrom: z
    .number()
    .int()
    .describe("The first slot whose directory keys are still at home (4096: all re-keyed, no marker)"),
});
const stepSchema = statusSchema.extend({
  cursor,
  waitMs: z.number().int().optional(),
  keys: z.number().int().optional().describe("Keys copied or removed by this call"),
});

const scopeOf = (c: Context<AppEnv>): MoveScope => ({
  env: c.env,
  names: c.var.config.shards,
  now: Date.now(),
});

const example = {
  map: {
    version: 2,
    ranges: [[0, 2047, "DB"] as [number, number, string], [2048, 4095, "DB_1"] as [number, number, string]],
    moving: null,
    leftover: null,
  },
  homeFrom: 2048,
};
const answers = (what: string) => ({
  200: { description: what, schema: stepSchema, example: { ...example, cursor: null } },
  400: { description: "The step does not apply now (nothing to re-key, a move under way…)." },
});

const stepOf = (c: Context<AppEnv>, action: string, result: RekeyResult) => {
  auditAdminAction(c, `shards.rekey-${action}`, null, { homeFrom: result.homeFrom, keys: result.keys ?? 0 });
  return c.json({ ...result, waitMs: result.waitMs === undefined ? undefined : Math.ceil(result.waitMs) });
};

export const rekeyAdminRoutes = new Hono<AppEnv>()
  .get(
    "/shards/directory",
    operation({
      summary: "Read where the directory's re-key is",
      description:
        "`homeFrom`: the directory keys of slots from this one on are still in the home database (the old layout " +
        "of a deployment that ran several shards before the directory was sharded by key); 4096: none are.",
      security: "admin-secret",
      answers: { 200: { description: "The map and the re-key's place.", schema: statusSchema, example } },
    }),
    async (c) => c.json(await rekeyStatus(scopeOf(c))),
  )
  .post(
    "/shards/directory/fence",
    operation({
      summary: "Fence the next slots for the directory's re-key",
      description:
        "Fences slots `homeFrom`–`last` (all in one shard): requests that need their keys or users wait until the " +
        "switch. A range of the home shard needs no copy: `homeFrom` passes it at once.",
      security: "admin-secret",
      answers: answers("The map with the fenced range, or the re-key past a range of the home shard."),
    }),
    jsonBody(z.object({ last: z.number().int().min(0).max(4095) })),
    async (c) => stepOf(c, "fence", await rekeyFence(scopeOf(c), c.req.valid("json"))),
  )
  .post(
    "/shards/directory/copy",
    operation({
      summary: "Re-key the fenced slots' keys, a page",
      description:
        "Once `graceMs` has passed since the fence: copies home's keys of the range to their shard, then removes " +
        "them from home, a page per call. Call again with `cursor` until it is null; `waitMs`: the fence is settling.",
      security: "admin-secret",
      answers: answers("The page done and where the next starts."),
    }),
    jsonBody(z.object({ graceMs: z.number().int().min(0).max(600_000).default(60_000), cursor })),
    async (c) => stepOf(c, "copy", await rekeyCopy(scopeOf(c), c.req.valid("json"))),
  )
  .post(
    "/shards/directory/switch",
    operation({
      summary: "Switch the re-keyed slots",
      description:
        "Lifts the fence and moves `homeFrom` past the range; at 4096 the old layout's marker is removed.",
      security: "admin-secret",
      answers: answers("The map and the re-key's place after the switch."),
    }),
    async (c) => stepOf(c, "switch", await rekeySwitch(scopeOf(c))),
  );
