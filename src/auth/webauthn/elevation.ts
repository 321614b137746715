import { createMiddleware } from "hono/factory";
import { AppError } from "../../errors";
import type { AppEnv } from "../../http/app-env";
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
    const mode = c.var.config.elevation;
    const auth = c.var.auth;
    if (mode === "disabled" || !auth) return next();
    if (auth[HASURA_NAMESPACE]?.["x-hasura-auth-elevated"] === auth.sub) return next();
    const hasKey = await userHasSecurityKey(c.var.deps.shards.ofUser(auth.sub), auth.sub);
    if (!hasKey && (mode === "recommended" || options.firstKeyAllowed)) return next();
    throw new AppError(
      "unauthorized",
      "elevated permission required: verify with a security key first (POST /elevate/webauthn)",
    );
  });
}
