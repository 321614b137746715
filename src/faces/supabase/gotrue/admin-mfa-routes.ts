import { Hono } from "hono";
import { auditAdminAction } from "../../../audit/admin-action";
import { factorOf, factorsOf, removeFactor } from "../../../auth";
import type { AppEnv } from "../../../http/app-env";
import { requireServiceRole, userOf } from "./admin-routes";
import { GoTrueError } from "./errors";
import { goTrueFactor } from "./mfa-wire";

/**
 * auth-js's `auth.admin.mfa` (`listFactors`, `deleteFactor`; contract supabase.md §2) for the service role alone: a
 * user's factors from the same list the user's own `mfa` namespace reads, and one of them removed with no level asked
 * (an admin's reset of a lost phone), audited as the admin API's actions are.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const goTrueAdminMfaRoutes = new Hono<AppEnv>()
  .use("/admin/users/:id/factors/*", async (c, next) => {
    await requireServiceRole(c);
    await next();
  })
  .use("/admin/users/:id/factors", async (c, next) => {
    await requireServiceRole(c);
    await next();
  })
  .get("/admin/users/:id/factors", async (c) => {
    const user = await userOf(c);
    return c.json((await factorsOf(c.var.deps, user)).map(goTrueFactor));
  })
  .delete("/admin/users/:id/factors/:factorId", async (c) => {
    const user = await userOf(c);
    const factorId = c.req.param("factorId");
    if (!UUID.test(factorId)) throw new GoTrueError(404, "validation_failed", "factor_id must be an UUID");
    const factor = await factorOf(c.var.deps, user, factorId);
    if (!factor) throw new GoTrueError(404, "mfa_factor_not_found", "Factor not found");
    await removeFactor(c.var.deps, user.id, factor);
    auditAdminAction(c, "user.update", user.id, { factorDeleted: factor.id, factorType: factor.type });
    return c.json(goTrueFactor(factor));
  });
