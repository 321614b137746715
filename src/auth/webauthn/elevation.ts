import { createMiddleware } from "hono/factory";
import { AppError } from "../../errors";
import type { AppEnv } from "../../http/app-env";
import type { Deps } from "../../http/deps";
import { type AccessTokenPayload, HASURA_NAMESPACE } from "../../signing-keys/jwt";
import { liveSession } from "../sessions";
import { userHasSecurityKey } from "./security-keys";

/**
 * Operations marked E (contract §6) under `AUTH_REQUIRE_ELEVATED_CLAIM`: `disabled` lets everything through;
 * `recommended` demands elevation only from users who have a security key; `required` from everyone. Elevated means
 * the access token carries `x-hasura-auth-elevated` = its `sub` (from `verifyElevateWebauthn`). With
 * `firstKeyAllowed`, a user without any key may go ahead (they could not elevate). Runs after the auth middleware;
 * a request without a bearer (a password reset by ticket) is not the caller's account and needs none.
 *
 * These are the changes of a credential (the password, the email, a PAT, a key, a provider link), so the token's
 * session must also still be live and its user enabled: an access token outlives a sign-out by its few minutes,
 * which is fine for reading, but a stolen one must not mint a PAT that never expires, or take the password or the
 * address, after the owner changed their password (which ends every other session) or an admin disabled them.
 */
export function requireElevation(options: { firstKeyAllowed?: boolean } = {}) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const auth = c.var.auth;
    if (auth) await requireLiveSession(c.var.deps, auth);
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

/**
 * 401 unless the token's session is still live and its user enabled (one primary-key read of the session's row). A
 * token without a session (`sid`) has nothing to check here; every token this service mints for a person has one.
 */
async function requireLiveSession(deps: Deps, auth: AccessTokenPayload): Promise<void> {
  if (!auth.sid) return;
  const live = await liveSession(deps, auth.sid);
  if (live && live.id === auth.sub && !live.disabled) return;
  throw new AppError("unauthorized", "the session of this token has ended");
}
