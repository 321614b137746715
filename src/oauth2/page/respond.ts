import type { Context } from "hono";
import type { HtmlEscapedString } from "hono/utils/html";
import type { OAuth2ClientRow } from "../../db/schema";
import type { AppEnv } from "../../http/app-env";
import { setPageHeaders } from "../../http/page-headers";
import { LOGIN_PAGE_PATH } from "../../lib/redirect";
import { findOAuth2Client } from "../client-auth";
import { DEVICE_PAGE_PATH } from "../device";
import { OAuth2Error } from "../errors";
import { oauth2Params } from "../params";
import { loadPendingRequest, type PendingRequest } from "../pending-requests";
import { passkeyScript } from "./passkey-script";
import { page, problem, signInForm } from "./render";

/** What every handler of the built-in page shares: its URLs, its headers, the request it works on. */

export type Ctx = Context<AppEnv>;
type Body = HtmlEscapedString | Promise<HtmlEscapedString>;

/**
 * The page's own URLs, as paths: its forms post to whichever origin served it, so the page works the same behind
 * any host name that reaches the Worker (and a WebAuthn RP ID can be chosen freely).
 */
export const paths = (c: Ctx) => {
  const issuerPath = new URL(c.var.config.AUTH_SERVER_URL).pathname.replace(/\/$/, "");
  const base = `${issuerPath}${LOGIN_PAGE_PATH}`;
  return {
    device: `${issuerPath}${DEVICE_PAGE_PATH}`,
    page: base,
    signIn: `${base}/sign-in`,
    mfa: `${base}/mfa`,
    emailLink: `${base}/email-link`,
    session: `${base}/session`,
    consent: `${base}/consent`,
    switch: `${base}/switch`,
  };
};

const pageFor = (c: Ctx, requestId: string) => `${paths(c).page}?request_id=${encodeURIComponent(requestId)}`;

/** The page's absolute URL under `AUTH_SERVER_URL`: where a mailed link sends the person back. */
export const absolutePageFor = (c: Ctx, requestId: string) =>
  `${c.var.config.AUTH_SERVER_URL}${LOGIN_PAGE_PATH}?request_id=${encodeURIComponent(requestId)}`;

/** Where a form may send the browser: this origin, and after consent the client's redirect URI. */
function formTarget(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.protocol === "http:" || url.protocol === "https:" ? url.origin : url.protocol;
}

/**
 * A page with its headers: no script runs unless the page brings its own (`script`, with a nonce), the one
 * stylesheet carries a nonce, scripts may only talk to this origin, forms post only to this origin (and, from the
 * consent screen, on to the client), and no site may frame the page (clickjacking of the Allow button).
 */
export function render(
  c: Ctx,
  status: 200 | 400 | 401 | 403 | 429,
  title: string,
  body: Body,
  options: { redirectUri?: string; script?: string } = {},
) {
  // The request id in the URL must not reach any other site: `same-origin` referrers (setPageHeaders).
  const nonce = setPageHeaders(c, {
    formAction: options.redirectUri ? [formTarget(options.redirectUri)] : [],
    script: Boolean(options.script),
    connect: Boolean(options.script),
  });
  return c.html(page({ nonce, title, body, script: options.script }), status);
}

export const showProblem = (c: Ctx, message: string, status: 400 | 403 = 400) =>
  render(c, status, "Sign-in problem", problem(message));

export const UNKNOWN_REQUEST = "This sign-in request is unknown or has expired.";

/** The sign-in form, with the magic-link form and the passkey button when the deployment has them on. */
export function signInPage(
  c: Ctx,
  request: PendingRequest,
  clientName: string,
  options: { status?: 200 | 400 | 401 | 429; email?: string; error?: string } = {},
) {
  const { config } = c.var;
  const passkeys = config.AUTH_WEBAUTHN_ENABLED;
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
      emailLinkAction: config.AUTH_EMAIL_PASSWORDLESS_ENABLED ? paths(c).emailLink : undefined,
      passkeySessionAction: passkeys ? paths(c).session : undefined,
    }),
    passkeys ? { script: passkeyScript(new URL(config.AUTH_SERVER_URL).pathname.replace(/\/$/, "")) } : {},
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

/**
 * A cross-site form post (login CSRF, forced consent) is refused: browsers name the posting page's origin, which
 * must be the origin this request came to.
 */
export function isSameOrigin(c: Ctx): boolean {
  return c.req.header("origin") === new URL(c.req.url).origin;
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

/** After a form post, back to the page (on the origin that served it) to show the next step. */
export const backToPage = (c: Ctx, requestId: string) =>
  c.redirect(new URL(pageFor(c, requestId), c.req.url).toString(), 303);
