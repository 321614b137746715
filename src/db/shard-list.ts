import { z } from "zod";

/**
 * `AUTH_D1_SHARDS`: the D1 bindings users are spread over (src/db/shards.ts, docs/scaling.md "Past one D1 database"),
 * the home database `DB` first: it keeps the global tables. One (the default) is no sharding at
 * all. A power of two splits the 4,096 slots evenly. Changing the list of a deployment with users moves rows: see
 * docs/scaling.md before doing it.
 */
export const shardList = z
  .string()
  .optional()
  .transform((v) =>
    v === undefined
      ? ["DB"]
      : v
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean),
  )
  .pipe(
    z
      .array(z.string().regex(/^[A-Z][A-Z0-9_]*$/, "binding names are upper-case"))
      .min(1)
      .max(4096)
      .refine((names) => names[0] === "DB", "the first shard must be DB, the home database")
      .refine((names) => new Set(names).size === names.length, "a binding is named twice"),
  );
