import { Hono } from "hono";
import { z } from "zod";
import { revokeSession } from "../auth";
import { asPages } from "../browser/page-faults";
import type { Ctx } from "../browser/page-paths";
import { render } from "../browser/page-response";
import { type PageText, pageText } from "../browser/page-text";
import { isSameOrigin } from "../browser/same-origin";
import { type BrowserSession, endBrowserSession, readBrowserSession } from "../browser/session";
import type { AppEnv } from "../http/app-env";
import { brandOf } from "../http/brand";
import { type AnswerDoc, FAULT_PAGE_ANSWERS, operation, REDIRECT_ANSWER } from "../http/documented";
import { checkLogout, type EndSessionParams, type EndSessionProblem, readEndSession } from "../oauth2";
import { confirmSignOut, invalidLogout, signedOut } from "./logout-pages";

/**
 * RP-Initiated Logout 1.0 (contract §12): `GET` and `POST /oauth2/logout`, the `end_session_endpoint`, and the
 * confirmation it may ask for (`POST /oauth2/logout/confirm`). The checks are the authorization server's, through its
 * interaction contract (oauth2 `readEndSession`, `checkLogout`: src/oauth2/logout/end-session.ts).
 *
 * Threat: logout CSRF. Any site can send a browser here; a request must never sign anyone out unless it carries an ID
 * token we signed for this very browser session (its `sid`), which only the client the person signed in to holds.
 * Anything else (no hint, a hint of another session or another user, a link that does not hold) asks first, with a
 * form that only this origin can post (the Origin check every form of the page has), and tells nothing about whose
 * session a hint names. Signing out ends the session itself, not only the cookie: its row goes, which ends its
 * refresh tokens and, through `session.revoked`, notifies the clients of that session (back-channel logout).
 */

export const LOGOUT_PATH = "/oauth2/logout";

const confirmAction = (c: Ctx) => `${c.var.config.urls.authPath}${LOGOUT_PATH}/confirm`;

/** The service as the question names it: the brand's name (contract §13), else the host people signed in at. */
const serviceName = async (c: Ctx) =>
  (await brandOf(c.var.deps, c.var.requestId)).name ?? new URL(c.var.config.urls.server).host;

function problemText(t: PageText, problem: EndSessionProblem): string {
  if (problem === "invalid-hint") return t.errors.logoutInvalidHint;
  if (problem === "unknown-client") return t.errors.logoutUnknownClient;
  return t.errors.logoutUnregisteredRedirect;
}

/** The form's fields: the request as it came, to be checked again when it is posted back. */
const carried = (params: EndSessionParams) => ({
  id_token_hint: params.idTokenHint,
  client_id: params.clientId,
  post_logout_redirect_uri: params.postLogoutRedirectUri,
  state: params.state,
  ui_locales: params.uiLocales.length > 0 ? params.uiLocales.join(" ") : undefined,
});

/** The cookie and the session row both: a cookie alone would leave the session's refresh tokens working. */
async function signOut(c: Ctx, session: BrowserSession): Promise<void> {
  const deps = c.var.deps;
  endBrowserSession(c);
  await revokeSession(deps, session.sessionId);
}

/** After signing out: on to the client's registered URI (with `state`), or a page that says so. */
function finish(c: Ctx, t: PageText, target: string | undefined) {
  if (target) return c.redirect(target, 303);
  return render(c, 200, t.signedOutTitle, signedOut(t), { t });
}

async function endSession(c: Ctx) {
  // The question's form carries the ID token: no cache keeps the page.
  c.header("Cache-Control", "no-store");
  const params = await readEndSession(c);
  if ("unreadable" in params) {
    const t = pageText(c);
    return render(c, 400, t.logoutProblemTitle, invalidLogout({ t, message: params.unreadable }), { t });
  }
  const session = await readBrowserSession(c, { ending: true });
  const t = pageText(c, params.uiLocales, session?.user.locale);
  const checked = await checkLogout(c.var.deps, params);
  if (!checked.ok) {
    // No redirect at all. Someone signed in may still sign out of the service, by asking for it on this page.
    const signOutForm = session
      ? { action: confirmAction(c), fields: { ui_locales: carried(params).ui_locales } }
      : undefined;
    const body = invalidLogout({ t, message: problemText(t, checked.problem), signOut: signOutForm });
    return render(c, 400, t.logoutProblemTitle, body, { t });
  }
  if (!session) {
    // Nobody is signed in here (a cookie of an ended session may remain: it goes too). Nothing to sign out.
    endBrowserSession(c);
    return finish(c, t, checked.target);
  }
  const { hint } = checked;
  if (hint?.sid !== undefined && hint.sid === session.sessionId && hint.sub === session.user.id) {
    await signOut(c, session);
    return finish(c, t, checked.target);
  }
  const { user } = session;
  const service = await serviceName(c);
  return render(
    c,
    200,
    t.signOutTitle(service),
    confirmSignOut({
      t,
      service,
      clientName: checked.clientName,
      userLabel: user.email ?? user.phoneNumber ?? (user.displayName || user.id),
      action: confirmAction(c),
      fields: carried(params),
    }),
    // The form's post ends at the client's URI: browsers hold the whole redirect chain to `form-action`.
    { t, redirectUri: checked.target },
  );
}

