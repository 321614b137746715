import { Hono } from "hono";
import { activeMembership } from "../auth";
import { backToPage, type Ctx, paths } from "../browser/page-paths";
import { render, showProblem, UNKNOWN_REQUEST } from "../browser/page-response";
import { catalogueFor, pageText } from "../browser/page-text";
import { type BrowserSession, endBrowserSession, readBrowserSession } from "../browser/session";
import { demandOf, judge } from "../browser/step-up";
import { AppError } from "../errors";
import type { AppEnv } from "../http/app-env";
import {
  allowInteraction,
  type Completer,
  completeInteraction,
  consentQuestion,
  denyInteraction,
  type InteractionClient,
  type InteractionRequest,
  shownAuthorizationDetails,
} from "../oauth2";
import { pageAccountRoutes } from "./account-routes";
import { cibaOtherAccount } from "./ciba-routes";
import { formRequest, pageRequest } from "./form-requests";
import { appStep } from "./hosted-step";
import { invitationStep, joinInvitation } from "./invitation-routes";
import { selectAccountForm } from "./reauth-render";
import { pageReauthRoutes } from "./reauth-routes";
import { reauthStep, userLabelOf } from "./reauth-step";
import { cibaApproved, cibaDenied, consentForm, deviceFinished } from "./render-consent";
import { accountPage, signInPage } from "./sign-in-pages";
import { landFromEmailLink, pageSignInRoutes } from "./sign-in-routes";

/** Who completes the request: the person signed in to this browser, and when each of their methods was performed. */
const completerOf = (session: BrowserSession): Completer => ({
  userId: session.user.id,
  times: session.methods,
  sid: session.sessionId,
  actor: session.actor,
});

/**
 * The end of the request for the signed-in user, as the interaction contract finished it (oauth2
 * `completeInteraction`, `allowInteraction`): back to the client with a code, or for a device request a page saying
 * its authorization is approved. A request decided already or expired meanwhile: the page says so.
 */
async function finish(
  c: Ctx,
  request: InteractionRequest,
  session: BrowserSession,
  end: () => Promise<{ redirectUri: string } | { device: true }>,
) {
  let done: { redirectUri: string } | { device: true };
  try {
    done = await end();
  } catch (error) {
    // An impersonation's refusal (operators.md §1) says why; any other, that the request is gone.
    if (error instanceof AppError && error.code === "forbidden")
      return showProblem(c, () => error.message, 403);
    if (error instanceof AppError) return showProblem(c, (t) => t.errors.unknownRequest);
    throw error;
  }
  if ("redirectUri" in done) return c.redirect(done.redirectUri, 303);
  const catalogue = catalogueFor(c, request.uiLocales, session.user.locale);
  const t = catalogue.pages;
  if (request.ciba) return render(c, 200, catalogue.ciba.approvedTitle, cibaApproved(catalogue.ciba), { t });
  return render(c, 200, t.deviceConnected, deviceFinished(t, "approved"), { t });
}

/**
 * What the page shows next for this request: sign-in; a re-authentication when the session does not meet what the
 * request asks (`max_age`, `prompt=login`, `acr_values`: browser/step-up.ts); the account choice of
 * `prompt=select_account`; consent; or nothing (back to the client).
 */
async function nextStep(c: Ctx, request: InteractionRequest, client: InteractionClient) {
  const deps = c.var.deps;
  const session = await readBrowserSession(c);
  if (!session) return signInPage(c, request, client.clientName);
  // A CIBA request is decided by the user it asks only; someone else signed in here may switch accounts.
  if (request.ciba && request.ciba.userId !== session.user.id) return cibaOtherAccount(c, request, session);
  if (judge(session.methods, demandOf(request, deps.now())) !== "met") {
    return reauthStep(c, request, client.clientName, session);
  }
  // OIDC Core §3.1.2.1 select_account: asked unless the person authenticated during this very request (choosing the
  // account as they did); "continue" posts to `/select-account`, which goes on from here.
  if (request.prompt.includes("select_account") && session.authTime < request.createdAt) {
    const t = pageText(c, request.uiLocales, session.user.locale);
    const body = selectAccountForm({
      t,
      clientName: client.clientName,
      userLabel: userLabelOf(session.user),
      actions: { select: paths(c).selectAccount, switchAccount: paths(c).switch },
      hidden: { request_id: request.id },
    });
    return render(c, 200, t.selectAccountTitle, body, { t, redirectUri: request.redirectUri || undefined });
  }
  return consentStep(c, request, client, session);
}

/**
 * Consent, unless the person allowed this client every scope before (incremental consent, contract §12: a client
 * that comes back with a wider scope is asked about the new scopes only; those allowed before are listed apart). What
 * to ask is the interaction contract's to say (oauth2 `consentQuestion`).
 */
