import { Hono } from "hono";
import { AppError } from "../../errors";
import type { AppEnv } from "../../http/app-env";
import { requireAuth } from "../../http/auth";
import { operation } from "../../http/documented";
import { findWireUserById, toWireUser, wireUserSchema } from "./users";

/** getUser (contract §3.4). */
export const userRoutes = new Hono<AppEnv>().get(
  "/user",
  operation({
    summary: "The signed-in user",
    description:
      "The user the access token belongs to (anonymous users included). 401 `unauthorized` without one.",
    security: "bearer",
    answers: { 200: { description: "The user.", schema: wireUserSchema } },
  }),
  requireAuth,
  async (c) => {
    const user = await findWireUserById(c.var.deps.db, c.var.auth!.sub);
    // A valid token for a deleted user is as good as no token.
    if (!user) throw new AppError("unauthorized");
    return c.json(toWireUser(user));
  },
);
