import { Hono } from "hono";
import { html } from "hono/html";
import { auditAdminAction } from "../../audit/admin-action";
import { revokeAllSessions, sendPasswordResetEmail, sendVerificationEmail } from "../../auth";
import { AppError } from "../../errors";
import type { AppEnv } from "../../http/app-env";
import { listAuditEvents } from "../audit";
import { listUserSecurityKeys } from "../passkeys";
import { listSessions, revokeSessionById } from "../sessions";
import { locksOf, unlockUser } from "../unlock";
import { type UserFilters, userFiltersSchema } from "../user-filters";
import { listUsersFiltered, usersCsv } from "../user-lists";
import { createUser, deleteUser, getUserDetail, patchUser, requireUser } from "../users";
import { action, back, type Ctx, chromeOf, page, render, userPath } from "./handlers";
import { impersonationOfUser } from "./impersonation-routes";
import { userPage } from "./pages";
import { lockoutSection } from "./pages-lockout";
import { passkeysSection } from "./pages-passkeys";
import { riskSection } from "./pages-risk";
import { userEditor, usersPage } from "./pages-users";
import type { ConsoleSession } from "./session";

/** The console's user filters from the query; a malformed one is ignored rather than refused (it is a view). */
function filtersOf(c: Ctx): UserFilters {
  const parsed = userFiltersSchema.safeParse(c.req.query());
  return parsed.success ? parsed.data : userFiltersSchema.parse({});
}

async function usersList(c: Ctx, session: ConsoleSession, error?: string, status: 200 | 400 = 200) {
  const filters = filtersOf(c);
  const result = await listUsersFiltered(c.var.deps, filters, {
    limit: 50,
    after: c.req.query("after"),
    before: c.req.query("before"),
  });
  const chrome = await chromeOf(c, session, "users");
  const providers = Object.keys(c.var.config.providers.enabled);
  return render(
    c,
    "Users",
    usersPage(chrome, {
      users: result.items,
      filters,
      next: result.next,
      previous: result.previous,
      providers,
      error,
    }),
    status,
  );
}

