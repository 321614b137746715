import { type Context, Hono } from "hono";
import type { HtmlEscapedString } from "hono/utils/html";
import type { AppEnv } from "../../app-env";
import { AppError } from "../../errors";
import { addressKey } from "../../lib/client-address";
import { consumeRateLimit } from "../../rate-limits";
import { verifySignInMfaTotp } from "../../services/mfa-sign-in";
import { signInEmailPassword } from "../../services/sign-in";
import { isAuthenticationFreshEnough } from "../authorize";
import {
  type BrowserSession,
  endBrowserSession,
  readBrowserSession,
  startBrowserSession,
} from "../browser-session";
import { findOAuth2Client } from "../client-auth";
import { issueCode } from "../codes";
import { hasConsent, rememberConsent } from "../consents";
import { OAuth2Error } from "../errors";
import { oauth2Params } from "../params";
import { forgetPendingRequest, loadPendingRequest, type PendingRequest } from "../pending-requests";
import { errorResponse } from "../redirects";
import { consentForm, mfaForm, page, problem, signInForm } from "./render";

type Ctx = Context<AppEnv>;

/** Where a form may send the browser: this origin, and after consent the client's redirect URI. */
function formTarget(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.protocol === "http:" || url.protocol === "https:" ? url.origin : url.protocol;
}

