import type { Context } from "hono";
import type { AppEnv } from "../http/app-env";

const ACTIONS: Record<string, "create" | "replace" | "update" | "delete"> = {
  POST: "create",
  PUT: "replace",
  PATCH: "update",
  DELETE: "delete",
};

/**
 * What an IdP's directory changed through SCIM is an audit event like an admin's change (contract operators.md §4):
 * `scim.user.<create|replace|update|delete>` with the user as its subject, `scim.group.<…>` with the group in its
 * detail, once the change was made (a 2xx). The actor is the `scim` the token check set (src/audit/actor.ts).
 */
export async function auditScimWrite(c: Context<AppEnv>, orgId: string): Promise<void> {
  const action = ACTIONS[c.req.method];
  if (!action || c.res.status >= 300) return;
  const [, resource, pathId] = /\/(Users|Groups)(?:\/([^/]+))?$/.exec(c.req.path) ?? [];
  if (!resource) return;
  // A creation's id is in its answer (the resource as made); the others name it in the path.
  const id =
    pathId ??
    (
      (await c.res
        .clone()
        .json()
        .catch(() => ({}))) as { id?: string }
    ).id ??
    null;
  const detail = { orgId, ...(resource === "Users" ? {} : { groupId: id }) };
  c.var.deps.audit({
    type: `scim.${resource === "Users" ? "user" : "group"}.${action}`,
    userId: resource === "Users" ? id : null,
    detail,
  });
}
