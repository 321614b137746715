import type { Context } from "hono";
import type { AccessRule } from "../db/schema";
import { checkAdminSecret } from "../http/admin-secret";
import type { AppEnv } from "../http/app-env";
import { presentedAccessToken } from "../http/auth";
import { HASURA_NAMESPACE } from "../signing-keys/jwt";
import { StorageError } from "./errors";

/**
 * Who is calling the storage API (storage contract §4): the admin (admin secret), a user (a valid access token of
 * the auth service, with the role it acts as), or the `public` role. An invalid or expired token counts as none:
 * the client sends its token on every request. A DPoP-bound token counts only as `DPoP` with a proof by its key
 * (src/http/auth.ts); sent as `Bearer`, or with a bad proof, it is an invalid token like any other.
 */
export type Caller =
  | { kind: "admin" }
  /** `token`: the access token as the caller sent it, which Hasura sees when it decides (hasura-permissions.ts). */
  | { kind: "user"; id: string; role: string; token: string }
  | { kind: "public" };

const PUBLIC_ROLE = "public";

export async function identifyCaller(c: Context<AppEnv>): Promise<Caller> {
  // A wrong admin secret makes no admin (the request goes on as its token or the public role) but counts as a guess.
  const admin = await checkAdminSecret(c);
  if (admin.outcome === "limited") {
    throw new StorageError(429, "too many wrong admin secrets: try again later", {
      headers: { "Retry-After": String(admin.retryAfterSeconds) },
    });
  }
  if (admin.outcome === "right") return { kind: "admin" };
  const found = await presentedAccessToken(c);
  if (!found || "refused" in found) return { kind: "public" };
  return userCaller(c, found.payload, found.token);
}

/**
 * The user of a verified access token (this API's, or one the Supabase face's GoTrue issued: both carry the Hasura
 * claims), acting as `x-hasura-role` when its claims allow that role, else as their default role.
 */
export function userCaller(
  c: Context<AppEnv>,
  payload: { sub: string; [HASURA_NAMESPACE]?: Record<string, unknown> },
  token: string,
): Caller {
  const claims = payload[HASURA_NAMESPACE] ?? {};
  const allowed = Array.isArray(claims["x-hasura-allowed-roles"])
    ? (claims["x-hasura-allowed-roles"] as string[])
    : [];
  const asked = c.req.header("x-hasura-role");
  const role = asked && allowed.includes(asked) ? asked : String(claims["x-hasura-default-role"] ?? "");
  return { kind: "user", id: payload.sub, role, token };
}

/**
 * Whether `caller` may act under `rule` (`none`: the admin only). `owner` means the file's uploader; for an upload (no file yet) it means any
 * signed-in user, who becomes the owner.
 */
export function allows(rule: AccessRule, caller: Caller, ownerId?: string | null): boolean {
  if (caller.kind === "admin") return true;
  if (rule === "public") return true;
  if (rule === "none") return false;
  if (rule === "authenticated") return caller.kind === "user";
  if (rule === "owner") return caller.kind === "user" && (ownerId === undefined || ownerId === caller.id);
  return rule.includes(caller.kind === "user" ? caller.role : PUBLIC_ROLE);
}
