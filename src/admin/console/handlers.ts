import type { Context } from "hono";
import { html } from "hono/html";
import { retryAfterOf } from "../../browser/page-response";
import { AppError } from "../../errors";
import type { AppEnv } from "../../http/app-env";
import { setPageHeaders } from "../../http/page-headers";
import { settleRefusal } from "../../http/refusal";
import { type Chrome, layout, loginPage } from "./pages";
import { type ConsoleSession, consolePath, consoleSession, csrfToken, isGenuinePost } from "./session";

/** What every console route shares: rendering, the session check of pages and actions, errors as pages. */

export type Ctx = Context<AppEnv>;

/** Notices shown after an action (the redirect names one; nothing from the request is echoed). */
const NOTICES: Record<string, string> = {
  disabled: "The user is disabled: every session and OAuth2 grant has ended.",
  enabled: "The user is enabled again.",
  deleted: "The user and everything that depended on the account are deleted.",
  "sessions-revoked": "Every session of the user is revoked.",
  "session-revoked": "The session is revoked.",
  "security-key-removed": "The passkey is removed: it signs nobody in any more.",
  unlocked: "Every sign-in method of the user is unlocked.",
  "impersonation-ended": "The impersonation is ended: its session refreshes no more, and the user is told.",
  rotated: "A new key signs from now on.",
  "key-deleted": "The key is deleted: tokens it signed no longer verify.",
  "console-session-ended": "The console session is ended.",
  "console-sessions-ended": "Every other console session is ended.",
  created: "The user is created.",
  saved: "The changes are saved.",
  "verification-sent": "The verification mail is on its way.",
  "reset-sent": "The password reset mail is on its way.",
  "client-deleted": "The client is deleted, with every grant and consent it held.",
  "file-deleted": "The file is deleted, with its cached image variants.",
  "webhook-deleted": "The endpoint is deleted, with its deliveries.",
  "webhook-disabled": "The endpoint is disabled: it gets no new deliveries.",
  "webhook-enabled": "The endpoint is enabled again.",
  redelivered: "The delivery is queued again.",
  "dead-letters-redelivered": "The picked dead letters are queued again.",
  "org-created": "The organization is created, with its first owner.",
  "org-deleted": "The organization is deleted, with its members, invitations, connections and SCIM tokens.",
  "member-added": "The member is added.",
  "member-removed": "The member is removed: their tokens lose the organization at their next refresh.",
  "invitation-sent": "The invitation is on its way.",
  "invitation-withdrawn": "The invitation is withdrawn: its link no longer works.",
  "scim-token-revoked": "The SCIM token is revoked: the identity provider's next request with it is refused.",
  "connection-enabled": "The connection is on: its domains' people sign in through it.",
  "setup-link-revoked":
    "The setup link is revoked: its next use shows the page of a link that does not work.",
  "brand-saved": "The brand is saved: every page shows it within 30 seconds.",
  "brand-reset": "The brand is the configuration's again, on every page within 30 seconds.",
  "schema-saved": "The schema is saved: every check uses it within a second.",
  "policies-saved": "The policy set is saved: every check uses it within a second.",
  "relationship-added": "The relationship is stored.",
  "relationship-removed": "The relationship is deleted.",
};

export function render(
  c: Ctx,
  title: string,
  body: Parameters<typeof layout>[2],
  status: 200 | 400 | 401 | 403 | 404 | 500 | 503 = 200,
  options: { images?: string[] } = {},
) {
  const nonce = setPageHeaders(c, options);
  c.header("Cache-Control", "no-store");
  return c.html(layout(nonce, title, body), status);
}

export async function chromeOf(c: Ctx, session: ConsoleSession, here: Chrome["here"]): Promise<Chrome> {
  const notice = NOTICES[c.req.query("done") ?? ""];
  return { base: consolePath(c), csrf: await csrfToken(c, session), here, ...(notice ? { notice } : {}) };
}

export type Handler = (c: Ctx, session: ConsoleSession) => Promise<Response>;

/**
 * A console error is a page too, not the API's JSON: a refusal (an unknown user, a refused deletion) with its message,
 * a fault as the fault it is (`faultShown`).
 */
async function shown(c: Ctx, work: () => Promise<Response>): Promise<Response> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof AppError && error.status < 500) {
      return render(
        c,
        "Problem",
        html`<p class="error" role="alert">${error.message}</p><p><a href="${consolePath(c)}/users">← Users</a></p>`,
        error.status === 404 ? 404 : 403,
      );
    }
    return faultShown(c, error);
  }
}

/**
 * A fault on a console page, settled and logged as the API's error handler does (`settleRefusal`: a binding that
 * failed for now is a 503, anything else a 500): the operator sees whether to retry (a 503 with `Retry-After`, as the
 * API's and the person's pages answer it, src/browser/page-faults.ts) and the request id to find its log line.
 */
async function faultShown(c: Ctx, caught: unknown): Promise<Response> {
  const fault = await settleRefusal(c, caught);
  const unavailable = fault.status === 503;
  if (unavailable) c.header("Retry-After", String(retryAfterOf(fault)));
  const said = unavailable
    ? html`The service cannot answer right now (request ${c.var.requestId}); try again shortly.`
    : html`Something went wrong (request ${c.var.requestId}); the log has the details.`;
  return render(
    c,
    "Problem",
    html`<p class="error" role="alert">${said}</p><p><a href="${consolePath(c)}/users">← Users</a></p>`,
    unavailable ? 503 : 500,
  );
}

/** A page: with a console session, else the sign-in form. */
export const page = (handler: Handler) => (c: Ctx) =>
  shown(c, async () => {
    const session = await consoleSession(c);
    if (!session) return render(c, "Sign in", loginPage(consolePath(c)), 401);
    return handler(c, session);
  });

/** An action: the session, a same-origin post and the session's CSRF token, else refused. */
export const action = (handler: Handler) => (c: Ctx) =>
  shown(c, async () => {
    const session = await consoleSession(c);
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    const token = typeof form.csrf === "string" ? form.csrf : undefined;
    if (!session || !(await isGenuinePost(c, session, token))) {
      return render(c, "Refused", loginPage(consolePath(c), "That action was refused: sign in again."), 403);
    }
    return handler(c, session);
  });

export const back = (c: Ctx, path: string, done: string) =>
  c.redirect(`${consolePath(c)}${path}?done=${done}`, 303);
/** A user's page, by the id the database holds (never the raw path parameter, which may hold anything). */
export const userPath = (id: string) => `/users/${encodeURIComponent(id)}`;
