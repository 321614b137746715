import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../http/app-env";
import { requireAuth } from "../../http/auth";
import { NO_CONTENT, operation } from "../../http/documented";
import { queryParams } from "../../http/validation";
import {
  listUserSessions,
  revokeOtherUserSessions,
  revokeUserSession,
  userSessionSchema,
} from "./user-sessions";

/** The user's session list (contract §13): list, end one, end every other. Each with the user's own access token. */
export const sessionListRoutes = new Hono<AppEnv>()
  .get(
    "/user/sessions",
    operation({
      summary: "The user's sessions",
      description:
        "The signed-in user's unexpired sessions, newest first (at most 200): where and how each began and when it " +
        "was last used, `current` for the session of the access token that asks (a token without a session id, " +
        "from before an import, has none). Sessions from before an import show what is known (nulls). 401 " +
        "`unauthorized` without a valid access token.",
      security: "bearer",
      answers: {
        200: { description: "The sessions.", schema: z.object({ items: z.array(userSessionSchema) }) },
      },
    }),
    requireAuth,
    async (c) => {
      const auth = c.var.auth!;
      return c.json({ items: await listUserSessions(c.var.deps, auth.sub, auth.sid) });
    },
  )
  .delete(
    "/user/sessions/:id",
    operation({
      summary: "End one session",
      description:
        "Ends one of the signed-in user's sessions at once: its refresh token fails from now on (401 " +
        "`invalid-refresh-token`), its access tokens live out their few minutes. The caller's own session may be " +
        "named too (a sign-out). Another user's session or an unknown id: 404 `not-found`, the same answer.",
      security: "bearer",
      answers: { 204: NO_CONTENT("Ended.") },
    }),
    requireAuth,
    async (c) => {
      await revokeUserSession(c.var.deps, c.var.auth!.sub, c.req.param("id"));
      return c.body(null, 204);
    },
  )
  .delete(
    "/user/sessions",
    operation({
      summary: "End every other session",
      description:
        "With `others=true`: ends every session of the signed-in user but the one of the access token that asks " +
        "(all of them for a token without a session id). Their refresh tokens fail from now on. Without " +
        "`others=true`: 400 `invalid-request` (signing out of every session is `POST /signout` with `all: true`).",
      security: "bearer",
      answers: { 204: NO_CONTENT("Every other session ended.") },
    }),
    requireAuth,
    queryParams(
      z.object({
        others: z.literal("true").describe("Must be `true`: every session but the caller's ends"),
      }),
    ),
    async (c) => {
      const auth = c.var.auth!;
      await revokeOtherUserSessions(c.var.deps, auth.sub, auth.sid);
      return c.body(null, 204);
    },
  );
