import { Hono } from "hono";
import {
  resetPasswordInSession,
  sendPasswordResetEmail,
  sendVerificationEmail,
  signInScope,
  signUpEmailPassword,
} from "../auth";
import { passSignUpChecks, passTurnstile, rateLimited, turnstileMessage } from "../browser/checks";
import { backToPage, type Ctx, paths, returnTarget, viewHref } from "../browser/page-paths";
import { asUnavailable, render } from "../browser/page-response";
import { type PageText, pageText } from "../browser/page-text";
import { mailSent } from "../browser/render";
import { readBrowserSession, startBrowserSession } from "../browser/session";
import { AppError, RateLimitedError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { emailField } from "../http/fields";
import type { InteractionRequest } from "../oauth2";
import { formRequest } from "./form-requests";
import { pageLinkTarget } from "./link-binding";
import { newPasswordForm } from "./render-account";
import { accountPage } from "./sign-in-pages";

/**
 * What a person who cannot sign in yet does on the page: create an account, get a reset link, have the confirmation
 * mail sent again, or go to an external provider. Every mailed link and the provider's way back return to this page
 * in this browser (`pageLinkTarget`: signed by the service, bound to the browser), and land on the pending request.
 */

/** A reset link's session may set the new password for this long after it landed. */
const NEW_PASSWORD_WINDOW_MS = 15 * 60_000;

/**
 * A fault's words (a 503: contract §1 "Unavailable"), whether or not errors are concealed: nothing was decided, so
 * they say to try again shortly, never a refusal; Turnstile's own when it was siteverify that could not be asked.
 */
export const faultMessage = (t: PageText, error: AppError): string =>
  turnstileMessage(t, error) ?? t.errors.unavailable;

/** The API's refusals of a sign-up, in the page's words; a fault's (`faultMessage`). */
function signUpMessage(c: Ctx, t: PageText, error: AppError): string {
  if (error.status === 503) return faultMessage(t, error);
  switch (error.code) {
    case "signup-disabled":
      return t.errors.signUpOff;
    case "email-already-in-use":
      return t.errors.emailInUse;
    case "password-too-short":
      return t.errors.passwordTooShort(c.var.config.password.minLength);
    case "password-in-hibp-database":
      return t.errors.passwordBreached;
    case "invalid-email-password":
      return t.errors.emailNotAllowed;
    default:
      return turnstileMessage(t, error) ?? error.message;
  }
}

const sentPage = (c: Ctx, request: InteractionRequest, t: PageText, lead: string, hint?: string) =>
  render(
    c,
    200,
    t.checkEmail,
    mailSent({ t, title: t.checkEmail, lead, hint, backHref: viewHref(c, request.id) }),
    {
      t,
    },
  );

/** `userLocale`: the signed-in user's (the reset link signed them in), the page's language after `ui_locales`. */
export function newPasswordPage(
  c: Ctx,
  request: InteractionRequest,
  userLocale: string,
  error?: string,
  status: 200 | 400 = 200,
) {
  const t = pageText(c, request.uiLocales, userLocale);
  const form = newPasswordForm({
    t,
    action: paths(c).newPassword,
    requestId: request.id,
    minLength: c.var.config.password.minLength,
    error,
  });
  return render(c, status, t.newPasswordTitle, form, { t, redirectUri: returnTarget(request) });
}

const statusOf = (error: AppError) =>
  (error.status === 409 ? 400 : error.status) as 400 | 401 | 403 | 409 | 429;

export const pageAccountRoutes = new Hono<AppEnv>()
  .post("/sign-up", async (c) => {
    const form = await formRequest(c);
    if ("failure" in form) return form.failure;
    const { params, request, client } = form;
    const t = pageText(c, request.uiLocales);
    const email = (params.get("email") ?? "").trim().slice(0, 254);
    const password = (params.get("password") ?? "").slice(0, 256);
    const displayName = (params.get("displayName") ?? "").trim().slice(0, 100);
    const again = (status: 400 | 401 | 403 | 409 | 429 | 503, error: string) =>
      accountPage(c, request, client.clientName, "sign-up", { status, email, displayName, error });
    // A fault is no verdict on the sign-up: the form again, as a 503 with Retry-After that says to try again shortly.
    const faulted = (fault: AppError) => asUnavailable(again(503, signUpMessage(c, t, fault)), fault);
    if (!emailField.safeParse(email).success) return again(400, t.errors.enterEmail);
    const retryAfter = await rateLimited(c, "EMAIL", email);
    if (retryAfter !== null) return again(429, t.errors.tooManyAttempts(retryAfter));
    try {
      await passSignUpChecks(c, params);
      const { session } = await signUpEmailPassword(signInScope(c, "oauth2-page"), {
        email,
        password,
        // The page's language becomes the account's `locale` (its mails'), if AUTH_LOCALE_ALLOWED_LOCALES allows it.
        options: { locale: t.lang, ...(displayName ? { displayName } : {}) },
        ownRedirect: await pageLinkTarget(c, request.id),
      });
      if (!session) return sentPage(c, request, t, t.verifySentLead(email), t.verifySentHint);
      // The account was just made with this password.
      await startBrowserSession(c, session.user.id, session.refreshTokenId, ["password"]);
      return backToPage(c, request.id);
    } catch (error) {
      if (!(error instanceof AppError) || (error.status >= 500 && error.status !== 503)) throw error;
      if (error.status === 503) return faulted(error);
      if (error instanceof RateLimitedError)
        return again(429, t.errors.tooManyAttempts(error.retryAfterSeconds));
      return again(statusOf(error), signUpMessage(c, t, error));
    }
  })
  .post("/reset", async (c) => {
    const form = await formRequest(c);
    if ("failure" in form) return form.failure;
    const { params, request, client } = form;
    const t = pageText(c, request.uiLocales);
    const email = (params.get("email") ?? "").trim().slice(0, 254);
    const again = (status: 400 | 429 | 503, error: string) =>
      accountPage(c, request, client.clientName, "reset", { status, email, error });
    if (!emailField.safeParse(email).success) return again(400, t.errors.enterEmail);
    const retryAfter = await rateLimited(c, "EMAIL", email);
    if (retryAfter !== null) return again(429, t.errors.tooManyEmails(retryAfter));
    try {
      await passTurnstile(c, "password-reset", params);
      await sendPasswordResetEmail(c.var.deps, email, { ownRedirect: await pageLinkTarget(c, request.id) });
    } catch (error) {
      if (!(error instanceof AppError) || (error.status >= 500 && error.status !== 503)) throw error;
      // A fault is no answer about the address: the form again, as a 503 with Retry-After (no "sent" page).
      if (error.status === 503) return asUnavailable(again(503, signUpMessage(c, t, error)), error);
      return again(400, signUpMessage(c, t, error));
    }
    // The same answer whether or not the address has an account, as the API's "OK".
    return sentPage(c, request, t, t.resetSentLead(email), t.linkSentHint);
  })
  .post("/resend-verification", async (c) => {
    const form = await formRequest(c);
    if ("failure" in form) return form.failure;
    const { params, request, client } = form;
    const t = pageText(c, request.uiLocales);
    const email = (params.get("email") ?? "").trim().slice(0, 254);
    if (!emailField.safeParse(email).success)
      return accountPage(c, request, client.clientName, "reset", { status: 400, error: t.errors.enterEmail });
    const retryAfter = await rateLimited(c, "EMAIL", email);
    if (retryAfter === null) {
      try {
        await sendVerificationEmail(c.var.deps, email, { ownRedirect: await pageLinkTarget(c, request.id) });
      } catch (error) {
        // Already verified: nothing to send, and the page does not say which addresses are.
        if (!(error instanceof AppError) || error.status >= 500) throw error;
      }
    }
    return sentPage(c, request, t, t.verifySentLead(email), t.verifySentHint);
  })
  .post("/new-password", async (c) => {
    const form = await formRequest(c);
    if ("failure" in form) return form.failure;
    const { params, request } = form;
    const deps = c.var.deps;
    const session = await readBrowserSession(c);
    const t = pageText(c, request.uiLocales, session?.user.locale);
    // Only right after a reset link signed this browser in: an older page session cannot skip the old password.
    if (!session || deps.now() - session.authTime > NEW_PASSWORD_WINDOW_MS) {
      return accountPage(c, request, form.client.clientName, "reset", {
        status: 401,
        error: t.errors.resetExpired,
      });
    }
    try {
      await resetPasswordInSession(
        deps,
        session.user.id,
        session.sessionId,
        (params.get("password") ?? "").slice(0, 256),
      );
    } catch (error) {
      if (!(error instanceof AppError) || error.status >= 500) throw error;
      return newPasswordPage(c, request, session.user.locale, signUpMessage(c, t, error), 400);
    }
    return backToPage(c, request.id);
  })
  .post("/provider", async (c) => {
    const form = await formRequest(c);
    if ("failure" in form) return form.failure;
    const { params, request } = form;
    const provider = params.get("provider") ?? "";
    if (!(provider in c.var.config.providers.enabled)) return backToPage(c, request.id);
    // Identity brokering: the provider flow's way back is this page, signed for this browser. The provider flow
    // binds the browser again for its own callback (its state cookie).
    const issuerPath = c.var.config.urls.authPath;
    const start = new URL(`${issuerPath}/signin/provider/${encodeURIComponent(provider)}`, c.req.url);
    start.searchParams.set("redirectTo", await pageLinkTarget(c, request.id));
    return c.redirect(start.toString(), 303);
  });
