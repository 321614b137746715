import type { Context } from "hono";
import type { HtmlEscapedString } from "hono/utils/html";
import type { AppEnv } from "../../app-env";
import type { OAuth2ClientRow } from "../../db/schema";
import { findOAuth2Client } from "../client-auth";
import { OAuth2Error } from "../errors";
import { oauth2Params } from "../params";
import { loadPendingRequest, type PendingRequest } from "../pending-requests";
import { page, problem, signInForm } from "./render";

/** What every handler of the built-in page shares: its URLs, its headers, the request it works on. */

export type Ctx = Context<AppEnv>;
type Body = HtmlEscapedString | Promise<HtmlEscapedString>;

export const paths = (c: Ctx) => {
  const base = `${c.var.config.AUTH_SERVER_URL}/oauth2/interaction`;
  return {
    page: base,
    signIn: `${base}/sign-in`,
    mfa: `${base}/mfa`,
    emailLink: `${base}/email-link`,
    consent: `${base}/consent`,
    switch: `${base}/switch`,
  };
};

export const pageFor = (c: Ctx, requestId: string) =>
  `${paths(c).page}?request_id=${encodeURIComponent(requestId)}`;

/** Where a form may send the browser: this origin, and after consent the client's redirect URI. */
function formTarget(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.protocol === "http:" || url.protocol === "https:" ? url.origin : url.protocol;
}

/**
 * A page with its headers: no script may run at all (`default-src 'none'`, no `script-src`), the one stylesheet
 * carries a nonce, forms post only to this origin (and, from the consent screen, on to the client), and no site may
 * frame the page (clickjacking of the Allow button).
 */
export function render(
  c: Ctx,
  status: 200 | 400 | 401 | 403 | 429,
  title: string,
  body: Body,
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

export const showProblem = (c: Ctx, message: string, status: 400 | 403 = 400) =>
  render(c, status, "Sign-in problem", problem(message));

export const UNKNOWN_REQUEST = "This sign-in request is unknown or has expired.";

/** The sign-in form, with the magic-link form when the deployment has magic links on. */
export function signInPage(
  c: Ctx,
  request: PendingRequest,
  clientName: string,
  options: { status?: 200 | 400 | 401 | 429; email?: string; error?: string } = {},
) {
  return render(
    c,
    options.status ?? 200,
    "Sign in",
    signInForm({
      action: paths(c).signIn,
      requestId: request.id,
      clientName,
      email: options.email ?? request.loginHint,
      error: options.error,
      emailLinkAction: c.var.config.AUTH_EMAIL_PASSWORDLESS_ENABLED ? paths(c).emailLink : undefined,
    }),
  );
}

export async function loadRequest(
  c: Ctx,
  requestId: string | undefined,
): Promise<{ request: PendingRequest; client: OAuth2ClientRow } | null> {
  const request = requestId ? await loadPendingRequest(c.env, requestId, c.var.deps.now()) : null;
  const client = request ? await findOAuth2Client(c.var.deps, request.clientId) : undefined;
  return request && client ? { request, client } : null;
}

/** A cross-site form post (login CSRF, forced consent) is refused: the browser names the page's origin. */
function isSameOrigin(c: Ctx): boolean {
  return c.req.header("origin") === new URL(c.var.config.AUTH_SERVER_URL).origin;
}

/** Form posts of the page: the same-origin check, the parameters and the pending request, or a problem page. */
export async function formRequest(c: Ctx) {
  if (!isSameOrigin(c)) return { failure: showProblem(c, "This form was sent from another site.", 403) };
  let params: Map<string, string>;
  try {
    params = await oauth2Params(c);
  } catch (error) {
    if (error instanceof OAuth2Error) return { failure: showProblem(c, error.description) };
    throw error;
  }
  const loaded = await loadRequest(c, params.get("request_id"));
  if (!loaded) return { failure: showProblem(c, UNKNOWN_REQUEST) };
  return { params, ...loaded };
}

export const backToPage = (c: Ctx, requestId: string) => c.redirect(pageFor(c, requestId), 303);