function render(
  c: Ctx,
  status: 200 | 400 | 401 | 403 | 429,
  title: string,
  body: HtmlEscapedString | Promise<HtmlEscapedString>,
  redirectUri?: string,
) {
  const nonce = crypto.randomUUID().replace(/-/g, "");
  const formAction = ["'self'", ...(redirectUri ? [formTarget(redirectUri)] : [])].join(" ");
  c.header(
    "Content-Security-Policy",
    `default-src 'none'; style-src 'nonce-${nonce}'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
  );
  c.header("X-Frame-Options", "DENY");
  // Not `no-referrer`: with it browsers send `Origin: null` on the page's own form posts, which the CSRF check needs.
  // `same-origin` keeps the request id in the URL from reaching any other site.
  c.header("Referrer-Policy", "same-origin");
  c.header("X-Content-Type-Options", "nosniff");
  return c.html(page({ nonce, title, body }), status);
}

const showProblem = (c: Ctx, message: string, status: 400 | 403 = 400) =>
  render(c, status, "Sign-in problem", problem(message));

const paths = (c: Ctx) => {
  const base = `${c.var.config.AUTH_SERVER_URL}/oauth2/interaction`;
  return {
    page: base,
    signIn: `${base}/sign-in`,
    mfa: `${base}/mfa`,
    consent: `${base}/consent`,
    switch: `${base}/switch`,
  };
};

/** A cross-site form post (login CSRF, forced consent) is refused: the browser names the page's origin. */
function isSameOrigin(c: Ctx): boolean {
  return c.req.header("origin") === new URL(c.var.config.AUTH_SERVER_URL).origin;
}

async function loadRequest(c: Ctx, requestId: string | undefined) {
  const request = requestId ? await loadPendingRequest(c.env, requestId, c.var.deps.now()) : null;
  const client = request ? await findOAuth2Client(c.var.deps, request.clientId) : undefined;
  return request && client ? { request, client } : null;
}

/** Completes the request for the signed-in user and sends the browser back to the client with a code. */
async function complete(c: Ctx, request: PendingRequest, session: BrowserSession) {
  try {
    return c.redirect(await issueCode(c.var.deps, request, session.user.id, session.authTime), 303);
  } catch (error) {
    if (error instanceof AppError) return showProblem(c, "This sign-in request was completed already.");
    throw error;
  }
}

/** What the page shows next for this request: sign-in, consent, or nothing (back to the client). */
async function nextStep(c: Ctx, request: PendingRequest, clientName: string) {
  const deps = c.var.deps;
  const session = await readBrowserSession(c);
  if (!session || !isAuthenticationFreshEnough(request, session.authTime, deps.now())) {
    return render(
      c,
      200,
      "Sign in",
      signInForm({ action: paths(c).signIn, requestId: request.id, clientName, email: request.loginHint }),
    );
  }
  const mustAsk =
    request.prompt.includes("consent") ||
    request.prompt.includes("select_account") ||
    !(await hasConsent(deps, session.user.id, request.clientId, request.scopes));
  if (!mustAsk) return complete(c, request, session);
  return render(
    c,
    200,
    `Allow ${clientName}?`,
    consentForm({
      action: paths(c).consent,
      switchAction: paths(c).switch,
      requestId: request.id,
      clientName,
      scopes: request.scopes,
      userLabel:
        session.user.email ?? session.user.phoneNumber ?? session.user.displayName ?? session.user.id,
    }),
    request.redirectUri,
  );
}

function signInMessage(c: Ctx, error: AppError): string {
  if (c.var.config.AUTH_CONCEAL_ERRORS) return "Sign-in failed.";
  switch (error.code) {
    case "invalid-email-password":
      return "Wrong email or password.";
    case "unverified-user":
      return "Verify your email address first: follow the link in the mail we sent you.";
    case "disabled-user":
      return "This account is disabled.";
    case "invalid-totp":
      return "That code is not right.";
    case "invalid-ticket":
      return "This sign-in took too long or had too many tries. Start again.";
    default:
      return error.message;
  }
}

/** Form posts of the page: the parameters, the pending request, and the same-origin check, or a problem page. */
async function formRequest(c: Ctx) {
  if (!isSameOrigin(c)) return { failure: showProblem(c, "This form was sent from another site.", 403) };
  let params: Map<string, string>;
  try {
    params = await oauth2Params(c);
  } catch (error) {
    if (error instanceof OAuth2Error) return { failure: showProblem(c, error.description) };
    throw error;
  }
  const loaded = await loadRequest(c, params.get("request_id"));
  if (!loaded) return { failure: showProblem(c, "This sign-in request is unknown or has expired.") };
  return { params, ...loaded };
}

const backToPage = (c: Ctx, requestId: string) =>
  c.redirect(`${paths(c).page}?request_id=${encodeURIComponent(requestId)}`, 303);

/** The built-in login and consent page, mounted at `/oauth2/interaction` when no external login UI is set. */
export const interactionRoutes = new Hono<AppEnv>()
  .get("/", async (c) => {
    const loaded = await loadRequest(c, c.req.query("request_id"));
    if (!loaded) return showProblem(c, "This sign-in request is unknown or has expired.");
    return nextStep(c, loaded.request, loaded.client.clientName);
  })
  .post("/sign-in", async (c) => {
    const form = await formRequest(c);
    if ("failure" in form) return form.failure;
    const { params, request, client } = form;
    const email = (params.get("email") ?? "").slice(0, 254);
    const password = (params.get("password") ?? "").slice(0, 256);
    const deps = c.var.deps;
    const retryAfter = await consumeRateLimit(
      c.env.RATE_LIMITERS,
      deps.config.rateLimits,
      "BRUTE_FORCE",
      [`ip:${addressKey(c.req.header("cf-connecting-ip") ?? "unknown")}`, `id:${email.toLowerCase()}`],
      deps.now(),
    );
    const again = (status: 400 | 401 | 429, error: string) =>
      render(
        c,
        status,
        "Sign in",
        signInForm({
          action: paths(c).signIn,
          requestId: request.id,
          clientName: client.clientName,
          email,
          error,
        }),
      );
    if (retryAfter !== null) return again(429, `Too many attempts. Try again in ${retryAfter} seconds.`);
    if (!email || !password) return again(400, "Enter your email and password.");
    try {
      const result = await signInEmailPassword(deps, { email, password }, c.req.header("user-agent"));
      if (result.mfa) {
        return render(
          c,
          200,
          "Two-step verification",
          mfaForm({ action: paths(c).mfa, requestId: request.id, ticket: result.mfa.ticket }),
        );
      }
      const session = result.session!;
      await startBrowserSession(c, session.user.id, session.refreshTokenId);
      return backToPage(c, request.id);
    } catch (error) {
      if (error instanceof AppError && error.status < 500) return again(401, signInMessage(c, error));
      throw error;
    }
  })
  .post("/mfa", async (c) => {
    const form = await formRequest(c);
    if ("failure" in form) return form.failure;
    const { params, request } = form;
    const ticket = (params.get("ticket") ?? "").slice(0, 100);
    const otp = (params.get("otp") ?? "").replace(/\s/g, "").slice(0, 64);
    try {
      const { session } = await verifySignInMfaTotp(c.var.deps, { ticket, otp }, c.req.header("user-agent"));
      await startBrowserSession(c, session.user.id, session.refreshTokenId);
      return backToPage(c, request.id);
    } catch (error) {
      if (!(error instanceof AppError) || error.status >= 500) throw error;
      if (error.code === "invalid-totp") {
        return render(
          c,
          401,
          "Two-step verification",
          mfaForm({ action: paths(c).mfa, requestId: request.id, ticket, error: signInMessage(c, error) }),
        );
      }
      return showProblem(c, signInMessage(c, error));
    }
  })
  .post("/consent", async (c) => {
    const form = await formRequest(c);
    if ("failure" in form) return form.failure;
    const { params, request } = form;
    const deps = c.var.deps;
    const session = await readBrowserSession(c);
    if (!session || !isAuthenticationFreshEnough(request, session.authTime, deps.now()))
      return backToPage(c, request.id);
    if (params.get("decision") !== "allow") {
      deps.background(forgetPendingRequest(c.env, request.id));
      return c.redirect(
        errorResponse(
          deps.config,
          request.redirectUri,
          "access_denied",
          "the user denied the request",
          request.state,
        ),
        303,
      );
    }
    await rememberConsent(deps, session.user.id, request.clientId, request.scopes);
    return complete(c, request, session);
  })
  .post("/switch", async (c) => {
    const form = await formRequest(c);
    if ("failure" in form) return form.failure;
    endBrowserSession(c);
    return backToPage(c, form.request.id);
  });

/**
 * `prompt=none` with the built-in page (OIDC Core §3.1.2.1): no page at all. The browser's session and a remembered
 * consent complete the request at once; otherwise the client hears `login_required` or `consent_required`.
 */
export async function silentAuthorization(c: Ctx, request: PendingRequest): Promise<string> {
  const deps = c.var.deps;
  const session = await readBrowserSession(c);
  const fail = (error: "login_required" | "consent_required", why: string) =>
    errorResponse(deps.config, request.redirectUri, error, why, request.state);
  if (!session || !isAuthenticationFreshEnough(request, session.authTime, deps.now())) {
    return fail("login_required", "the user is not signed in");
  }
  if (!(await hasConsent(deps, session.user.id, request.clientId, request.scopes))) {
    return fail("consent_required", "the user has not allowed these scopes");
  }
  return issueCode(deps, request, session.user.id, session.authTime);
}
