import type { Context } from "hono";
import { Hono } from "hono";
import { z } from "zod";
import { auditAdminAction } from "../audit/admin-action";
import {
  abort,
  copy,
  currentMap,
  fence,
  type MoveScope,
  pin,
  purge,
  type StepResult,
  switchOver,
} from "../db/slot-moves";
import { MOVED_TABLES } from "../db/slot-tables";
import type { AppEnv } from "../http/app-env";
import { operation } from "../http/documented";
import { jsonBody } from "../http/validation";

/**
 * The slot mover's steps in the admin API (docs/scaling.md, "Growing the shard list"; src/db/slot-moves.ts), for
 * scripts/move-slots.mjs: read the map, pin it, fence a range, copy it page by page, switch, purge (or abort).
 */

const slot = z.number().int().min(0).max(4095);
const cursor = z
  .object({
    phase: z.enum(["clear", "copy"]),
    table: z.number().int().min(0).max(1000),
    after: z.number().int().min(0),
  })
  .nullable()
  .default(null)
  .describe("The `cursor` of the previous answer (null or absent: start)");

export const mapSchema = z.object({
  version: z.number().int(),
  ranges: z
    .array(z.array(z.union([z.number().int(), z.string()])).length(3))
    .describe("`[first, last, binding]`: slots first–last (both included) are in that D1 binding"),
  moving: z
    .object({
      first: z.number().int(),
      last: z.number().int(),
      from: z.string(),
      to: z.string(),
      since: z.number().int(),
      copied: z.boolean(),
      rekey: z.boolean().optional().describe("A re-key of the directory's old layout, not a move"),
    })
    .nullable(),
  leftover: z.object({ first: z.number().int(), last: z.number().int(), from: z.string() }).nullable(),
});
const stepSchema = z.object({
  map: mapSchema,
  cursor: cursor,
  waitMs: z.number().int().optional(),
  rows: z
    .object(Object.fromEntries(MOVED_TABLES.map(({ table }) => [table, z.number().int().optional()])))
    .optional()
    .describe("Rows copied or removed by this call, by table"),
});

const scopeOf = (c: Context<AppEnv>): MoveScope => ({
  env: c.env,
  names: c.var.config.shards,
  now: Date.now(),
});

const example = {
  version: 3,
  ranges: [[0, 2047, "DB"] as [number, number, string], [2048, 4095, "DB_1"] as [number, number, string]],
  moving: null,
  leftover: null,
};

const answers = (what: string) => ({
  200: { description: what, schema: stepSchema, example: { map: example, cursor: null } },
  400: { description: "The step does not apply now (another move under way, nothing fenced…)." },
});

const stepOf = (c: Context<AppEnv>, action: string, result: StepResult) => {
  auditAdminAction(c, `shards.${action}`, null, { version: result.map.version, rows: result.rows ?? {} });
  return c.json({ ...result, waitMs: result.waitMs === undefined ? undefined : Math.ceil(result.waitMs) });
};

export const shardAdminRoutes = new Hono<AppEnv>()
  .get(
    "/shards/slots",
    operation({
      summary: "Read the slot map",
      description:
        "Which shard (D1 binding of `AUTH_D1_SHARDS`) holds each range of the 4,096 slots, the range being moved " +
        "and the range whose old rows are still to be removed. Version 0: no map stored, the default split.",
      security: "admin-secret",
      answers: { 200: { description: "The map.", schema: mapSchema, example } },
    }),
    async (c) => c.json(await currentMap(scopeOf(c))),
  )
  .post(
    "/shards/slots/pin",
    operation({
      summary: "Pin the slot map",
      description:
        "Stores today's split of the slots, once, so that the shard list can grow without moving anything. Run it " +
        "before deploying a longer `AUTH_D1_SHARDS`.",
      security: "admin-secret",
      answers: answers("The stored map."),
    }),
    async (c) => stepOf(c, "pin", { map: await pin(scopeOf(c)), cursor: null }),
  )
  .post(
    "/shards/slots/fence",
    operation({
      summary: "Fence slots for a move",
      description:
        "Marks slots `first`–`last` (all in one shard) as moving to `to`. Requests that need them wait until the " +
        "switch, inside the request.",
      security: "admin-secret",
      answers: answers("The map with the fenced range."),
    }),
    jsonBody(z.object({ first: slot, last: slot, to: z.string().min(1).max(64) })),
    async (c) => stepOf(c, "fence", { map: await fence(scopeOf(c), c.req.valid("json")), cursor: null }),
  )
  .post(
    "/shards/slots/copy",
    operation({
      summary: "Copy the fenced slots, a page",
      description:
        "Once `graceMs` (longer than any request runs) has passed since the fence: removes the target's stale rows " +
        "of the range, then copies the source's, a page per call. Call again with `cursor` until it is null; " +
        "`waitMs` says the fence is still settling.",
      security: "admin-secret",
      answers: answers("The page done and where the next starts."),
    }),
    jsonBody(z.object({ graceMs: z.number().int().min(0).max(600_000).default(60_000), cursor })),
    async (c) => stepOf(c, "copy", await copy(scopeOf(c), c.req.valid("json"))),
  )
  .post(
    "/shards/slots/switch",
    operation({
      summary: "Switch the copied slots",
      description:
        "The copied range belongs to its target from now on; the requests waiting for it go on there.",
      security: "admin-secret",
      answers: answers("The map after the switch."),
    }),
    async (c) => stepOf(c, "switch", { map: await switchOver(scopeOf(c)), cursor: null }),
  )
  .post(
    "/shards/slots/purge",
    operation({
      summary: "Remove the moved slots' old rows, a page",
      description:
        "Removes the old copies from the shard the range left. Call again with `cursor` until it is null.",
      security: "admin-secret",
      answers: answers("The page done and where the next starts."),
    }),
    jsonBody(z.object({ cursor })),
    async (c) => stepOf(c, "purge", await purge(scopeOf(c), c.req.valid("json"))),
  )
  .post(
    "/shards/slots/abort",
    operation({
      summary: "Abort a move",
      description:
        "Instead of the switch: removes what the copy wrote in the target, a page per call, then lifts the fence.",
      security: "admin-secret",
      answers: answers("The page done and where the next starts."),
    }),
    jsonBody(z.object({ cursor })),
    async (c) => stepOf(c, "abort", await abort(scopeOf(c), c.req.valid("json"))),
  );
