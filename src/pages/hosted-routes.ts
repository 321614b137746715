import { Hono } from "hono";
import { type Ctx, viewHref } from "../browser/page-paths";
import { readBrowserSession } from "../browser/session";
import { AppError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { appTarget, openAppInteraction } from "../oauth2";
import { backToApp } from "./hosted-step";
import { hostedProblem } from "./hosted-text";

/**
 * The hosted pages of a first-party app (contract §13): `GET {prefix}/signin?redirectTo=…`, `/signup` and `/reset`
 * open the built-in page's sign-in, sign-up and reset views on a pending request of the app (oauth2
 * `openAppInteraction`), and the page ends by sending the browser back to `redirectTo` with `refreshToken`, as a
 * provider sign-in does. Served whether or not the OAuth2 provider is on, and with an external login UI too
 * (docs/protection.md, "Hosted pages").
 *
 * Threats: an open redirect (`redirectTo` passes the API's own allow-list check, or the page says no with 400 and
 * sends the browser nowhere); login CSRF (the views are the page's, whose posts are same-origin and whose mailed links
 * are bound to the browser); a browser already signed in to the pages is sent straight back (single sign-on), which a
 * cross-site request cannot trigger unseen: the page's cookie is SameSite=Lax, so only a top-level navigation carries
 * it, and the token goes only to the allowed target.
 */

type View = "sign-in" | "sign-up" | "reset";

/** `ui_locales` as OIDC spells it (space-separated tags), bounded. */
const uiLocalesOf = (value: string | undefined) =>
  (value ?? "")
    .slice(0, 200)
    .split(" ")
    .filter((tag) => /^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/.test(tag))
    .slice(0, 10);

async function start(c: Ctx, view: View) {
  const deps = c.var.deps;
  const query = c.req.query();
  const uiLocales = uiLocalesOf(query.ui_locales);
  if (query.prompt !== undefined && query.prompt !== "login") {
    return hostedProblem(c, uiLocales, (words) => words.promptNotSupported);
  }
  const promptLogin = query.prompt === "login";
  let target: string;
  try {
    if ((query.redirectTo?.length ?? 0) > 2048) throw new AppError("redirectTo-not-allowed");
    target = appTarget(deps.config, query.redirectTo);
  } catch (error) {
    if (!(error instanceof AppError) || error.status >= 500) throw error;
    return hostedProblem(c, uiLocales, (words) => words.redirectNotAllowed);
  }
  // Single sign-on: a person signed in to the pages goes straight back, unless the app asks for a fresh sign-in. A
  // reset is asked for on purpose, so its view is shown all the same.
  if (view !== "reset" && !promptLogin) {
    const session = await readBrowserSession(c);
    if (session) return backToApp(c, target, session);
  }
  const requestId = await openAppInteraction(deps, target, { promptLogin, uiLocales });
  // The sign-up view only while sign-ups are on; else the sign-in view, which says nothing of creating an account.
  const shown = view === "sign-in" || (view === "sign-up" && c.var.config.signUp.disabled) ? undefined : view;
  // On to the page under the request's id: reloading it keeps the request, and the app's parameters leave the URL.
  return c.redirect(new URL(viewHref(c, requestId, shown), c.req.url).toString(), 303);
}

export const hostedPageRoutes = new Hono<AppEnv>()
  .get("/signin", (c) => start(c, "sign-in"))
  .get("/signup", (c) => start(c, "sign-up"))
  .get("/reset", (c) => start(c, "reset"));