async function consentStep(
  c: Ctx,
  request: InteractionRequest,
  client: InteractionClient,
  session: BrowserSession,
) {
  const deps = c.var.deps;
  const clientName = client.clientName;
  const question = await consentQuestion(deps, request, session.user.id);
  if (!question.ask) {
    const { orgId } = question;
    return finish(c, request, session, () =>
      completeInteraction(deps, request.id, completerOf(session), orgId),
    );
  }
  const { user } = session;
  const catalogue = catalogueFor(c, request.uiLocales, session.user.locale);
  const t = catalogue.pages;
  const { facts } = client;
  // A reviewed client's logo: its origin may serve images to this page only.
  const images = facts.logoUri ? [facts.logoUri] : [];
  return render(
    c,
    200,
    t.allowTitle(clientName),
    consentForm({
      t,
      action: paths(c).consent,
      switchAction: paths(c).switch,
      requestId: request.id,
      clientName,
      scopes: request.scopes,
      granted: question.granted,
      userLabel: userLabelOf(user),
      facts,
      deviceUserCode: request.device?.userCode,
      ...(request.ciba
        ? { ciba: { words: catalogue.ciba, bindingMessage: request.ciba.bindingMessage } }
        : {}),
      resources: request.resources,
      organizations: question.organizations,
      selectedOrg: question.selectedOrg,
      authorizationDetails: shownAuthorizationDetails(client, request, t.lang),
    }),
    // After consent the browser goes on to the client's redirect URI; a device's or CIBA request stays here.
    request.device || request.ciba ? { t, images } : { t, images, redirectUri: request.redirectUri },
  );
}

/**
 * The built-in login and consent page, mounted at `/oauth2/interaction` always: the authorization server's requests
 * only while it is on and no external login UI is set (oauth2 `describeInteraction`), a first-party app's always.
 */
export const interactionRoutes = new Hono<AppEnv>()
  .get("/", async (c) => {
    const loaded = await pageRequest(c, c.req.query("request_id"));
    if (!loaded) return showProblem(c, UNKNOWN_REQUEST);
    const { request, client } = loaded;
    const query = c.req.query();
    if (query.refreshToken || query.mfaTicket || query.error)
      return landFromEmailLink(c, request, client.clientName);
    if (query.view === "sign-up" || query.view === "reset") {
      return accountPage(c, request, client.clientName, query.view);
    }
    // An invitation's request has no client: sign-in, then joining instead of consent.
    if (loaded.invitation) return invitationStep(c, request, loaded.invitation);
    // A first-party app's (the hosted pages): sign-in, then back to the app, no consent.
    if (loaded.app) return appStep(c, loaded.request, client.clientName);
    return nextStep(c, request, loaded.client);
  })
  .route("/", pageSignInRoutes)
  .route("/", pageAccountRoutes)
  .route("/", pageReauthRoutes)
  .post("/select-account", async (c) => {
    const form = await formRequest(c);
    if ("failure" in form) return form.failure;
    const session = await readBrowserSession(c);
    if (
      form.invitation ||
      form.app ||
      !session ||
      judge(session.methods, demandOf(form.request, c.var.deps.now())) !== "met"
    ) {
      return backToPage(c, form.request.id);
    }
    return consentStep(c, form.request, form.client, session);
  })
  .post("/consent", async (c) => {
    const form = await formRequest(c);
    if ("failure" in form) return form.failure;
    const { params, request } = form;
    const deps = c.var.deps;
    const session = await readBrowserSession(c);
    if (!session || judge(session.methods, demandOf(request, deps.now())) !== "met") {
      return backToPage(c, request.id);
    }
    if (form.invitation) return joinInvitation(c, request, form.invitation);
    // An app's request has nothing to consent to: its page completes it (hosted-step.ts).
    if (form.app) return backToPage(c, request.id);
    if (request.ciba && request.ciba.userId !== session.user.id) return cibaOtherAccount(c, request, session);
    if (params.get("decision") !== "allow") {
      let denied: Awaited<ReturnType<typeof denyInteraction>>;
      try {
        denied = await denyInteraction(deps, request.id, session.user.id, session.actor);
      } catch (error) {
        // Decided already, or expired, since the form was shown (two tabs, a late click).
        // An impersonation's refusal (operators.md §1) says why; any other, that the request is gone.
        if (error instanceof AppError && error.code === "forbidden")
          return showProblem(c, () => error.message, 403);
        if (error instanceof AppError) return showProblem(c, (t) => t.errors.unknownRequest);
        throw error;
      }
      if ("redirectUri" in denied) return c.redirect(denied.redirectUri, 303);
      const catalogue = catalogueFor(c, request.uiLocales, session.user.locale);
      const t = catalogue.pages;
      if (request.ciba) {
        const words = catalogue.ciba;
        return render(c, 200, words.deniedTitle, cibaDenied(words), { t });
      }
      return render(c, 200, t.deviceDenied, deviceFinished(t, "denied"), { t });
    }
    // The organization picked: one the user is an active member of now, or none. A tampered form (another org's
    // id) is refused, not downgraded to "none", so the person sees that the choice did not hold.
    const picked = request.device || request.ciba ? undefined : params.get("organization");
    const org = picked ? await activeMembership(deps, picked, session.user.id) : undefined;
    if (picked && !org) return showProblem(c, (t) => t.errors.notAMember, 403);
    // The consent is remembered (a device's never is: it is asked every time), and the request completes.
    const orgId = org?.orgId ?? null;
    return finish(c, request, session, () => allowInteraction(deps, request.id, completerOf(session), orgId));
  })
  .post("/switch", async (c) => {
    const form = await formRequest(c);
    if ("failure" in form) return form.failure;
    endBrowserSession(c);
    return backToPage(c, form.request.id);
  });
