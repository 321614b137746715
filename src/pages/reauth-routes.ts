import { Hono } from "hono";
import { signInScope } from "../auth";
import type { SignInMethod } from "../browser/acr";
import { rateLimited } from "../browser/checks";
import { backToPage, type Ctx } from "../browser/page-paths";
import { asUnavailable, showProblem } from "../browser/page-response";
import { pageText } from "../browser/page-text";
import { type BrowserSession, raiseBrowserSession, readBrowserSession } from "../browser/session";
import { AppError, RateLimitedError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { cancelInteraction } from "../oauth2";
import { formRequest } from "./form-requests";
import { provePasskey, provePassword, proveTotp } from "./reauth-proofs";
import { reauthStep } from "./reauth-step";
import { signInMessage } from "./sign-in-routes";

/**
 * The re-authentication step's form posts (reauth-step.ts): each proof is checked for the person signed in to this
 * browser and, when it holds, raises the browser session by that method; the page then shows the request's next
 * step. Threats: a proof by ANOTHER account (a passkey of someone else's on this computer) raising this session, which
 * `provePasskey` refuses; a forged record of methods, which the cookie's MAC refuses; a cross-site post, which
 * `formRequest` refuses.
 */

type Form = Exclude<Awaited<ReturnType<typeof formRequest>>, { failure: unknown }>;

/** The post's request and the browser's session; without a session, back to the page (the sign-in form). */
async function stepUpForm(c: Ctx) {
  const form = await formRequest(c);
  if ("failure" in form) return { answer: form.failure };
  const session = await readBrowserSession(c);
  if (!session || form.invitation) return { answer: backToPage(c, form.request.id) };
  return { form: form as Form, session };
}

/**
 * Runs a proof: a method raises the session; a refused proof shows the step again with the reason; a fault shows it
 * again as a 503 that says to try again shortly.
 */
async function raiseWith(
  c: Ctx,
  form: Form,
  session: BrowserSession,
  prove: () => Promise<SignInMethod | "other-user">,
  /** The page's words for a refused proof, when the sign-in form's (`signInMessage`) are not the right ones. */
  wordsFor?: (error: AppError) => string | undefined,
) {
  const t = pageText(c, form.request.uiLocales, session.user.locale);
  const again = (status: 400 | 401 | 429 | undefined, error: string) =>
    reauthStep(c, form.request, form.client.clientName, session, { status, error });
  try {
    const method = await prove();
    if (method === "other-user") return again(400, t.errors.passkeyOfAnotherAccount);
    await raiseBrowserSession(c, session, method);
    return backToPage(c, form.request.id);
  } catch (error) {
    if (!(error instanceof AppError) || (error.status >= 500 && error.status !== 503)) throw error;
    // A fault is no verdict on the proof: the step again, as a 503 that says to try again shortly.
    if (error.status === 503) return asUnavailable(again(undefined, t.errors.unavailable), error);
    if (error instanceof RateLimitedError) return again(429, signInMessage(c, t, error));
    const words = wordsFor?.(error) ?? signInMessage(c, t, error);
    return again(error.status === 400 ? 400 : 401, words);
  }
}

export const pageReauthRoutes = new Hono<AppEnv>()
  .post("/reauth/password", async (c) => {
    const step = await stepUpForm(c);
    if ("answer" in step) return step.answer;
    const { form, session } = step;
    const t = pageText(c, form.request.uiLocales, session.user.locale);
    // The same bucket as the sign-in form's: a re-authentication is no way around its limit.
    const retryAfter = await rateLimited(c, "BRUTE_FORCE", session.user.email ?? session.user.id);
    if (retryAfter !== null) {
      return reauthStep(c, form.request, form.client.clientName, session, {
        status: 429,
        error: t.errors.tooManyAttempts(retryAfter),
      });
    }
    const password = (form.params.get("password") ?? "").slice(0, 256);
    return raiseWith(c, form, session, () =>
      provePassword(signInScope(c, "oauth2-page"), session.user, password),
    );
  })
  .post("/reauth/totp", async (c) => {
    const step = await stepUpForm(c);
    if ("answer" in step) return step.answer;
    const { form, session } = step;
    const otp = (form.params.get("otp") ?? "").replace(/\s/g, "").slice(0, 64);
    return raiseWith(c, form, session, () => proveTotp(signInScope(c, "oauth2-page"), session.user, otp));
  })
  .post("/reauth/passkey", async (c) => {
    const step = await stepUpForm(c);
    if ("answer" in step) return step.answer;
    const { form, session } = step;
    const refreshToken = form.params.get("refresh_token") ?? "";
    const t = pageText(c, form.request.uiLocales, session.user.locale);
    return raiseWith(
      c,
      form,
      session,
      () => provePasskey(signInScope(c, "oauth2-page"), session.user, refreshToken),
      () => t.reauthPasskeyProblem,
    );
  })
  .post("/reauth/cancel", async (c) => {
    // The person can't meet what the client asks and goes back: the client hears why (OpenID Connect Unmet
    // Authentication Requirements 1.0), with `iss` (RFC 9207).
    const form = await formRequest(c);
    if ("failure" in form) return form.failure;
    const { request } = form;
    if (form.invitation || form.app || request.device) return backToPage(c, request.id);
    let back: string | null;
    try {
      back = await cancelInteraction(c.var.deps, request.id);
    } catch (error) {
      // Decided already, or expired, since the step was shown.
      if (error instanceof AppError) return showProblem(c, (t) => t.errors.unknownRequest);
      throw error;
    }
    return back ? c.redirect(back, 303) : backToPage(c, request.id);
  });
