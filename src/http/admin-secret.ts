import type { Context } from "hono";
import { timingSafeEqualString } from "../lib/crypto";
import { secretGuess } from "../rate-limits/buckets";
import { addressKey } from "../rate-limits/client-address";
import type { AppEnv } from "./app-env";

export type AdminSecretCheck =
  | { outcome: "absent" | "right" | "wrong" }
  /** Too many wrong guesses from this address lately: nothing it sends is accepted for now. */
  | { outcome: "limited"; retryAfterSeconds: number };

/**
 * `x-hasura-admin-secret` against `AUTH_ADMIN_SECRET` (constant time), for the admin API and storage alike. A wrong
 * guess counts in the `BRUTE_FORCE` bucket per address, as a wrong secret on the console's sign-in form does
 * (rate-limits/buckets.ts `secretGuess`).
 */
export async function checkAdminSecret(c: Context<AppEnv>): Promise<AdminSecretCheck> {
  const given = c.req.header("x-hasura-admin-secret");
  const secret = c.var.config.secrets.adminSecret;
  if (given === undefined || !secret) return { outcome: "absent" };
  const right = timingSafeEqualString(given, secret);
  const wait = await secretGuess(
    c.env,
    c.var.config.rateLimits,
    addressKey(c.req.header("cf-connecting-ip") ?? "unknown"),
    right,
    c.var.deps.now(),
  );
  if (wait !== null) return { outcome: "limited", retryAfterSeconds: wait };
  return { outcome: right ? "right" : "wrong" };
}
