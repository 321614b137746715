import { createMiddleware } from "hono/factory";
import { AppError } from "../../errors";
import type { AppEnv } from "../../http/app-env";
import type { Deps } from "../../http/deps";
import { HASURA_NAMESPACE } from "../../signing-keys/jwt";
import { userHasSecurityKey } from "./security-keys";

/**
 * Operations marked E (contract §6) under `AUTH_REQUIRE_ELEVATED_CLAIM`: `disabled` lets everything through;
 * `recommended` demands elevation only from users who have a security key; `required` from everyone. Elevated means
 * the access token carries `x-hasura-auth-elevated` = its `sub` (from `verifyElevateWebauthn`). With
 * `firstKeyAllowed`, a user without any key may go ahead (they could not elevate). Runs after the auth middleware;
 * a request without a bearer (a password reset by ticket) is not the caller's account and needs none.
 */
export function requireElevation(options: { firstKeyAllowed?: boolean } = {}) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const auth = c.var.auth;
    if (!auth || (await elevationSatisfied(c.var.deps, auth, options))) return next();
    throw new AppError(
      "unauthorized",
      "elevated permission required: verify with a security key first (POST /elevate/webauthn)",
    );
  });
}

/** The same rule for a face that reads its own token: `claims` are the verified access token's. */
export async function elevationSatisfied(
  deps: Deps,
  claims: { sub: string; [HASURA_NAMESPACE]?: Record<string, unknown> },
  options: { firstKeyAllowed?: boolean } = {},
): Promise<boolean> {
  const mode = deps.config.elevation;
  if (mode === "disabled") return true;
  if (claims[HASURA_NAMESPACE]?.["x-hasura-auth-elevated"] === claims.sub) return true;
  const hasKey = await userHasSecurityKey(deps.shards.ofUser(claims.sub), claims.sub);
  return !hasKey && (mode === "recommended" || options.firstKeyAllowed === true);
}
