import { eq } from "drizzle-orm";
import { Hono } from "hono";
import { decodeJwt } from "jose";
import { z } from "zod";
import { auditAdminAction } from "../../audit/admin-action";
import { serviceSettings } from "../../db/schema";
import { AppError } from "../../errors";
import type { AppEnv } from "../../http/app-env";
import type { Deps } from "../../http/deps";
import { operation } from "../../http/documented";
import { recordedCutOver } from "../../http/imported-tokens";
import { jsonBody } from "../../http/validation";
import { sha256Hex, timingSafeEqualString } from "../../lib/crypto";

/**
 * The old Supabase project's two legacy API keys after a move (contract supabase.md §1, §5): the `anon` and
 * `service_role` JWTs an app was built with. Only the exact strings given to the import are honoured (recorded here
 * as SHA-256 hashes, compared in constant time), only on this face, as the publishable and the secret key
 * respectively, and only from the recorded `supabase` cut-over until its ceiling (cut-over + AUTH_IMPORTED_JWT_MAX_
 * LIFETIME: the same clock as the old access tokens). No other JWT under the old secret confers anything: the old
 * secret is never used to check a key, so a key minted with it after a leak is worth nothing here.
 */

const SETTING = "import-supabase-api-keys";

/** api-keys.ts's roles (which imports this file). */
type KeyRole = "anon" | "service_role";

const storedSchema = z.object({
  anon: z.string().nullable(),
  serviceRole: z.string().nullable(),
  recordedAt: z.number().int(),
});

type Stored = z.infer<typeof storedSchema>;

/** A legacy key is a JWT; its role claim says which it is (read, not verified: the hash is what is checked). */
function roleOfKey(key: string): string | null {
  try {
    const role = decodeJwt(key).role;
    return typeof role === "string" ? role : null;
  } catch {
    return null;
  }
}

/**
 * The recorded hashes, read once per isolate and minute: an app's every request carries its key, and a key that is
 * none of the recorded ones must not be a database read each time. The cut-over is read when a recorded key came (as
 * for an old access token, src/http/imported-tokens.ts), so a key stops at its ceiling to the request.
 */
let cached: { at: number; keys: Stored | null } | null = null;
const CACHE_MS = 60_000;

async function readKeys(deps: Deps): Promise<Stored | null> {
  const row = await deps.db
    .select({ value: serviceSettings.value })
    .from(serviceSettings)
    .where(eq(serviceSettings.key, SETTING))
    .get();
  const parsed = storedSchema.safeParse(row?.value);
  return parsed.success ? parsed.data : null;
}

async function recordedKeys(deps: Deps): Promise<Stored | null> {
  const now = deps.now();
  if (!cached || now - cached.at >= CACHE_MS) cached = { at: now, keys: await readKeys(deps) };
  return cached.keys;
}

/**
 * The role an old key confers now, or null: it is one of the recorded ones, a `supabase` cut-over is recorded, and its
 * ceiling is not past. Only JWT-shaped strings are looked up.
 */
export async function oldKeyRole(deps: Deps, given: string): Promise<KeyRole | null> {
  if (!given.startsWith("eyJ") || given.length > 4096) return null;
  const keys = await recordedKeys(deps);
  if (!keys) return null;
  const hash = await sha256Hex(given);
  const anon = keys.anon !== null && timingSafeEqualString(hash, keys.anon);
  const service = keys.serviceRole !== null && timingSafeEqualString(hash, keys.serviceRole);
  if (!anon && !service) return null;
  const cutOver = await recordedCutOver(deps.db, "supabase");
  if (!cutOver || deps.now() >= cutOver.at + deps.config.imported.maxLifetime * 1000) return null;
  return service ? "service_role" : "anon";
}

/** After a recording: seen at once in this isolate (others within the minute). */
function forgetRecordedKeys(): void {
  cached = null;
}

const requestSchema = z
  .object({
    anonKey: z.string().min(20).max(4096).optional().describe("The old project's `anon` key (a JWT)"),
    serviceRoleKey: z
      .string()
      .min(20)
      .max(4096)
      .optional()
      .describe("The old project's `service_role` key (a JWT)"),
  })
  .refine((body) => body.anonKey || body.serviceRoleKey, "give anonKey, serviceRoleKey or both");

const viewSchema = z.object({
  anonKey: z.boolean().describe("Whether an anon key is recorded"),
  serviceRoleKey: z.boolean().describe("Whether a service_role key is recorded"),
  recordedAt: z.string(),
});

const viewOf = (stored: Stored) => ({
  anonKey: stored.anon !== null,
  serviceRoleKey: stored.serviceRole !== null,
  recordedAt: new Date(stored.recordedAt).toISOString(),
});

/** Mounted under the admin API (behind the admin secret) by the face's feature. */
export const oldApiKeyAdminRoutes = new Hono<AppEnv>().post(
  "/import/supabase/api-keys",
  operation({
    summary: "Record the old Supabase project's API keys",
    description:
      "Records the SHA-256 of the old project's legacy `anon` and `service_role` keys (the JWTs, never kept " +
      "themselves): on the Supabase face they stand for the publishable and the secret key from the recorded " +
      "`supabase` cut-over until its ceiling. A key whose `role` claim is not the one named is refused (400 " +
      "`invalid-request`). A key left out keeps what was recorded. Audited (`admin.import.supabase-api-keys`). " +
      "`npm run admin -- import-supabase` calls it with SUPABASE_ANON_KEY and SUPABASE_SERVICE_KEY from its environment.",
    security: "admin-secret",
    answers: {
      200: {
        description: "What is recorded now.",
        schema: viewSchema,
        example: { anonKey: true, serviceRoleKey: true, recordedAt: "2026-03-01T09:00:00.000Z" },
      },
    },
  }),
  jsonBody(requestSchema),
  async (c) => {
    const { anonKey, serviceRoleKey } = c.req.valid("json");
    if (anonKey && roleOfKey(anonKey) !== "anon")
      throw new AppError(
        "invalid-request",
        "anonKey: not the project's anon key (its role claim is not anon)",
      );
    if (serviceRoleKey && roleOfKey(serviceRoleKey) !== "service_role")
      throw new AppError(
        "invalid-request",
        "serviceRoleKey: not the project's service_role key (its role claim is not service_role)",
      );
    const { deps } = c.var;
    const before = await readKeys(deps);
    const stored: Stored = {
      anon: anonKey ? await sha256Hex(anonKey) : (before?.anon ?? null),
      serviceRole: serviceRoleKey ? await sha256Hex(serviceRoleKey) : (before?.serviceRole ?? null),
      recordedAt: deps.now(),
    };
    await deps.db
      .insert(serviceSettings)
      .values({ key: SETTING, value: stored, updatedAt: stored.recordedAt })
      .onConflictDoUpdate({
        target: serviceSettings.key,
        set: { value: stored, updatedAt: stored.recordedAt },
      });
    forgetRecordedKeys();
    auditAdminAction(c, "import.supabase-api-keys", null, {
      anonKey: Boolean(anonKey),
      serviceRoleKey: Boolean(serviceRoleKey),
    });
    return c.json(viewOf(stored));
  },
);
