import { Hono } from "hono";
import { z } from "zod";
import { auditAdminAction } from "../audit/admin-action";
import { signUpOptionsSchema } from "../auth/accounts";
import { revokeAllSessions } from "../auth/sessions";
import type { AppEnv } from "../http/app-env";
import { emailField, passwordField } from "../http/fields";
import { pageQuery } from "../http/paging";
import { jsonBody, queryParams } from "../http/validation";
import { metadataSchema } from "../lib/json-metadata";
import { listSessions, revokeSessionById } from "./sessions";
import { createUser, deleteUser, getUserDetail, listUsers, patchUser, requireUser } from "./users";

const createUserBody = signUpOptionsSchema.extend({
  email: emailField,
  password: passwordField.optional(),
  emailVerified: z.boolean().optional(),
});

const userPatchBody = z
  .strictObject({
    disabled: z.boolean(),
    roles: z.array(z.string().min(1).max(100)).min(1).max(50),
    defaultRole: z.string().min(1).max(100),
    displayName: signUpOptionsSchema.shape.displayName.unwrap(),
    locale: z.string().min(2).max(3),
    metadata: metadataSchema,
    emailVerified: z.boolean(),
    phoneNumberVerified: z.boolean(),
  })
  .partial();

const userListQuery = pageQuery.extend({ search: z.string().max(254).optional() });

/** Users and their sessions in the admin API (contract §10), behind the admin secret (src/admin/app.ts). */
export const userAdminRoutes = new Hono<AppEnv>()
  .get("/users", queryParams(userListQuery), async (c) =>
    c.json(await listUsers(c.var.deps, c.req.valid("query"))),
  )
  .post("/users", jsonBody(createUserBody), async (c) => {
    const { email, password, emailVerified, ...options } = c.req.valid("json");
    const user = await createUser(c.var.deps, { email, password, emailVerified, options });
    auditAdminAction(c, "user.create", user.id, { email: user.email ?? null });
    return c.json(user, 201);
  })
  .get("/users/:id", async (c) => c.json(await getUserDetail(c.var.deps, c.req.param("id"))))
  .patch("/users/:id", jsonBody(userPatchBody), async (c) => {
    const patch = c.req.valid("json");
    const user = await patchUser(c.var.deps, c.req.param("id"), patch);
    auditAdminAction(c, patch.disabled === true ? "user.disable" : "user.update", user.id, {
      fields: Object.keys(patch),
    });
    return c.json(user);
  })
  .delete("/users/:id", async (c) => {
    const deleted = await deleteUser(c.var.deps, c.req.param("id"));
    auditAdminAction(c, "user.delete", deleted.id, { email: deleted.email });
    return c.body(null, 204);
  })
  .get("/users/:id/sessions", queryParams(pageQuery), async (c) => {
    const user = await requireUser(c.var.deps, c.req.param("id"));
    return c.json(await listSessions(c.var.deps, user.id, c.req.valid("query")));
  })
  .delete("/users/:id/sessions", async (c) => {
    const user = await requireUser(c.var.deps, c.req.param("id"));
    await revokeAllSessions(c.var.deps, user.id);
    auditAdminAction(c, "sessions.revoke-all", user.id);
    return c.body(null, 204);
  })
  .delete("/sessions/:sessionId", async (c) => {
    const sessionId = c.req.param("sessionId");
    const userId = await revokeSessionById(c.var.deps, sessionId);
    auditAdminAction(c, "session.revoke", userId, { sessionId });
    return c.body(null, 204);
  });