/** The console's users: the filtered list, CSV export, create, the user's page, edits, mails and access. */
export const consoleUserRoutes = new Hono<AppEnv>()
  .get(
    "/users",
    page(async (c, session) => usersList(c, session)),
  )
  .get(
    "/users.csv",
    page(async (c) => {
      const { csv, rows } = await usersCsv(c.var.deps, filtersOf(c));
      auditAdminAction(c, "users.export", null, { rows });
      c.header("Cache-Control", "no-store");
      c.header("Content-Disposition", 'attachment; filename="users.csv"');
      return c.body(csv, 200, { "Content-Type": "text/csv; charset=utf-8" });
    }),
  )
  .post(
    "/users/create",
    action(async (c, session) => {
      const form = await c.req.parseBody();
      const text = (name: string, max: number) =>
        typeof form[name] === "string" ? (form[name] as string).slice(0, max) : "";
      try {
        const user = await createUser(c.var.deps, {
          email: text("email", 254).trim(),
          password: text("password", 256) || undefined,
          emailVerified: form.emailVerified === "yes",
          method: null,
          options: text("displayName", 100).trim()
            ? { displayName: text("displayName", 100).trim() }
            : undefined,
        });
        auditAdminAction(c, "user.create", user.id, { email: user.email });
        return back(c, userPath(user.id), "created");
      } catch (error) {
        if (!(error instanceof AppError) || error.status >= 500) throw error;
        return usersList(c, session, error.message, 400);
      }
    }),
  )
  .get(
    "/users/:id",
    page(async (c, session) => {
      const id = c.req.param("id")!;
      const [user, sessions, events, risk, keys] = await Promise.all([
        getUserDetail(c.var.deps, id),
        listSessions(c.var.deps, id, { limit: 100 }),
        listAuditEvents(c.var.deps, { userId: id, limit: 20 }),
        listAuditEvents(c.var.deps, { userId: id, type: "signin.risk", limit: 20 }),
        listUserSecurityKeys(c.var.deps, id),
      ]);
      const [chrome, locks] = await Promise.all([
        chromeOf(c, session, "users"),
        locksOf(c.var.deps, user.id),
      ]);
      const impersonation = await impersonationOfUser(c, chrome, user.id);
      return render(
        c,
        user.email ?? user.id,
        userPage(
          chrome,
          user,
          sessions.items,
          events.items,
          html`${lockoutSection(chrome, user.id, locks)}${riskSection(risk.items)}${passkeysSection(chrome, userPath(user.id), keys)}${impersonation}${userEditor(chrome, user)}`,
        ),
      );
    }),
  )
  .post(
    "/users/:id/edit",
    action(async (c, session) => {
      const id = c.req.param("id")!;
      const form = await c.req.parseBody();
      const text = (name: string, max: number) =>
        typeof form[name] === "string" ? (form[name] as string).slice(0, max) : "";
      try {
        let metadata: unknown;
        try {
          metadata = JSON.parse(text("metadata", 16_384) || "{}");
        } catch {
          throw new AppError("invalid-request", "metadata: not JSON");
        }
        if (!metadata || typeof metadata !== "object" || Array.isArray(metadata)) {
          throw new AppError("invalid-request", "metadata: a JSON object, please");
        }
        const roles = text("roles", 2000)
          .split(",")
          .map((role) => role.trim())
          .filter(Boolean);
        const user = await patchUser(c.var.deps, id, {
          displayName: text("displayName", 100).trim(),
          roles,
          defaultRole: text("defaultRole", 100).trim(),
          metadata: metadata as Record<string, unknown>,
          emailVerified: form.emailVerified === "yes",
        });
        auditAdminAction(c, "user.update", user.id, {
          fields: ["displayName", "roles", "defaultRole", "metadata", "emailVerified"],
        });
        return back(c, userPath(user.id), "saved");
      } catch (error) {
        if (!(error instanceof AppError) || error.status >= 500) throw error;
        const user = await getUserDetail(c.var.deps, id);
        const chrome = await chromeOf(c, session, "users");
        const [sessions, events] = await Promise.all([
          listSessions(c.var.deps, id, { limit: 100 }),
          listAuditEvents(c.var.deps, { userId: id, limit: 20 }),
        ]);
        return render(
          c,
          user.email ?? user.id,
          userPage(chrome, user, sessions.items, events.items, userEditor(chrome, user, error.message)),
          400,
        );
      }
    }),
  )
  .post(
    "/users/:id/send-verification",
    action(async (c) => {
      const user = await requireUser(c.var.deps, c.req.param("id")!);
      if (!user.email) throw new AppError("invalid-request", "this user has no email address");
      await sendVerificationEmail(c.var.deps, user.email, {});
      auditAdminAction(c, "user.send-verification", user.id);
      return back(c, userPath(user.id), "verification-sent");
    }),
  )
  .post(
    "/users/:id/send-reset",
    action(async (c) => {
      const user = await requireUser(c.var.deps, c.req.param("id")!);
      if (!user.email) throw new AppError("invalid-request", "this user has no email address");
      await sendPasswordResetEmail(c.var.deps, user.email, {});
      auditAdminAction(c, "user.send-reset", user.id);
      return back(c, userPath(user.id), "reset-sent");
    }),
  )
  .post(
    "/users/:id/disable",
    action(async (c) => {
      const user = await patchUser(c.var.deps, c.req.param("id")!, { disabled: true });
      auditAdminAction(c, "user.disable", user.id, { fields: ["disabled"] });
      return back(c, userPath(user.id), "disabled");
    }),
  )
  .post(
    "/users/:id/enable",
    action(async (c) => {
      const user = await patchUser(c.var.deps, c.req.param("id")!, { disabled: false });
      auditAdminAction(c, "user.update", user.id, { fields: ["disabled"] });
      return back(c, userPath(user.id), "enabled");
    }),
  )
  .post(
    "/users/:id/delete",
    action(async (c) => {
      const form = await c.req.parseBody();
      if (form.confirm !== "yes") throw new AppError("invalid-request", "confirm the deletion");
      const deleted = await deleteUser(c.var.deps, c.req.param("id")!);
      auditAdminAction(c, "user.delete", deleted.id, { email: deleted.email });
      return back(c, "", "deleted");
    }),
  )
  .post(
    "/users/:id/unlock",
    action(async (c) => {
      const { id, factors } = await unlockUser(c.var.deps, c.req.param("id")!);
      auditAdminAction(c, "user.unlock", id, { factors });
      return back(c, userPath(id), "unlocked");
    }),
  )
  .post(
    "/users/:id/sessions/revoke",
    action(async (c) => {
      // As the API does: an unknown user is a 404, not a reported success.
      const user = await requireUser(c.var.deps, c.req.param("id")!);
      await revokeAllSessions(c.var.deps, user.id);
      auditAdminAction(c, "sessions.revoke-all", user.id);
      return back(c, userPath(user.id), "sessions-revoked");
    }),
  )
  .post(
    "/users/:id/sessions/:sessionId/revoke",
    action(async (c) => {
      const sessionId = c.req.param("sessionId")!;
      const userId = await revokeSessionById(c.var.deps, sessionId);
      auditAdminAction(c, "session.revoke", userId, { sessionId });
      return back(c, userPath(userId), "session-revoked");
    }),
  );
