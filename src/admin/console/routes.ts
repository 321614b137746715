import { Hono } from "hono";
import { auditAdminAction } from "../../audit/admin-action";
import type { AppEnv } from "../../http/app-env";
import { timingSafeEqualString } from "../../lib/crypto";
import { rateLimit } from "../../rate-limits/middleware";
import { listAuditEvents } from "../audit";
import { deleteKey, listKeys, rotateKey } from "../keys";
import { overview } from "../overview";
import { action, back, chromeOf, page, render } from "./handlers";
import { auditPage, consoleSessionsPage, keysPage, loginPage } from "./pages";
import { overviewPage } from "./pages-overview";
import { consoleClientRoutes } from "./routes-clients";
import { consoleUserRoutes } from "./routes-users";
import {
  consolePath,
  endConsoleSession,
  endConsoleSessions,
  listConsoleSessions,
  startConsoleSession,
} from "./session";

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
    "/overview",
    page(async (c, session) =>
      render(c, "Overview", overviewPage(await chromeOf(c, session, "overview"), await overview(c.var.deps))),
    ),
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
  )
  .route("/", consoleUserRoutes)
  .route("/", consoleClientRoutes);
