import { Hono } from "hono";
import { BOOKMARK_HEADER } from "../../db/replica";
import { AppError } from "../../errors";
import type { AppEnv } from "../../http/app-env";
import { requireAuth } from "../../http/auth";
import { operation } from "../../http/documented";
import { acceptsBookmark } from "../sessions";
import { findWireUserNearby, toWireUser, wireUserSchema } from "../users";

/** getUser (contract §3.4). */
export const userRoutes = new Hono<AppEnv>().get(
  "/user",
  operation({
    summary: "The signed-in user",
    description:
      "The user the access token belongs to (anonymous users included). 401 `unauthorized` without one. A nearby " +
      "read replica may answer; send back the `x-d1-bookmark` of an earlier answer to read at least that fresh.",
    security: "bearer",
    answers: { 200: { description: "The user.", schema: wireUserSchema } },
  }),
  requireAuth,
  acceptsBookmark,
  async (c) => {
    // `c.get`, not `c.var`: Hono builds `c.var` anew on each read (docs/performance.md, issue 48).
    const { sub } = c.get("auth")!;
    const user = await findWireUserNearby(
      c.get("deps").shards.d1OfUser(sub),
      sub,
      c.req.header(BOOKMARK_HEADER),
    );
    // A valid token for a deleted user is as good as no token.
    if (!user) throw new AppError("unauthorized");
    return c.json(toWireUser(user));
  },
);
