import type { Context } from "hono";
import type { Config } from "../../config";
import type { AppEnv } from "../../http/app-env";
import { timingSafeEqualString } from "../../lib/crypto";
import { secretGuess } from "../../rate-limits/buckets";
import { addressKey } from "../../rate-limits/client-address";
import { oldKeyRole } from "./old-api-keys";

/**
 * Who calls the face (contract supabase.md §1), by the `apikey` header (or, with no user token, `Authorization:
 * Bearer <key>`, as supabase-js sends it): a publishable key is a client (`anon`); a secret key or the admin secret
 * is the service role. A secret key sent from a browser is refused, as Supabase refuses it: it would be in every
 * visitor's hands. Keys are compared in constant time, each against every configured one.
 */

export type KeyRole = "anon" | "service_role";

export type KeyCheck =
  | { role: KeyRole }
  | { refused: "missing" | "invalid" | "secret-in-browser" }
  /** Too many wrong keys from this address lately: nothing it sends is accepted for now. */
  | { refused: "limited"; retryAfterSeconds: number };

const anyEqual = (given: string, keys: readonly string[]) =>
  keys.reduce((found, key) => timingSafeEqualString(given, key) || found, false);

/** A browser's request: it says where it comes from, or its agent is a browser's. */
const fromBrowser = (c: Context<AppEnv>) =>
  c.req.header("origin") !== undefined || /Mozilla\/\d/.test(c.req.header("user-agent") ?? "");

/**
 * A key that is not a publishable one counts as a guess of a secret (the admin secret is one), in the same bucket per
 * address as a wrong admin secret on the admin API (rate-limits/buckets.ts `secretGuess`): the face is no second,
 * unmetered door for guessing it.
 */
export async function checkApiKey(
  c: Context<AppEnv>,
  config: Config,
  /** The key where a client cannot send headers (a WebSocket's URL), instead of the request's headers. */
  sent?: string,
): Promise<KeyCheck> {
  const bearer = /^Bearer (sb_\S+)$/.exec(c.req.header("authorization") ?? "")?.[1];
  const given = sent ?? c.req.header("apikey") ?? bearer;
  if (!given) return { refused: "missing" };
  if (anyEqual(given, config.supabase.publishableKeys)) return { role: "anon" };
  // The old project's legacy keys, until the cut-over's ceiling (old-api-keys.ts).
  const old = await oldKeyRole(c.get("deps"), given);
  if (old === "anon") return { role: "anon" };
  const adminSecret = config.secrets.adminSecret;
  const secret =
    old === "service_role" ||
    anyEqual(given, config.supabase.secretKeys) ||
    (adminSecret !== undefined && timingSafeEqualString(given, adminSecret));
  const address = addressKey(c.req.header("cf-connecting-ip") ?? "unknown");
  const wait = await secretGuess(c.env, config.rateLimits, address, secret, c.get("deps").now());
  if (wait !== null) return { refused: "limited", retryAfterSeconds: wait };
  if (!secret) return { refused: "invalid" };
  return fromBrowser(c) ? { refused: "secret-in-browser" } : { role: "service_role" };
}
