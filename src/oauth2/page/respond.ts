import type { Context } from "hono";
import type { HtmlEscapedString } from "hono/utils/html";
import type { TurnstileEndpoint } from "../../config";
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
import { page, signInForm, type WidgetSlot } from "./render";
import { resetForm, signUpForm } from "./render-account";
import { problem } from "./render-consent";
import { type PageText, pageText } from "./text";

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
    signUp: `${base}/sign-up`,
    reset: `${base}/reset`,
    newPassword: `${base}/new-password`,
    resendVerification: `${base}/resend-verification`,
    provider: `${base}/provider`,
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

/** Cloudflare Turnstile's widget loader: the page's only outside origin, allowed by its CSP only when it is used. */
export const TURNSTILE_ORIGIN = "https://challenges.cloudflare.com";
const TURNSTILE_SCRIPT = `${TURNSTILE_ORIGIN}/turnstile/v0/api.js`;

/**
 * A page with its headers: no script runs unless the page brings its own (`script`, with a nonce), the one
 * stylesheet carries a nonce, scripts may only talk to this origin, forms post only to this origin (and, from the
 * consent screen, on to the client), and no site may frame the page (clickjacking of the Allow button). With a
 * Turnstile widget on it, the page also loads Cloudflare's widget script and frame (only then).
 */
export function render(
  c: Ctx,
  status: 200 | 400 | 401 | 403 | 429 | 503,
  title: string,
  body: Body,
  options: {
    t: PageText;
    redirectUri?: string;
    script?: string;
    widget?: boolean;
    providerOrigins?: string[];
  },
) {
  // The request id in the URL must not reach any other site: `same-origin` referrers (setPageHeaders).
  // Browsers hold a form's whole redirect chain to `form-action`: a provider button's post ends at the provider.
  const nonce = setPageHeaders(c, {
    formAction: [
      ...(options.redirectUri ? [formTarget(options.redirectUri)] : []),
      ...(options.providerOrigins ?? []),
    ],
    script: Boolean(options.script),
    connect: Boolean(options.script),
    widgetOrigin: options.widget ? TURNSTILE_ORIGIN : undefined,
  });
  return c.html(
    page({
      nonce,
      lang: options.t.lang,
      title,
      body,
      script: options.script,
      widgetScript: options.widget ? TURNSTILE_SCRIPT : undefined,
    }),
    status,
  );
}

export const showProblem = (c: Ctx, message: (t: PageText) => string, status: 400 | 403 = 400) => {
  const t = pageText(c);
  return render(c, status, t.problemTitle, problem(t, message(t)), { t });
};

export const UNKNOWN_REQUEST = (t: PageText) => t.errors.unknownRequest;

/** The widget for a form whose endpoint Turnstile guards, when the page can show one (a site key is set). */
export function widgetFor(c: Ctx, endpoint: TurnstileEndpoint): WidgetSlot | undefined {
  const settings = c.var.config.turnstile;
  if (!settings?.siteKey || !settings.endpoints.has(endpoint)) return undefined;
  return { siteKey: settings.siteKey, action: endpoint };
}

/** The page's own link to one of its views (sign-up, reset) for this request. */
export const viewHref = (c: Ctx, requestId: string, view?: "sign-up" | "reset") =>
  `${pageFor(c, requestId)}${view ? `&view=${view}` : ""}`;

