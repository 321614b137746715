import { Hono } from "hono";
import type { AppEnv } from "../app-env";
import { AppError } from "../errors";
import { requireAuth } from "../middleware/auth";
import { findWireUserById, toWireUser } from "../services/users";

/** getUser (contract §3.4). */
export const userRoutes = new Hono<AppEnv>().get("/user", requireAuth, async (c) => {
  const user = await findWireUserById(c.var.deps.db, c.var.auth!.sub);
  // A valid token for a deleted user is as good as no token.
  if (!user) throw new AppError("unauthorized");
  return c.json(toWireUser(user));
});
