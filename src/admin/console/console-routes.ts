import { Hono } from "hono";
import { ACTOR_KINDS, isActorKind } from "../../audit/actor";
import { auditAdminAction } from "../../audit/admin-action";
import { findUserByEmail, findUserById } from "../../auth";
import type { AppEnv } from "../../http/app-env";
import { timingSafeEqualString } from "../../lib/crypto";
import { SIGNING_ALGORITHMS } from "../../lib/key-algorithms";
import { rateLimit } from "../../rate-limits/middleware";
import { listAuditEvents } from "../audit";
import { deleteKey, listKeys, rotateKey } from "../keys";
import { overview } from "../overview";
import { emailsOf } from "../users";
import { auditExportAlert, auditExportDeadLetters } from "./audit-export-alert";
import { consoleBrandRoutes } from "./brand-routes";
import { consoleCibaRoutes } from "./client-ciba";
import { consoleClientDetailTypesRoutes } from "./client-detail-types-routes";
import { consoleClientRoutes } from "./client-routes";
import { action, back, chromeOf, page, render } from "./handlers";
import { consoleImpersonationRoutes } from "./impersonation-routes";
import { consoleOrgRoutes } from "./org-routes";
import { consoleOrgSsoRoutes } from "./org-sso-routes";
import { consoleSessionsPage, keysPage, loginPage } from "./pages";
import { auditPage } from "./pages-audit";
import { overviewPage } from "./pages-overview";
import { consolePasskeyRoutes } from "./passkey-routes";
import {
  consolePath,
  endConsoleSession,
  endConsoleSessions,
  listConsoleSessions,
  startConsoleSession,
} from "./session";
import { consoleSetupLinkRoutes } from "./setup-link-routes";
import { consoleStorageRoutes } from "./storage-routes";
import { consoleUserRoutes } from "./user-routes";
import { consoleVaultRoutes } from "./vault-routes";
import { consoleWebhookRoutes } from "./webhook-routes";

/** The console's first page: where sign-in lands, and its root (issue 34). */
const overviewHandler = page(async (c, session) =>
  render(c, "Overview", overviewPage(await chromeOf(c, session, "overview"), await overview(c.var.deps))),
);

/**
 * The admin console (operations issue): server-rendered pages over the same services as the admin API, for the
 * operator with the admin secret. Every action is a plain form post (CSRF-protected) and is audited like its API
 * counterpart.
 */
export const consoleRoutes = new Hono<AppEnv>()
  // Guessing the admin secret through the form counts like guessing a password (per address, BRUTE_FORCE).
  .post("/login", rateLimit("BRUTE_FORCE"), async (c) => {
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    const secret = c.var.config.secrets.adminSecret!;
    const given = typeof form.secret === "string" ? form.secret : "";
    if (c.req.header("origin") !== new URL(c.req.url).origin || !timingSafeEqualString(given, secret)) {
      auditAdminAction(c, "console.sign-in-failed");
      return render(c, "Sign in", loginPage(consolePath(c), "That is not the admin secret."), 401);
    }
    await startConsoleSession(c);
    auditAdminAction(c, "console.sign-in");
    return c.redirect(`${consolePath(c)}/overview`, 303);
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
  // The root shows the Overview too. With a query it is the users list's old address (before the list moved to
  // `/users`): its filters go on there, so bookmarks keep working.
  .get("/", async (c) => {
    const { search } = new URL(c.req.url);
    return search ? c.redirect(`${consolePath(c)}/users${search}`, 303) : overviewHandler(c);
  })
  .get("/overview", overviewHandler)
  .get(
    "/keys",
    page(async (c, session) =>
      render(c, "Signing keys", keysPage(await chromeOf(c, session, "keys"), await listKeys(c.var.deps))),
    ),
  )
  .post(
    "/keys/rotate",
    action(async (c) => {
      const { alg } = await c.req.parseBody();
      const asked = SIGNING_ALGORITHMS.find((known) => known === alg);
      const key = await rotateKey(c.var.deps, asked);
      auditAdminAction(c, "keys.rotate", null, { kid: key.kid, alg: key.alg });
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
      const deps = c.var.deps;
      const text = (name: string, max: number) => (c.req.query(name) ?? "").trim().slice(0, max);
      const filters = {
        user: text("user", 254),
        actor: text("actor", 20),
        type: text("type", 100),
        ip: text("ip", 64),
        from: text("from", 10),
        to: text("to", 10),
      };
      const day = (value: string) =>
        /^\d{4}-\d{2}-\d{2}$/.test(value) ? Date.parse(`${value}T00:00:00Z`) : undefined;
      const chrome = await chromeOf(c, session, "audit");
      const alert = auditExportAlert(chrome, await auditExportDeadLetters(deps));
      if (filters.actor && !isActorKind(filters.actor)) {
        const problem = `No actor is called ${filters.actor}: ${ACTOR_KINDS.join(", ")}.`;
        return render(
          c,
          "Audit log",
          auditPage(chrome, { events: [], emails: new Map(), filters, nextCursor: null, problem, alert }),
        );
      }
      let userId: string | undefined;
      let userEmail: string | undefined;
      if (filters.user) {
        const user = filters.user.includes("@")
          ? await findUserByEmail(deps.shards, filters.user.toLowerCase())
          : await findUserById(deps.shards, filters.user);
        if (!user) {
          const problem = `No user with ${filters.user.includes("@") ? "the address" : "the id"} ${filters.user}.`;
          return render(
            c,
            "Audit log",
            auditPage(chrome, { events: [], emails: new Map(), filters, nextCursor: null, problem, alert }),
          );
        }
        userId = user.id;
        userEmail = user.email ?? undefined;
      }
      const until = day(filters.to);
      const events = await listAuditEvents(deps, {
        userId,
        userEmail,
        type: filters.type || undefined,
        actor: isActorKind(filters.actor) ? filters.actor : undefined,
        ip: filters.ip || undefined,
        since: day(filters.from),
        until: until === undefined ? undefined : until + 86_400_000,
        limit: 50,
        cursor: c.req.query("cursor"),
      });
      const emails = await emailsOf(
        deps,
        events.items.map((event) => event.userId).filter((id): id is string => !!id),
      );
      return render(
        c,
        "Audit log",
        auditPage(chrome, { events: events.items, emails, filters, nextCursor: events.nextCursor, alert }),
      );
    }),
  )
  .route("/", consoleUserRoutes)
  .route("/", consolePasskeyRoutes)
  .route("/", consoleImpersonationRoutes)
  .route("/", consoleOrgRoutes)
  .route("/", consoleOrgSsoRoutes)
  .route("/", consoleSetupLinkRoutes)
  .route("/", consoleClientRoutes)
  .route("/", consoleVaultRoutes)
  .route("/", consoleCibaRoutes)
  .route("/", consoleClientDetailTypesRoutes)
  .route("/", consoleStorageRoutes)
  .route("/", consoleWebhookRoutes)
  .route("/", consoleBrandRoutes);
