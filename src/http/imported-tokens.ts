import { eq } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "../db/client";
import { serviceSettings, users } from "../db/schema";
import { AppError } from "../errors";
import {
  IMPORTED,
  IMPORTED_SYSTEMS,
  type ImportedSystem,
  type ImportedTokenPayload,
  verifyImportedToken,
} from "../lib/imported-tokens";
import { type AccessTokenPayload, HASURA_NAMESPACE, verifyAccessToken } from "../signing-keys/jwt";
import type { Deps } from "./deps";

/**
 * An old system's access tokens after a move (contract supabase.md §6), the part that needs the database: the
 * recorded cut-over (`npm run admin -- cut-over`, a `service_settings` row per system on the home database) and the
 * user's state here. An old token is accepted only when a cut-over is recorded, it was issued no later than the
 * cut-over, the ceiling (cut-over + `AUTH_IMPORTED_JWT_MAX_LIFETIME`) is not past, and its user exists, is not
 * disabled, and changed no credential here after the token was issued. What the token alone shows is checked in
 * src/lib/imported-tokens.ts; what an accepted one may do (read only) in src/http/auth.ts.
 */

const settingOf = (system: ImportedSystem) => `import-cut-over:${system}`;

export const cutOverSchema = z.object({
  system: z.enum(IMPORTED_SYSTEMS),
  /** When the app switched (milliseconds). */
  at: z.number().int(),
  /** When it was recorded (milliseconds). */
  recordedAt: z.number().int(),
});

export type CutOver = z.infer<typeof cutOverSchema>;

/** The recorded cut-over of `system`, read now; null when none is recorded (or the row is not one). */
export async function recordedCutOver(db: Db, system: ImportedSystem): Promise<CutOver | null> {
  const row = await db
    .select({ value: serviceSettings.value })
    .from(serviceSettings)
    .where(eq(serviceSettings.key, settingOf(system)))
    .get();
  const parsed = cutOverSchema.safeParse(row?.value);
  return parsed.success && parsed.data.system === system ? parsed.data : null;
}

/** Records (or records again) when the app switched away from `system`. */
export async function recordCutOver(db: Db, cutOver: CutOver): Promise<void> {
  await db
    .insert(serviceSettings)
    .values({ key: settingOf(cutOver.system), value: cutOver, updatedAt: cutOver.recordedAt })
    .onConflictDoUpdate({
      target: serviceSettings.key,
      set: { value: cutOver, updatedAt: cutOver.recordedAt },
    });
}

/** What the operator must hear, once per isolate: not per request, and not never. */
const said = new Set<string>();
function sayOnce(what: string, message: string): void {
  if (said.has(what)) return;
  said.add(what);
  console.warn(JSON.stringify({ level: "warn", what, message }));
}

/**
 * A session access token of this service, or an old system's token accepted under the rules above (marked with
 * `IMPORTED`); null for anything else. Every place that takes a user's access token goes through here.
 */
export async function verifyUserAccessToken(deps: Deps, token: string): Promise<AccessTokenPayload | null> {
  const own = await verifyAccessToken(deps.config, token);
  if (own) return own;
  const secret = deps.config.imported.secret;
  if (!secret) return null;
  const maxLifetime = deps.config.imported.maxLifetime;
  const imported = await verifyImportedToken(secret, token, HASURA_NAMESPACE, maxLifetime);
  return imported ? admitImported(deps, imported, maxLifetime) : null;
}

/** The setting that holds each old system's key, for the log. */
const SECRET_SETTING: Record<ImportedSystem, string> = {
  nhost: "AUTH_IMPORTED_JWT_SECRET",
  supabase: "AUTH_IMPORTED_SUPABASE_JWT_SECRET",
};

/**
 * An old system's token that its own checks passed (src/lib/imported-tokens.ts, imported-supabase-tokens.ts), admitted
 * under the recorded cut-over of its system and its user's state here; null when refused.
 */
export async function admitImported(
  deps: Deps,
  payload: ImportedTokenPayload,
  maxLifetime: number,
): Promise<AccessTokenPayload | null> {
  const system = payload[IMPORTED];
  const setting = SECRET_SETTING[system];
  const cutOver = await recordedCutOver(deps.db, system);
  if (!cutOver) {
    sayOnce(
      `imported-tokens.${system}.no-cut-over`,
      `${setting} is set but no cut-over is recorded: the old system's tokens are accepted nowhere until ` +
        `\`npm run admin -- cut-over --system ${system}\` records the switch (docs/migrating-from-${system}.md)`,
    );
    return null;
  }
  const now = deps.now();
  if (now >= cutOver.at + maxLifetime * 1000) {
    sayOnce(
      `imported-tokens.${system}.past-ceiling`,
      `${setting} no longer works: the cut-over (${new Date(cutOver.at).toISOString()}) plus ` +
        `AUTH_IMPORTED_JWT_MAX_LIFETIME (${maxLifetime} s) is past, so no old token can be valid: remove ${setting}`,
    );
    return null;
  }
  const issuedAt = payload.iat * 1000;
  if (payload.exp * 1000 <= now || issuedAt > cutOver.at) return null;
  const user = await deps.shards
    .ofUser(payload.sub)
    .select({
      disabled: users.disabled,
      passwordChangedAt: users.passwordChangedAt,
      credentialsChangedAt: users.credentialsChangedAt,
      roles: users.roles,
      defaultRole: users.defaultRole,
    })
    .from(users)
    .where(eq(users.id, payload.sub))
    .get();
  if (!user || user.disabled) return null;
  // The owner changed a password, signed out everywhere or changed a factor after the token was issued: that is the
  // remedy for a token someone else holds, and it must work on old tokens too.
  if (Math.max(user.passwordChangedAt ?? 0, user.credentialsChangedAt ?? 0) >= issuedAt) return null;
  return { ...payload, [HASURA_NAMESPACE]: rolesHere(payload, user) } as AccessTokenPayload;
}

/**
 * The token's Hasura claims with its roles narrowed to those the user has here: the old key, shared widely, could
 * have signed any role (`admin` for storage's role rules), and an old token is never worth more than the account.
 */
function rolesHere(payload: ImportedTokenPayload, user: { roles: string[]; defaultRole: string }) {
  const claims = payload[HASURA_NAMESPACE] as Record<string, unknown>;
  const asked = Array.isArray(claims["x-hasura-allowed-roles"]) ? claims["x-hasura-allowed-roles"] : [];
  const allowed = user.roles.filter((role) => asked.includes(role));
  const named = claims["x-hasura-default-role"];
  const defaultRole = typeof named === "string" && allowed.includes(named) ? named : user.defaultRole;
  return {
    ...claims,
    "x-hasura-allowed-roles": allowed.includes(defaultRole) ? allowed : [defaultRole, ...allowed],
    "x-hasura-default-role": defaultRole,
  };
}

/** The system whose token this is, or null for the service's own. */
export const importedSystemOf = (payload: AccessTokenPayload | null | undefined): ImportedSystem | null =>
  payload?.[IMPORTED] ?? null;

/** The refusal of anything an old token may not do (supabase.md §6). */
export const importedTokenRefusal = () =>
  new AppError("forbidden", "a token of the previous system cannot change credentials");