/** The sign-in form, with sign-up, reset, providers, passkeys and magic links as the deployment has them. */
export function signInPage(
  c: Ctx,
  request: PendingRequest,
  clientName: string,
  options: { status?: 200 | 400 | 401 | 429 | 503; email?: string; error?: string; resend?: boolean } = {},
) {
  const { config } = c.var;
  const t = pageText(c, request.uiLocales);
  const passkeys = config.AUTH_WEBAUTHN_ENABLED;
  const widgets = { signin: widgetFor(c, "signin"), passwordless: widgetFor(c, "passwordless") };
  return render(
    c,
    options.status ?? 200,
    t.signInTitle,
    signInForm({
      t,
      action: paths(c).signIn,
      requestId: request.id,
      clientName,
      email: options.email ?? request.loginHint,
      error: options.error,
      resendAction: options.resend ? paths(c).resendVerification : undefined,
      signUpHref: config.AUTH_DISABLE_SIGNUP ? undefined : viewHref(c, request.id, "sign-up"),
      resetHref: viewHref(c, request.id, "reset"),
      providerAction: paths(c).provider,
      providers: Object.keys(config.providers.enabled).map((id) => ({ id, name: providerName(id) })),
      emailLinkAction: config.AUTH_EMAIL_PASSWORDLESS_ENABLED ? paths(c).emailLink : undefined,
      passkeySessionAction: passkeys ? paths(c).session : undefined,
      widgets,
    }),
    {
      t,
      widget: Boolean(widgets.signin || widgets.passwordless),
      providerOrigins: [
        ...new Set(
          Object.values(config.providers.enabled).map(
            (settings) => new URL(settings.authorizationUrl).origin,
          ),
        ),
      ],
      ...(passkeys
        ? { script: passkeyScript(new URL(config.AUTH_SERVER_URL).pathname.replace(/\/$/, "")) }
        : {}),
    },
  );
}

/** The sign-up view (when sign-up is allowed) and the reset view. */
export function accountPage(
  c: Ctx,
  request: PendingRequest,
  clientName: string,
  view: "sign-up" | "reset",
  options: {
    status?: 200 | 400 | 401 | 403 | 409 | 429 | 503;
    email?: string;
    displayName?: string;
    error?: string;
  } = {},
) {
  const { config } = c.var;
  const t = pageText(c, request.uiLocales);
  const signInHref = viewHref(c, request.id);
  const status = (options.status === 409 ? 400 : (options.status ?? 200)) as
    | 200
    | 400
    | 401
    | 403
    | 429
    | 503;
  if (view === "sign-up") {
    const slot = widgetFor(c, "signup");
    return render(
      c,
      status,
      t.signUpTitle,
      signUpForm({
        t,
        action: paths(c).signUp,
        requestId: request.id,
        clientName,
        minLength: config.AUTH_PASSWORD_MIN_LENGTH,
        email: options.email,
        displayName: options.displayName,
        error: options.error,
        signInHref,
        widget: slot,
      }),
      { t, widget: Boolean(slot) },
    );
  }
  const slot = widgetFor(c, "password-reset");
  return render(
    c,
    status,
    t.resetTitle,
    resetForm({
      t,
      action: paths(c).reset,
      requestId: request.id,
      email: options.email,
      error: options.error,
      signInHref,
      widget: slot,
    }),
    { t, widget: Boolean(slot) },
  );
}

/** Provider ids as people know them. */
const PROVIDER_NAMES: Record<string, string> = {
  github: "GitHub",
  google: "Google",
  apple: "Apple",
  linkedin: "LinkedIn",
  gitlab: "GitLab",
  bitbucket: "Bitbucket",
  discord: "Discord",
  twitch: "Twitch",
  spotify: "Spotify",
  facebook: "Facebook",
  azuread: "Microsoft",
  entraid: "Microsoft",
  workos: "WorkOS",
  strava: "Strava",
  twitter: "X",
  windowslive: "Microsoft",
};
const providerName = (id: string) => PROVIDER_NAMES[id] ?? id.charAt(0).toUpperCase() + id.slice(1);

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
  if (!isSameOrigin(c)) return { failure: showProblem(c, (t) => t.errors.otherSite, 403) };
  let params: Map<string, string>;
  try {
    params = await oauth2Params(c);
  } catch (error) {
    if (error instanceof OAuth2Error) return { failure: showProblem(c, () => error.description) };
    throw error;
  }
  const loaded = await loadRequest(c, params.get("request_id"));
  if (!loaded) return { failure: showProblem(c, UNKNOWN_REQUEST) };
  return { params, ...loaded };
}

/** After a form post, back to the page (on the origin that served it) to show the next step. */
export const backToPage = (c: Ctx, requestId: string) =>
  c.redirect(new URL(pageFor(c, requestId), c.req.url).toString(), 303);
