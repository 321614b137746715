import { type Context, Hono } from "hono";
import { html } from "hono/html";
import { auditAdminAction } from "../../audit/admin-action";
import { revokeAllSessions } from "../../auth/sessions";
import { AppError } from "../../errors";
import type { AppEnv } from "../../http/app-env";
import { logError } from "../../http/context";
import { setPageHeaders } from "../../http/page-headers";
import { timingSafeEqualString } from "../../lib/crypto";
import { listClients } from "../../oauth2";
import { rateLimit } from "../../rate-limits/middleware";
import { listAuditEvents } from "../audit";
import { deleteKey, listKeys, rotateKey } from "../keys";
import { listSessions, revokeSessionById } from "../sessions";
import { deleteUser, getUserDetail, listUsers, patchUser, requireUser } from "../users";
import {
  auditPage,
  type Chrome,
  clientsPage,
  consoleSessionsPage,
  keysPage,
  layout,
  loginPage,
  userPage,
  usersPage,
} from "./pages";
import {
  type ConsoleSession,
  consolePath,
  consoleSession,
  csrfToken,
  endConsoleSession,
  endConsoleSessions,
  isGenuinePost,
  listConsoleSessions,
  startConsoleSession,
} from "./session";

type Ctx = Context<AppEnv>;

/** Notices shown after an action (the redirect names one; nothing from the request is echoed). */
const NOTICES: Record<string, string> = {
  disabled: "The user is disabled: every session and OAuth2 grant has ended.",
  enabled: "The user is enabled again.",
  deleted: "The user and everything that depended on the account are deleted.",
  "sessions-revoked": "Every session of the user is revoked.",
  "session-revoked": "The session is revoked.",
  rotated: "A new key signs from now on.",
  "key-deleted": "The key is deleted: tokens it signed no longer verify.",
  "console-session-ended": "The console session is ended.",
  "console-sessions-ended": "Every other console session is ended.",
};

function render(
  c: Ctx,
  title: string,
  body: Parameters<typeof layout>[2],
  status: 200 | 401 | 403 | 404 | 500 = 200,
) {
  const nonce = setPageHeaders(c);
  c.header("Cache-Control", "no-store");
  return c.html(layout(nonce, title, body), status);
}

async function chromeOf(c: Ctx, session: ConsoleSession, here: Chrome["here"]): Promise<Chrome> {
  const notice = NOTICES[c.req.query("done") ?? ""];
  return { base: consolePath(c), csrf: await csrfToken(c, session), here, ...(notice ? { notice } : {}) };
}

type Handler = (c: Ctx, session: ConsoleSession) => Promise<Response>;

/**
 * A console error is a page too, not the API's JSON: a refusal (an unknown user, a refused deletion) with its message,
 * a fault with the request id to find its log line.
 */
async function shown(c: Ctx, work: () => Promise<Response>): Promise<Response> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof AppError && error.status < 500) {
      return render(
        c,
        "Problem",
        html`<p class="error" role="alert">${error.message}</p><p><a href="${consolePath(c)}">← Users</a></p>`,
        error.status === 404 ? 404 : 403,
      );
    }
    logError(c.var.requestId, "console", error);
    return render(
      c,
      "Problem",
      html`<p class="error" role="alert">Something went wrong (request ${c.var.requestId}); the log has the details.</p><p><a href="${consolePath(c)}">← Users</a></p>`,
      500,
    );
  }
}

/** A page: with a console session, else the sign-in form. */
const page = (handler: Handler) => (c: Ctx) =>
  shown(c, async () => {
    const session = await consoleSession(c);
    if (!session) return render(c, "Sign in", loginPage(consolePath(c)), 401);
    return handler(c, session);
  });

/** An action: the session, a same-origin post and the session's CSRF token, else refused. */
const action = (handler: Handler) => (c: Ctx) =>
  shown(c, async () => {
    const session = await consoleSession(c);
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    const token = typeof form.csrf === "string" ? form.csrf : undefined;
    if (!session || !(await isGenuinePost(c, session, token))) {
      return render(c, "Refused", loginPage(consolePath(c), "That action was refused: sign in again."), 403);
    }
    return handler(c, session);
  });

const back = (c: Ctx, path: string, done: string) => c.redirect(`${consolePath(c)}${path}?done=${done}`, 303);
/** A user's page, by the id the database holds (never the raw path parameter, which may hold anything). */
const userPath = (id: string) => `/users/${encodeURIComponent(id)}`;

