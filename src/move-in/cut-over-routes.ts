import { Hono } from "hono";
import { z } from "zod";
import { auditAdminAction } from "../audit/admin-action";
import type { Config } from "../config";
import { AppError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { operation } from "../http/documented";
import { type CutOver, recordCutOver, recordedCutOver } from "../http/imported-tokens";
import { jsonBody } from "../http/validation";
import { IMPORTED_SYSTEMS, type ImportedSystem } from "../lib/imported-tokens";

/**
 * The recorded cut-over (contract supabase.md §6): when the app switched from the old system to this service. Until
 * one is recorded, the old system's access tokens are accepted nowhere; from it, only those issued no later than it,
 * and only until it plus `AUTH_IMPORTED_JWT_MAX_LIFETIME` (the ceiling). `npm run admin -- cut-over` calls it.
 */

/** A cut-over a little ahead of the server's clock is a clock's skew; further ahead it would let the old system mint on. */
const SKEW_MS = 60_000;

const requestSchema = z.object({
  at: z.iso
    .datetime({ offset: true })
    .optional()
    .describe("When the app switched (default: now); not in the future"),
  system: z
    .enum(IMPORTED_SYSTEMS)
    .default("nhost")
    .describe(
      "The system moved from: `nhost` (AUTH_IMPORTED_JWT_SECRET) or `supabase` (AUTH_IMPORTED_SUPABASE_JWT_SECRET and the old API keys)",
    ),
});

const cutOverViewSchema = z.object({
  system: z.enum(IMPORTED_SYSTEMS),
  at: z.string().describe("When the app switched: old tokens issued after it are refused"),
  recordedAt: z.string(),
  acceptedUntil: z
    .string()
    .describe(
      "The ceiling: the cut-over plus AUTH_IMPORTED_JWT_MAX_LIFETIME; after it no old token is accepted",
    ),
  secretSet: z
    .boolean()
    .describe("Whether the old system's secret is set, so its tokens can be accepted at all"),
});

const cutOversSchema = z.object({
  maxLifetime: z.number().int().describe("AUTH_IMPORTED_JWT_MAX_LIFETIME, seconds"),
  items: z.array(cutOverViewSchema),
});

const EXAMPLE = {
  system: "nhost",
  at: "2026-03-01T09:00:00.000Z",
  recordedAt: "2026-03-01T09:02:11.000Z",
  acceptedUntil: "2026-03-01T10:00:00.000Z",
  secretSet: true,
} as const;

function secretSetFor(config: Config, system: ImportedSystem): boolean {
  return system === "nhost" ? config.imported.secret !== null : config.supabase.imported !== null;
}

function viewOf(config: Config, cutOver: CutOver) {
  return {
    system: cutOver.system,
    at: new Date(cutOver.at).toISOString(),
    recordedAt: new Date(cutOver.recordedAt).toISOString(),
    acceptedUntil: new Date(cutOver.at + config.imported.maxLifetime * 1000).toISOString(),
    secretSet: secretSetFor(config, cutOver.system),
  };
}

/** Mounted by src/admin/app.ts, behind the admin secret. */
export const cutOverAdminRoutes = new Hono<AppEnv>()
  .get(
    "/import/cut-over",
    operation({
      summary: "Show the recorded cut-over",
      description:
        "Each system's recorded cut-over (none: its old access tokens are accepted nowhere), with the ceiling " +
        "after which none is accepted and its secret can be removed. See `POST /admin/import/cut-over`.",
      security: "admin-secret",
      answers: {
        200: {
          description: "The recorded cut-overs.",
          schema: cutOversSchema,
          example: { maxLifetime: 3600, items: [EXAMPLE] },
        },
      },
    }),
    async (c) => {
      const { config, db } = c.var.deps;
      const recorded = await Promise.all(IMPORTED_SYSTEMS.map((system) => recordedCutOver(db, system)));
      return c.json({
        maxLifetime: config.imported.maxLifetime,
        items: recorded.filter((cutOver) => cutOver !== null).map((cutOver) => viewOf(config, cutOver)),
      });
    },
  )
  .post(
    "/import/cut-over",
    operation({
      summary: "Record the cut-over",
      description:
        "Records when the app switched from the old system (`at`, default now; 400 `invalid-request` in the " +
        "future). From then on its access tokens (`AUTH_IMPORTED_JWT_SECRET`) are accepted, read-only, when issued " +
        "no later than `at`, for at most `AUTH_IMPORTED_JWT_MAX_LIFETIME` seconds, and never after `acceptedUntil`. " +
        "Recording again replaces it. Audited (`admin.import.cut-over`). The command " +
        "`npm run admin -- cut-over` calls it (docs/migrating-from-nhost.md).",
      security: "admin-secret",
      answers: {
        200: { description: "The cut-over as recorded.", schema: cutOverViewSchema, example: EXAMPLE },
      },
    }),
    jsonBody(requestSchema),
    async (c) => {
      const { at, system } = c.req.valid("json");
      const { config, db } = c.var.deps;
      const now = c.var.deps.now();
      const when = at === undefined ? now : Date.parse(at);
      if (when > now + SKEW_MS)
        throw new AppError(
          "invalid-request",
          "at: the cut-over cannot be in the future (record it when you switch)",
        );
      const cutOver: CutOver = { system, at: when, recordedAt: now };
      await recordCutOver(db, cutOver);
      const view = viewOf(config, cutOver);
      auditAdminAction(c, "import.cut-over", null, {
        system,
        at: view.at,
        acceptedUntil: view.acceptedUntil,
      });
      return c.json(view);
    },
  );
