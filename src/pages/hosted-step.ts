import { signInScope } from "../auth";
import type { Ctx } from "../browser/page-paths";
import { showProblem } from "../browser/page-response";
import { type BrowserSession, readBrowserSession } from "../browser/session";
import { demandOf, judge } from "../browser/step-up";
import { AppError } from "../errors";
import { refuseWhileImpersonating } from "../http/impersonation";
import { type AppReturn, finishAppInteraction, type InteractionRequest } from "../oauth2";
import { hostedProblem } from "./hosted-text";
import { upgradeStep } from "./passkey-upgrade";
import { reauthStep } from "./reauth-step";
import { signInPage } from "./sign-in-pages";

/**
 * The page's steps for a first-party app's request (contract §13, src/oauth2/app-requests.ts): sign in (or up, or
 * reset: the page's views, which all come back here signed in), a fresh sign-in when the app asked `prompt=login`,
 * then back to the app. Nothing to consent to: the app is the deployment's own.
 */
export async function appStep(c: Ctx, request: InteractionRequest & { app: AppReturn }, name: string) {
  const session = await readBrowserSession(c);
  if (!session) return signInPage(c, request, name);
  // `prompt=login` (demandOf): a sign-in made for this very request; an older one confirms it is the same person.
  if (judge(session.methods, demandOf(request, c.var.deps.now())) !== "met") {
    return reauthStep(c, request, name, session);
  }
  return backToApp(c, request.app.redirectTo, session, request);
}

/**
 * Sends the browser back to the app for the person signed in to the pages (oauth2 `finishAppInteraction`): with a
 * new session's refresh token, or to the account center as it is. `request`: the pending request it completes, spent
 * there; undefined for a browser already signed in when the app sent it (`GET /signin`).
 */
export async function backToApp(
  c: Ctx,
  redirectTo: string,
  session: BrowserSession,
  request?: InteractionRequest,
) {
  const uiLocales = request?.uiLocales ?? [];
  try {
    // A new session minted from an impersonation's page session would carry no `act` and no end (operators.md §1):
    // the impersonation reaches the app through its own landing link only.
    refuseWhileImpersonating(session.actor, "signing an app in from the pages");
    const target = await finishAppInteraction(signInScope(c, null), redirectTo, session.user, request);
    if (!target) return hostedProblem(c, uiLocales, (words) => words.completedAlready);
    // Right after a password, link or code sign-in: the passkey upgrade's page on the way (docs/passkeys.md).
    const upgrade = request && (await upgradeStep(c, session, target, uiLocales));
    return upgrade ?? c.redirect(target, 303);
  } catch (error) {
    // The allow-list no longer has the target (it changed while the request waited); any other refusal of the new
    // session (enforced SSO) as a failed sign-in.
    if (!(error instanceof AppError) || error.status >= 500) throw error;
    if (error.code === "redirectTo-not-allowed")
      return hostedProblem(c, uiLocales, (words) => words.redirectNotAllowed);
    return showProblem(c, (t) => t.errors.failed, 403);
  }
}
