import { Hono } from "hono";
import { html } from "hono/html";
import {
  mfaTicketUser,
  renewSession,
  signInEmailPassword,
  signInPasswordlessEmail,
  signInScope,
  verifySignInMfaCode,
} from "../auth";
import { methodsOfSessionRow, type SignInMethod } from "../browser/acr";
import { passSignUpChecks, passTurnstile, rateLimited, turnstileMessage } from "../browser/checks";
import { backToPage, type Ctx, paths, returnTarget, viewHref } from "../browser/page-paths";
import { asUnavailable, render } from "../browser/page-response";
import { catalogueFor, type PageText, pageText } from "../browser/page-text";
import { mailSent, mfaForm } from "../browser/render";
import { openFirstFactor, sealFirstFactor, startBrowserSession } from "../browser/session";
import { sessionFacts } from "../browser/step-up-sessions";
import { CATALOGUES, type Language } from "../browser/text";
import { AppError, RateLimitedError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { emailField } from "../http/fields";
import type { InteractionRequest } from "../oauth2";
import { ssoUrlForSignInPage } from "../sso";
import { faultMessage, newPasswordPage } from "./account-routes";
import { formRequest } from "./form-requests";
import { isLandingInAskingBrowser, pageLinkTarget } from "./link-binding";
import { signInPage } from "./sign-in-pages";

/** How the built-in page signs a person in: a password (then TOTP if active), or a magic link by email. */

/** What the page says for a refused sign-in, in the page's language; for a fault, to try again (`faultMessage`). */
export function signInMessage(c: Ctx, t: PageText, error: AppError): string {
  if (error instanceof RateLimitedError) {
    // A locked sign-in (contract §13) says how long in minutes and where the way out is (the mail); the second-factor
    // guess cap names codes; a rate-limit bucket names attempts.
    if (error.code === "account-locked")
      return t.errors.accountLocked(Math.max(1, Math.ceil(error.retryAfterSeconds / 60)));
    return /wrong codes/.test(error.message)
      ? t.errors.tooManyCodes(error.retryAfterSeconds)
      : t.errors.tooManyAttempts(error.retryAfterSeconds);
  }
  // A fault is no refusal, so concealing has nothing to hide in it: "Sign-in failed." would read as a wrong password.
  if (error.status === 503) return faultMessage(t, error);
  if (c.var.config.concealErrors) return t.errors.failed;
  switch (error.code) {
    case "invalid-email-password":
      return t.errors.wrongPassword;
    case "unverified-user":
      return t.errors.unverified;
    case "disabled-user":
      return t.errors.disabled;
    case "invalid-totp":
      return t.errors.wrongCode;
    case "invalid-ticket":
    case "invalid-refresh-token":
      return t.errors.expiredLink;
    default:
      return turnstileMessage(t, error) ?? error.message;
  }
}

/**
 * The TOTP step's words. The first factor has said who is signing in, so the user's own `locale` comes after
 * `ui_locales` and before the browser's languages, as on every page of a known user (the account center's too).
 */
const mfaText = async (c: Ctx, request: InteractionRequest, ticket: string) =>
  pageText(c, request.uiLocales, (await mfaTicketUser(c.var.deps, ticket))?.locale);

/** The second step of a sign-in with TOTP active; `first` is the sealed first factor the code will join. */
const mfaPage = (
  c: Ctx,
  t: PageText,
  request: InteractionRequest,
  ticket: string,
  first: string,
  error?: string,
  status?: 401 | 429,
) =>
  render(
    c,
    status ?? (error ? 401 : 200),
    t.mfaTitle,
    mfaForm({
      t,
      action: paths(c).mfa,
      requestId: request.id,
      ticket,
      first,
      error,
      lead: leadOf(t, ticket),
    }),
    { t, redirectUri: returnTarget(request) },
  );

/** The code form's lead for a mailed or texted code (a TOTP ticket keeps the page's own). */
function leadOf(t: PageText, ticket: string): string | undefined {
  // In the page's language (the user's own, mfaText), as the rest of the form.
  const words = (CATALOGUES[t.lang as Language] ?? CATALOGUES.en).secondStep;
  if (ticket.startsWith("mfaEmail:")) return words.pageEmailLead;
  if (ticket.startsWith("mfaSms:")) return words.pageSmsLead;
  return undefined;
}

/** What each code step proves, as the page's session records it (acr.ts). */
const CODE_METHOD = { totp: "totp", phone: "sms-otp", email: "email-otp" } as const satisfies Record<
  string,
  SignInMethod
>;

/**
 * The first step of a sign-in that continues with a code (TOTP, a texted or mailed code): the ticket's page, its first
 * factor sealed with it. A passkey step (`mfaWebauthn:`, issue 47) has no code to type: the page says to sign in
 * with the passkey, which its passkey button does (a phishing-resistant sign-in of its own).
 */
const secondStep = async (
  c: Ctx,
  request: InteractionRequest,
  clientName: string,
  ticket: string,
  first: SignInMethod,
) => {
  if (ticket.startsWith("mfaWebauthn:")) {
    const error = catalogueFor(c, request.uiLocales).secondStep.pagePasskey;
    return signInPage(c, request, clientName, { status: 401, error });
  }
  return mfaPage(
    c,
    await mfaText(c, request, ticket),
    request,
    ticket,
    await sealFirstFactor(c.var.deps, ticket, first),
  );
};

/**
 * Where a magic link asked for on the page lands (`/verify` appends `refreshToken` or `mfaTicket`, or `error`): the
 * fresh session becomes the page's cookie, and the address bar is cleaned by the redirect.
 */
export async function landFromEmailLink(c: Ctx, request: InteractionRequest, clientName: string) {
  const query = c.req.query();
  const t = pageText(c, request.uiLocales);
  if (query.error) {
    // A provider's refusal comes back the same way as a link's (identity brokering).
    const fromProvider =
      query.error.startsWith("oauth") || query.error.startsWith("sso-") || query.error === "invalid-state";
    return signInPage(c, request, clientName, {
      status: 401,
      error: fromProvider ? t.errors.providerFailed : t.errors.linkExpired,
    });
  }
  if (!(await isLandingInAskingBrowser(c))) {
    return signInPage(c, request, clientName, { status: 400, error: t.errors.otherBrowser });
  }
  // A mailed link's landing says its `type`; a provider's way back does not.
  if (query.mfaTicket)
    return secondStep(
      c,
      request,
      clientName,
      query.mfaTicket.slice(0, 100),
      query.type ? "email-link" : "provider",
    );
  const signedIn = await sessionToCookie(c, request, clientName, query.refreshToken ?? "");
  if (!("locale" in signedIn)) return signedIn;
  // A reset link proved the inbox and signed the browser in: the person now chooses the new password.
  if (query.type === "passwordReset") return newPasswordPage(c, request, signedIn.locale);
  return backToPage(c, request.id);
}

/**
 * A session the person just got through the API (a magic link's landing, the passkey script) becomes the page's
 * cookie. Its refresh token is spent without the refresh grace window: the same token presented again (a leaked
 * landing URL in the history, a forwarded link) is a replay, which ends the session rather than signing a second
 * browser in.
 */
async function sessionToCookie(
  c: Ctx,
  request: InteractionRequest,
  clientName: string,
  refreshToken: string,
) {
  try {
    const session = await renewSession(c.var.deps, refreshToken.slice(0, 100), 0, undefined, {
      authenticationMethod: "oauth2-page",
    });
    // How the session was made (a magic link, a provider, the passkey script): its row says (step-up-sessions.ts).
    const facts = await sessionFacts(c.var.deps, session.user.id, session.refreshTokenId);
    await startBrowserSession(
      c,
      session.user.id,
      session.refreshTokenId,
      methodsOfSessionRow(facts?.method ?? null),
    );
    // The user's language, for a page shown to them right away (the cookie is only read from the next request).
    return { locale: session.user.locale };
  } catch (error) {
    if (!(error instanceof AppError) || error.status >= 500) throw error;
    const t = pageText(c, request.uiLocales);
    return signInPage(c, request, clientName, { status: 401, error: signInMessage(c, t, error) });
  }
}

/**
 * On to the organization's IdP. Not a redirect: browsers hold a form post's whole redirect chain to the page's
 * `form-action`, which can't name an IdP before the email is typed; a page that navigates by itself (a refresh, with a
 * link for the rest) is a new navigation.
 */
const toIdentityProvider = (c: Ctx, t: PageText, url: string) =>
  render(
    c,
    200,
    t.continue,
    html`<meta http-equiv="refresh" content="0;url=${url}"><p><a href="${url}">${t.continue}</a></p>`,
    { t },
  );

export const pageSignInRoutes = new Hono<AppEnv>()
  .post("/sign-in", async (c) => {
    const form = await formRequest(c);
    if ("failure" in form) return form.failure;
    const { params, request, client } = form;
    const t = pageText(c, request.uiLocales);
    const email = (params.get("email") ?? "").slice(0, 254);
    const password = (params.get("password") ?? "").slice(0, 256);
    const again = (status: 400 | 401 | 429 | 503, error: string, resend?: boolean) =>
      signInPage(c, request, client.clientName, { status, email, error, resend });
    // A fault is no verdict on the password: the form again, as a 503 with Retry-After that says to try again shortly.
    const faulted = (fault: AppError) => asUnavailable(again(503, signInMessage(c, t, fault)), fault);
    const retryAfter = await rateLimited(c, "BRUTE_FORCE", email);
    if (retryAfter !== null) return again(429, t.errors.tooManyAttempts(retryAfter));
    // The email first: a domain with an enterprise connection signs in at its IdP (organizations.md §2).
    if (email && emailField.safeParse(email).success) {
      try {
        const idp = await ssoUrlForSignInPage(c, email, () => pageLinkTarget(c, request.id));
        if (idp) return toIdentityProvider(c, t, idp);
      } catch (error) {
        if (!(error instanceof AppError) || (error.status >= 500 && error.status !== 503)) throw error;
        if (error.status === 503) return faulted(error);
        return again(400, signInMessage(c, t, error));
      }
    }
    if (!email || !password) return again(400, t.errors.enterEmailPassword);
    try {
      await passTurnstile(c, "signin", params);
      const result = await signInEmailPassword(signInScope(c, "oauth2-page"), { email, password });
      if (result.mfa) return secondStep(c, request, client.clientName, result.mfa.ticket, "password");
      const session = result.session!;
      await startBrowserSession(c, session.user.id, session.refreshTokenId, ["password"]);
      return backToPage(c, request.id);
    } catch (error) {
      if (!(error instanceof AppError) || (error.status >= 500 && error.status !== 503)) throw error;
      if (error.status === 503) return faulted(error);
      const status = error.status === 429 ? 429 : 401;
      // An unverified address gets a way to have the mail sent again (not when errors are concealed).
      const resend = error.code === "unverified-user" && !c.var.config.concealErrors;
      return again(status, signInMessage(c, t, error), resend);
    }
  })
  .post("/mfa", async (c) => {
    const form = await formRequest(c);
    if ("failure" in form) return form.failure;
    const { params, request } = form;
    const ticket = (params.get("ticket") ?? "").slice(0, 100);
    // Read before the code is checked: a right code spends the ticket, a wrong one leaves it standing.
    const t = await mfaText(c, request, ticket);
    const otp = (params.get("otp") ?? "").replace(/\s/g, "").slice(0, 64);
    const first = (params.get("first") ?? "").slice(0, 200);
    try {
      const { session, step } = await verifySignInMfaCode(signInScope(c, "oauth2-page"), { ticket, otp });
      const firstFactor = await openFirstFactor(c.var.deps, ticket, first);
      await startBrowserSession(c, session.user.id, session.refreshTokenId, [firstFactor, CODE_METHOD[step]]);
      return backToPage(c, request.id);
    } catch (error) {
      if (!(error instanceof AppError) || error.status >= 500) throw error;
      // The guess cap (contract §11): the code form again, with how long to wait.
      if (error instanceof RateLimitedError)
        return mfaPage(c, t, request, ticket, first, t.errors.tooManyCodes(error.retryAfterSeconds), 429);
      if (error.code === "invalid-totp")
        return mfaPage(c, t, request, ticket, first, signInMessage(c, t, error));
      return signInPage(c, request, form.client.clientName, {
        status: 401,
        error: signInMessage(c, t, error),
      });
    }
  })
  .post("/session", async (c) => {
    const form = await formRequest(c);
    if ("failure" in form) return form.failure;
    const signedIn = await sessionToCookie(
      c,
      form.request,
      form.client.clientName,
      form.params.get("refresh_token") ?? "",
    );
    return "locale" in signedIn ? backToPage(c, form.request.id) : signedIn;
  })
  .post("/email-link", async (c) => {
    const form = await formRequest(c);
    if ("failure" in form) return form.failure;
    const { params, request, client } = form;
    const t = pageText(c, request.uiLocales);
    const email = (params.get("email") ?? "").trim().slice(0, 254);
    const again = (status: 400 | 429 | 503, error: string) =>
      signInPage(c, request, client.clientName, { status, email, error });
    if (!c.var.config.passwordless.emailLink) return again(400, t.errors.linksOff);
    if (!emailField.safeParse(email).success) return again(400, t.errors.enterEmail);
    const retryAfter = await rateLimited(c, "EMAIL", email);
    if (retryAfter !== null) return again(429, t.errors.tooManyEmails(retryAfter));
    try {
      // The link may create the account: the sign-up checks, on every send (a new address is not told apart).
      await passSignUpChecks(c, params, "passwordless");
      const ownRedirect = await pageLinkTarget(c, request.id);
      // A new account gets the page's language as its `locale` (its mails'), if AUTH_LOCALE_ALLOWED_LOCALES allows it.
      const options = { locale: t.lang };
      await signInPasswordlessEmail(
        signInScope(c, "oauth2-page"),
        { email, options },
        "sign-in",
        ownRedirect,
      );
    } catch (error) {
      if (!(error instanceof AppError) || (error.status >= 500 && error.status !== 503)) throw error;
      // A fault (the mail could not be sent, say) is no refused address: nothing is on its way, so no "sent" page; the
      // form again, as a 503 with Retry-After. The API answers the same fault the same 503.
      if (error.status === 503) return asUnavailable(again(503, signInMessage(c, t, error)), error);
      if (error instanceof RateLimitedError)
        return again(429, t.errors.tooManyAttempts(error.retryAfterSeconds));
      if (error.code.startsWith("turnstile-")) return again(400, signInMessage(c, t, error));
      // A refused address (a blocked domain, say) reads like a sent link: the page does not tell who has an
      // account, as the API's "OK" does not.
    }
    return render(
      c,
      200,
      t.checkEmail,
      mailSent({
        t,
        title: t.checkEmail,
        lead: t.linkSentLead(email),
        hint: t.linkSentHint,
        backHref: viewHref(c, request.id),
      }),
      { t },
    );
  });
