import type { Context } from "hono";
import type { AppEnv } from "../http/app-env";

/** Every admin action is itself a security event (contract §10): `admin.<action>`, with the user it concerned. */
export function auditAdminAction(
  c: Context<AppEnv>,
  action: string,
  userId?: string | null,
  detail: Record<string, unknown> = {},
): void {
  c.var.deps.audit({ type: `admin.${action}`, userId, detail: { ...detail, path: c.req.path } });
}
