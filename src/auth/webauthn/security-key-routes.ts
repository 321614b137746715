import { Hono } from "hono";
import { AppError } from "../../errors";
import type { AppEnv } from "../../http/app-env";
import { requireAuth } from "../../http/auth";
import { requireElevation } from "./elevation";
import { deleteSecurityKey, listSecurityKeys } from "./security-keys";

/**
 * A user's own security keys (improvement; not in the reference, which leaves this to GraphQL): the list, and
 * removing one, so a key someone else registered on the account, or a lost one, can be taken off it. Removing is
 * an E operation (contract §6), like adding. docs/decisions.md, "Security keys".
 */
export const securityKeyRoutes = new Hono<AppEnv>()
  .get("/user/security-keys", requireAuth, async (c) =>
    c.json({ securityKeys: await listSecurityKeys(c.var.deps.db, c.var.auth!.sub) }),
  )
  .delete("/user/security-keys/:id", requireAuth, requireElevation(), async (c) => {
    if (!(await deleteSecurityKey(c.var.deps.db, c.var.auth!.sub, c.req.param("id")))) {
      throw new AppError("invalid-request", "the user has no security key with this id");
    }
    return c.json("OK");
  });
