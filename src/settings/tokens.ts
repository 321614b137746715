import { z } from "zod";
import { parseImportedJwtSecret } from "../lib/imported-tokens";
import { seconds, settingsSlice } from "./kit";

/**
 * The tokens the service issues and accepts: lifetimes, the custom claims of its access tokens (contract move-in §4),
 * its signing keys, and the old system's secret it accepts for a while after a move (contract supabase.md §6).
 */

/**
 * Claim names the service sets itself (`x-hasura-<name>`, contract §5.1, organizations §1). A custom claim with one
 * of these names would put a value of the user's choosing where the service's own decision belongs: `auth-elevated`
 * mapped to `id` forged elevation on every token. A name given with its `x-hasura-` prefix counts the same.
 */
const RESERVED_CLAIMS = [
  "user-id",
  "default-role",
  "allowed-roles",
  "user-is-anonymous",
  "auth-elevated",
  "role",
  "org-id",
  "org-role",
];

/**
 * A path of `AUTH_JWT_CUSTOM_CLAIMS` (Nhost's syntax, src/auth/custom-claims.ts): GraphQL field names joined by dots,
 * each optionally marked `[]` (or `[*]`) as an array or `[2]` for one element; after `metadata` any JSON key. JSONPath
 * filters are refused.
 */
const claimPathOk = (path: string) => {
  let inMetadata = false;
  return path.split(".").every((part) => {
    const ok = (inMetadata ? /^[^\s[\]]+(\[(\*|\d+)?\])?$/ : /^[_A-Za-z]\w*(\[(\*|\d+)?\])?$/).test(part);
    inMetadata ||= part.replace(/\[.*\]$/, "") === "metadata";
    return ok;
  });
};

/** A JSON object of the given values, or one issue naming what it must be. */
const jsonRecord = <T>(values: z.ZodType<T>, what: string) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (!v) return {} as Record<string, T>;
      let parsed: unknown;
      try {
        parsed = JSON.parse(v);
      } catch {}
      const result = z.record(z.string(), values).safeParse(parsed);
      if (result.success) return result.data;
      ctx.addIssue({ code: "custom", message: `must be a JSON object of ${what}` });
      return z.NEVER;
    });

const customClaims = jsonRecord(z.string(), "claim name to user path").transform((claims, ctx) => {
  const reserved = Object.keys(claims).filter((name) =>
    RESERVED_CLAIMS.includes(name.toLowerCase().replace(/^x-hasura-/, "")),
  );
  if (reserved.length > 0) {
    ctx.addIssue({ code: "custom", message: `claim names reserved by the service: ${reserved.join(", ")}` });
    return z.NEVER;
  }
  const bad = Object.entries(claims).filter(([name, path]) => !/^\S+$/.test(name) || !claimPathOk(path));
  if (bad.length > 0) {
    ctx.addIssue({
      code: "custom",
      message: `unsupported claim name or path (fields joined by dots, \`[]\` for arrays, no filters): ${bad.map(([name]) => name).join(", ")}`,
    });
    return z.NEVER;
  }
  return claims;
});

export const tokenSettings = settingsSlice(
  z.object({
    AUTH_ACCESS_TOKEN_EXPIRES_IN: seconds(900).refine(
      (n) => n > 60,
      "must be above 60 (the client refreshes at 60 s)",
    ),
    AUTH_REFRESH_TOKEN_EXPIRES_IN: seconds(2_592_000),
    AUTH_REFRESH_TOKEN_REUSE_INTERVAL: z.coerce.number().int().min(0).max(300).default(10),
    /**
     * Sessions a user may hold at once; a sign-in past it ends the least recently used (src/auth/session-cap.ts). At
     * most 500: "sign out everywhere" ends each in its family's object, one call each within a request's budget.
     */
    AUTH_MAX_SESSIONS_PER_USER: z.coerce
      .number({ error: "must be a number of sessions (default 200)" })
      .int("must be a whole number")
      .min(1, "must be at least 1")
      .max(500, "must be at most 500 (sign-out everywhere ends each session with one call)")
      .default(200),
    AUTH_JWT_CUSTOM_CLAIMS: customClaims,
    /** Custom claims from the app's data (contract move-in §4, src/auth/token-claims.ts). */
    AUTH_JWT_CUSTOM_CLAIMS_DEFAULTS: jsonRecord(z.unknown(), "claim name to value"),
    /** `fail`: no token when the claims query fails (503); `omit` (Nhost's): the token without custom claims. */
    AUTH_JWT_CUSTOM_CLAIMS_ON_ERROR: z.enum(["fail", "omit"]).default("fail"),
    /**
     * The old Nhost project's JWT secret (contract move-in §3): its tokens are accepted, read-only, under the recorded
     * cut-over's rules (src/http/imported-tokens.ts); it never signs.
     */
    AUTH_IMPORTED_JWT_SECRET: z
      .string()
      .optional()
      .transform((v, ctx) => {
        if (!v) return null;
        const parsed = parseImportedJwtSecret(v);
        if (typeof parsed !== "string") return parsed;
        ctx.addIssue({ code: "custom", message: parsed });
        return z.NEVER;
      }),
    /**
     * The longest an old system's access token may have been issued for (`exp − iat`, seconds; contract supabase.md
     * §6): longer ones are refused, and the cut-over plus this is when the old system's secrets stop working at all.
     */
    AUTH_IMPORTED_JWT_MAX_LIFETIME: z.coerce
      .number({ error: "must be a number of seconds (default 3600)" })
      .int("must be a whole number of seconds")
      .positive("must be a positive number of seconds")
      .max(
        86_400,
        "must be at most 86400 (one day): the old system's tokens stop working that long after the cut-over",
      )
      .default(3600),
  }),
  (vars) => ({
    tokens: {
      /** Seconds an access token lives (`AUTH_ACCESS_TOKEN_EXPIRES_IN`). */
      accessTtl: vars.AUTH_ACCESS_TOKEN_EXPIRES_IN,
      /** Seconds a refresh token lives (`AUTH_REFRESH_TOKEN_EXPIRES_IN`). */
      refreshTtl: vars.AUTH_REFRESH_TOKEN_EXPIRES_IN,
      /** Seconds a rotated refresh token still answers with its successor (`AUTH_REFRESH_TOKEN_REUSE_INTERVAL`). */
      reuseInterval: vars.AUTH_REFRESH_TOKEN_REUSE_INTERVAL,
      /** Sessions a user may hold at once (`AUTH_MAX_SESSIONS_PER_USER`). */
      maxSessionsPerUser: vars.AUTH_MAX_SESSIONS_PER_USER,
      customClaims: vars.AUTH_JWT_CUSTOM_CLAIMS,
      customClaimDefaults: vars.AUTH_JWT_CUSTOM_CLAIMS_DEFAULTS,
      customClaimsOnError: vars.AUTH_JWT_CUSTOM_CLAIMS_ON_ERROR,
    },
    /** The old system's tokens (`AUTH_IMPORTED_JWT_SECRET`, `_MAX_LIFETIME`). */
    imported: { secret: vars.AUTH_IMPORTED_JWT_SECRET, maxLifetime: vars.AUTH_IMPORTED_JWT_MAX_LIFETIME },
  }),
);

export type TokenSettings = ReturnType<typeof tokenSettings.resolve>;