/**
 * The admin console (operations issue): server-rendered pages over the same services as the admin API, for the
 * operator with the admin secret. Every action is a plain form post (CSRF-protected) and is audited like its API
 * counterpart.
 */
export const consoleRoutes = new Hono<AppEnv>()
  // Guessing the admin secret through the form counts like guessing a password (per address, BRUTE_FORCE).
  .post("/login", rateLimit("BRUTE_FORCE"), async (c) => {
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    const secret = c.var.config.AUTH_ADMIN_SECRET!;
    const given = typeof form.secret === "string" ? form.secret : "";
    if (c.req.header("origin") !== new URL(c.req.url).origin || !timingSafeEqualString(given, secret)) {
      auditAdminAction(c, "console.sign-in-failed");
      return render(c, "Sign in", loginPage(consolePath(c), "That is not the admin secret."), 401);
    }
    await startConsoleSession(c);
    auditAdminAction(c, "console.sign-in");
    return c.redirect(consolePath(c), 303);
  })
  .post(
    "/logout",
    action(async (c, session) => {
      await endConsoleSession(c, session);
      auditAdminAction(c, "console.sign-out");
      return c.redirect(consolePath(c), 303);
    }),
  )
  .get(
    "/sessions",
    page(async (c, session) =>
      render(
        c,
        "Console sessions",
        consoleSessionsPage(await chromeOf(c, session, "sessions"), await listConsoleSessions(c), session.id),
      ),
    ),
  )
  .post(
    "/sessions/:id/end",
    action(async (c) => {
      const id = c.req.param("id")!;
      await endConsoleSessions(c, [id]);
      auditAdminAction(c, "console.session-end", null, { sessionId: id });
      return back(c, "/sessions", "console-session-ended");
    }),
  )
  .post(
    "/sessions/end-others",
    action(async (c, session) => {
      const others = (await listConsoleSessions(c)).map((row) => row.id).filter((id) => id !== session.id);
      await endConsoleSessions(c, others);
      auditAdminAction(c, "console.session-end", null, { sessions: others.length });
      return back(c, "/sessions", "console-sessions-ended");
    }),
  )
  .get(
    "/",
    page(async (c, session) => {
      const search = (c.req.query("search") ?? "").slice(0, 254);
      const cursor = c.req.query("cursor");
      const result = await listUsers(c.var.deps, { search: search || undefined, limit: 50, cursor });
      return render(
        c,
        "Users",
        usersPage(await chromeOf(c, session, "users"), result.items, search, result.nextCursor),
      );
    }),
  )
  .get(
    "/users/:id",
    page(async (c, session) => {
      const id = c.req.param("id")!;
      const [user, sessions, events] = await Promise.all([
        getUserDetail(c.var.deps, id),
        listSessions(c.var.deps, id, { limit: 100 }),
        listAuditEvents(c.var.deps, { userId: id, limit: 20 }),
      ]);
      return render(
        c,
        user.email ?? user.id,
        userPage(await chromeOf(c, session, "users"), user, sessions.items, events.items),
      );
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
  )
  .get(
    "/clients",
    page(async (c, session) => {
      const clients = await listClients(c.var.deps, { limit: 500 });
      return render(c, "OAuth2 clients", clientsPage(await chromeOf(c, session, "clients"), clients.items));
    }),
  )
  .get(
    "/keys",
    page(async (c, session) =>
      render(c, "Signing keys", keysPage(await chromeOf(c, session, "keys"), await listKeys(c.var.deps))),
    ),
  )
  .post(
    "/keys/rotate",
    action(async (c) => {
      const key = await rotateKey(c.var.deps);
      auditAdminAction(c, "keys.rotate", null, { kid: key.kid });
      return back(c, "/keys", "rotated");
    }),
  )
  .post(
    "/keys/:kid/delete",
    action(async (c) => {
      const kid = c.req.param("kid")!;
      const force = (await c.req.parseBody()).force === "yes";
      await deleteKey(c.var.deps, kid, { force });
      auditAdminAction(c, "key.delete", null, { kid, force });
      return back(c, "/keys", "key-deleted");
    }),
  )
  .get(
    "/audit",
    page(async (c, session) => {
      const type = (c.req.query("type") ?? "").slice(0, 100);
      const events = await listAuditEvents(c.var.deps, {
        type: type || undefined,
        limit: 50,
        cursor: c.req.query("cursor"),
      });
      return render(
        c,
        "Audit log",
        auditPage(await chromeOf(c, session, "audit"), events.items, type, events.nextCursor),
      );
    }),
  );
