import { Hono } from "hono";
import { html } from "hono/html";
import { AppError } from "../../errors";
import type { AppEnv } from "../../http/app-env";
import { endImpersonation, impersonationsOf, startImpersonation } from "../../impersonation";
import { action, back, type Ctx, chromeOf, render, userPath } from "./handlers";
import { type Chrome, frame } from "./pages";
import { impersonationSection, startedPage } from "./pages-impersonation";

/**
 * The console's impersonation (contract operators.md §1): the section of the user's page, starting one (the same
 * `startImpersonation` as the admin API: the same checks, the same audit) and ending one. Every post passes the
 * console's session and CSRF checks (`action`).
 */

/** The section for the user's page, read for it. */
export async function impersonationOfUser(c: Ctx, chrome: Chrome, userId: string, error?: string) {
  const rows = await impersonationsOf(c.var.deps, userId);
  return impersonationSection(
    chrome,
    userId,
    rows,
    c.var.config.impersonation.enabled,
    c.var.deps.now(),
    error,
  );
}

/** A refused start: the section again with the reason, and the way back. */
const refusedPage = (
  chrome: Chrome,
  userId: string,
  section: Awaited<ReturnType<typeof impersonationOfUser>>,
) => frame(chrome, html`${section}<p><a href="${chrome.base}${userPath(userId)}">← Back to the user</a></p>`);

export const consoleImpersonationRoutes = new Hono<AppEnv>()
  .post(
    "/users/:id/impersonate",
    action(async (c, session) => {
      const userId = c.req.param("id")!;
      const form = await c.req.parseBody();
      const text = (name: string, max: number) =>
        typeof form[name] === "string" ? (form[name] as string).trim().slice(0, max + 1) : "";
      const chrome = await chromeOf(c, session, "users");
      const expiresIn = Number(text("expiresIn", 10) || 3600);
      const actor = text("actor", 200);
      const reason = text("reason", 500);
      try {
        if (!actor) throw new AppError("invalid-request", "your name is required");
        if (!reason) throw new AppError("invalid-request", "a reason is required");
        if (reason.length > 500)
          throw new AppError("invalid-request", "the reason is at most 500 characters");
        if (!Number.isInteger(expiresIn) || expiresIn < 60 || expiresIn > 8 * 3600)
          throw new AppError("invalid-request", "the lifetime is between a minute and 8 hours");
        const started = await startImpersonation(c.var.deps, {
          userId,
          actor,
          reason,
          expiresIn,
          caller: null,
          userAgent: c.req.header("user-agent"),
        });
        return render(c, "Impersonation started", startedPage(chrome, userId, started.url, started.endsAt));
      } catch (error) {
        if (!(error instanceof AppError) || error.status >= 500 || error.code === "not-found") throw error;
        return render(
          c,
          "Impersonation refused",
          refusedPage(chrome, userId, await impersonationOfUser(c, chrome, userId, error.message)),
          400,
        );
      }
    }),
  )
  .post(
    "/impersonations/:sessionId/end",
    action(async (c) => {
      const sessionId = c.req.param("sessionId")!;
      const userId = await endImpersonation(c.var.deps, sessionId, "console");
      return back(c, `${userPath(userId)}`, "impersonation-ended");
    }),
  );