async function confirm(c: Ctx) {
  c.header("Cache-Control", "no-store");
  if (!isSameOrigin(c)) {
    const t = pageText(c);
    return render(c, 403, t.logoutProblemTitle, invalidLogout({ t, message: t.errors.otherSite }), { t });
  }
  const params = await readEndSession(c);
  const session = await readBrowserSession(c, { ending: true });
  const t = pageText(c, "unreadable" in params ? [] : params.uiLocales, session?.user.locale);
  if (session) await signOut(c, session);
  else endBrowserSession(c);
  // The person asked to sign out: done whatever the link was. Onward only where the request holds (a verified hint).
  const checked = "unreadable" in params ? undefined : await checkLogout(c.var.deps, params);
  return finish(c, t, checked?.ok ? checked.target : undefined);
}

const endSessionFields = z.object({
  id_token_hint: z
    .string()
    .optional()
    .describe("An ID token this server issued (expired ones too): `aud` names the client, `sid` the session"),
  client_id: z.string().optional().describe("With a hint, must be its `aud`"),
  post_logout_redirect_uri: z
    .string()
    .optional()
    .describe("Exactly one of the client's `postLogoutRedirectUris`; followed only with a verified hint"),
  state: z.string().optional().describe("Passed back on the redirect, as it came"),
  ui_locales: z.string().optional().describe("The page's language: `en`, `de`, `fr`, `es`, `pt`, `ja`"),
  logout_hint: z.string().optional().describe("Accepted; not used"),
});

const PAGE = (description: string): AnswerDoc => ({ description, media: "html" });

const END_SESSION_ANSWERS = {
  200: PAGE(
    'The question "Sign out of …?" (a form that only this origin can post), or "you are signed out".',
  ),
  303: REDIRECT_ANSWER("Signed out: on to `post_logout_redirect_uri` with `state`."),
  400: PAGE("The link does not hold (a hint that does not verify, an unregistered URI): no redirect."),
  ...FAULT_PAGE_ANSWERS,
};

const endSessionDoc = (target: "query" | "form") =>
  operation({
    summary: "End session (RP-initiated logout)",
    description:
      "OpenID Connect RP-Initiated Logout 1.0: the `end_session_endpoint`. With an `id_token_hint` naming this " +
      "browser's session the person is signed out at once (the session ends, and the clients of that session are " +
      "told by back-channel logout) and sent to `post_logout_redirect_uri` with `state`, or shown that they are " +
      "signed out. Otherwise the built-in page asks first. A hint that does not verify, a `client_id` other than " +
      "the hint's audience, or a `post_logout_redirect_uri` the client did not register is a page, never a " +
      "redirect. The redirect needs a verified hint; with `client_id` alone the person gets the signed-out page.",
    request: { target, schema: endSessionFields },
    answers: END_SESSION_ANSWERS,
  });

/**
 * Mounted with the built-in page (oauth2-routes.ts): the session it ends is the page's. A person's browser is sent
 * here by the client: a fault is the pages' fault page (`asPages`), as on the page itself, not the API's JSON; the
 * document lists it (`FAULT_PAGE_ANSWERS`).
 */
export const logoutRoutes = asPages(
  new Hono<AppEnv>()
    .get(LOGOUT_PATH, endSessionDoc("query"), endSession)
    .post(LOGOUT_PATH, endSessionDoc("form"), endSession)
    .post(
      `${LOGOUT_PATH}/confirm`,
      operation({
        summary: "Confirm signing out",
        description:
          "The built-in page's answer to its own question (the form of `GET /oauth2/logout`): signs this browser " +
          "out, then goes on as the end-session request it carries allows. Posted from another origin: 403, and " +
          "nobody is signed out (logout CSRF).",
        request: { target: "form", schema: endSessionFields },
        answers: {
          200: PAGE("Signed out."),
          303: REDIRECT_ANSWER("Signed out: on to `post_logout_redirect_uri` with `state`."),
          403: PAGE("The form came from another site: nobody is signed out."),
          ...FAULT_PAGE_ANSWERS,
        },
      }),
      confirm,
    ),
);
