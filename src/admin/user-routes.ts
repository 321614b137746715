import { Hono } from "hono";
import { z } from "zod";
import { auditAdminAction } from "../audit/admin-action";
import { revokeAllSessions, signUpOptionsSchema } from "../auth";
import type { AppEnv } from "../http/app-env";
import { NO_CONTENT, operation } from "../http/documented";
import { emailField, passwordField } from "../http/fields";
import { pageQuery, pageSchema } from "../http/paging";
import { jsonBody, queryParams } from "../http/validation";
import { metadataSchema } from "../lib/json-metadata";
import { listSessions, revokeSessionById } from "./sessions";
import { unlockUser } from "./unlock";
import { createUser, deleteUser, getUserDetail, listUsers, patchUser, requireUser } from "./users";
import { adminSessionSchema, adminUserDetailSchema, adminUserSchema } from "./wire";

/** `POST /admin/users`'s body; the service binding's `AuthAdmin.createUser` takes the same (src/platform/admin.ts). */
export const createUserBody = signUpOptionsSchema.extend({
  email: emailField,
  password: passwordField.optional(),
  emailVerified: z.boolean().optional(),
});

/** `PATCH /admin/users/{id}`'s body, and `AuthAdmin.updateUser`'s. */
export const userPatchBody = z
  .strictObject({
    disabled: z.boolean(),
    roles: z.array(z.string().min(1).max(100)).min(1).max(50),
    defaultRole: z.string().min(1).max(100),
    displayName: signUpOptionsSchema.shape.displayName.unwrap(),
    locale: z.string().min(2).max(3),
    metadata: metadataSchema,
    emailVerified: z.boolean(),
    phoneNumberVerified: z.boolean(),
    /** `null` resets MFA: TOTP off, its secret and recovery codes gone. */
    activeMfaType: z.null(),
  })
  .partial();

const userListQuery = pageQuery.extend({ search: z.string().max(254).optional() });

/** Users and their sessions in the admin API (contract §10), behind the admin secret (src/runtime/app.ts). */
export const userAdminRoutes = new Hono<AppEnv>()
  .get(
    "/users",
    operation({
      summary: "List users",
      description:
        "Newest first, `limit` at a time (`nextCursor` → `cursor`); `search` matches email, phone number and display " +
        "name (substring) or the id.",
      security: "admin-secret",
      answers: { 200: { description: "A page of users.", schema: pageSchema(adminUserSchema) } },
    }),
    queryParams(userListQuery),
    async (c) => c.json(await listUsers(c.var.deps, c.req.valid("query"))),
  )
  .post(
    "/users",
    operation({
      summary: "Create a user",
      description:
        "A user with an email, an optional password (the password policy applies) and the sign-up options; " +
        "`emailVerified` marks the address proven. 409 `email-already-in-use`. Audited.",
      security: "admin-secret",
      answers: { 201: { description: "The new user.", schema: adminUserSchema } },
    }),
    jsonBody(createUserBody),
    async (c) => {
      const { email, password, emailVerified, ...options } = c.req.valid("json");
      const user = await createUser(c.var.deps, { email, password, emailVerified, options, method: "admin" });
      auditAdminAction(c, "user.create", user.id, { email: user.email ?? null });
      return c.json(user, 201);
    },
  )
  .get(
    "/users/:id",
    operation({
      summary: "Get a user",
      description: "The user with their linked providers and security keys. 404 `not-found`.",
      security: "admin-secret",
      answers: { 200: { description: "The user.", schema: adminUserDetailSchema } },
    }),
    async (c) => c.json(await getUserDetail(c.var.deps, c.req.param("id"))),
  )
  .patch(
    "/users/:id",
    operation({
      summary: "Change a user",
      description:
        "Any of the fields; `disabled: true` ends every session and OAuth2 grant of the user at once. Audited.",
      security: "admin-secret",
      answers: { 200: { description: "The user as it is now.", schema: adminUserSchema } },
    }),
    jsonBody(userPatchBody),
    async (c) => {
      const patch = c.req.valid("json");
      const user = await patchUser(c.var.deps, c.req.param("id"), patch);
      auditAdminAction(c, patch.disabled === true ? "user.disable" : "user.update", user.id, {
        fields: Object.keys(patch),
      });
      return c.json(user);
    },
  )
  .delete(
    "/users/:id",
    operation({
      summary: "Delete a user",
      description:
        "The user and what belongs to them: sessions, security keys, personal access tokens, OAuth2 grants. Audited.",
      security: "admin-secret",
      answers: { 204: NO_CONTENT("Deleted.") },
    }),
    async (c) => {
      const deleted = await deleteUser(c.var.deps, c.req.param("id"));
      auditAdminAction(c, "user.delete", deleted.id, { email: deleted.email });
      return c.body(null, 204);
    },
  )
  .post(
    "/users/:id/unlock",
    operation({
      summary: "Unlock a user's sign-in",
      description:
        "Lifts every lock of the user's per-account lockout (password, email and SMS codes, TOTP, recovery codes; " +
        "contract §13) and forgets their failures and wrong second-factor codes, so the user can sign in at once. " +
        "404 `not-found` for an unknown user. Audited (`admin.user.unlock`, with the factors that were locked).",
      security: "admin-secret",
      answers: { 204: NO_CONTENT("Unlocked (also when nothing was locked).") },
    }),
    async (c) => {
      const { id, factors } = await unlockUser(c.var.deps, c.req.param("id"));
      auditAdminAction(c, "user.unlock", id, { factors });
      return c.body(null, 204);
    },
  )
  .get(
    "/users/:id/sessions",
    operation({
      summary: "A user's sessions",
      description: "Newest first; `lastUsedAt` is accurate to the hour.",
      security: "admin-secret",
      answers: { 200: { description: "A page of sessions.", schema: pageSchema(adminSessionSchema) } },
    }),
    queryParams(pageQuery),
    async (c) => {
      const user = await requireUser(c.var.deps, c.req.param("id"));
      return c.json(await listSessions(c.var.deps, user.id, c.req.valid("query")));
    },
  )
  .delete(
    "/users/:id/sessions",
    operation({
      summary: "Sign a user out everywhere",
      description: "Ends every session of the user. Audited.",
      security: "admin-secret",
      answers: { 204: NO_CONTENT("Every session ended.") },
    }),
    async (c) => {
      const user = await requireUser(c.var.deps, c.req.param("id"));
      await revokeAllSessions(c.var.deps, user.id);
      auditAdminAction(c, "sessions.revoke-all", user.id);
      return c.body(null, 204);
    },
  )
  .delete(
    "/sessions/:sessionId",
    operation({
      summary: "End one session",
      description: "404 `not-found` for an unknown session. Audited.",
      security: "admin-secret",
      answers: { 204: NO_CONTENT("Ended.") },
    }),
    async (c) => {
      const sessionId = c.req.param("sessionId");
      const userId = await revokeSessionById(c.var.deps, sessionId);
      auditAdminAction(c, "session.revoke", userId, { sessionId });
      return c.body(null, 204);
    },
  );
