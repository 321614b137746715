import type { Context } from "hono";
import { RateLimitedError } from "../../../errors";
import type { AppEnv } from "../../../http/app-env";
import { checkApiKey, type KeyRole } from "../api-keys";
import { GoTrueError } from "../gotrue";
import { type UpstreamRole, userCaller } from "./exchange";

/**
 * Who a forwarded call runs as (contract supabase.md §4), from what it sends: the face's key (`apikey`, checked as on
 * every route of the face) and the token in `Authorization`. A user token decides, whatever the key: a person with a
 * secret key in the other header is still that person. With no user token the key decides: a publishable key is
 * `anon`, and only a secret key (the admin secret is one) is `service_role`, as Supabase's own keys are.
 */

const KEY_REFUSALS = {
  missing: ["no_api_key", "No API key found in request"],
  invalid: ["invalid_api_key", "Invalid API key"],
  "secret-in-browser": ["invalid_api_key", "Forbidden use of secret API key in browser"],
} as const;

/** The face's key check, or GoTrue's refusal of it. */
export async function keyRole(c: Context<AppEnv>, sent?: string): Promise<KeyRole> {
  const key = await checkApiKey(c, c.var.config, sent);
  if ("retryAfterSeconds" in key) throw new RateLimitedError(key.retryAfterSeconds);
  if ("refused" in key) {
    const [code, message] = KEY_REFUSALS[key.refused];
    throw new GoTrueError(401, code, message);
  }
  return key.role;
}

/** A token in a place where a key may stand instead (`Authorization`, a Realtime `access_token`): which it is. */
export async function callerOfToken(
  c: Context<AppEnv>,
  token: string | undefined,
  key: { role: KeyRole; value: string },
): Promise<UpstreamRole> {
  if (token === undefined) return { role: key.role };
  // supabase-js sends its key as the bearer while no one is signed in: the same key again, nothing more.
  // …or the old project's anon or service_role JWT (old-api-keys.ts), the key this call was let in by.
  if (token.startsWith("sb_") || token === key.value) {
    if (token !== key.value) throw new GoTrueError(401, "invalid_api_key", "Invalid API key");
    return { role: key.role };
  }
  return userCaller(c.var.deps, token);
}

/** Who an HTTP data call runs as. */
export async function callerOf(c: Context<AppEnv>): Promise<UpstreamRole> {
  const role = await keyRole(c);
  const authorization = c.req.header("authorization");
  const bearer = authorization === undefined ? undefined : /^Bearer (\S+)$/i.exec(authorization)?.[1];
  // Another scheme (DPoP, Basic) proves nothing the upstream could check: refused, never taken for no token.
  if (authorization !== undefined && bearer === undefined) {
    throw new GoTrueError(401, "no_authorization", "This endpoint requires a valid Bearer token");
  }
  const value = c.req.header("apikey") ?? bearer ?? "";
  return callerOfToken(c, bearer, { role, value });
}
