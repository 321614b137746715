import type { HtmlEscapedString } from "hono/utils/html";
import { type AppError, UnavailableError } from "../errors";
import { brandOf } from "../http/brand";
import { setPageHeaders } from "../http/page-headers";
import { imageOrigin } from "../lib/brand";
import type { TurnstileEndpoint } from "../settings/turnstile";
import { BANNER_STYLE, impersonationBanner } from "./impersonation-banner";
import type { Ctx } from "./page-paths";
import { type PageText, pageText } from "./page-text";
import { page, problem, type WidgetSlot } from "./render";

/** How the built-in page answers: a page with its security headers, a problem page, a Turnstile widget. */

type Body = HtmlEscapedString | Promise<HtmlEscapedString>;

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
export async function render(
  c: Ctx,
  status: 200 | 400 | 401 | 403 | 404 | 429 | 500 | 503,
  title: string,
  body: Body,
  options: {
    t: PageText;
    redirectUri?: string;
    script?: string;
    widget?: boolean;
    providerOrigins?: string[];
    /** Outside origins the page's script reaches (the FedCM config of Google's One Tap, src/fedcm/one-tap.ts). */
    connectOrigins?: string[];
    /** More of our own CSS after the house style (`PageFrame.style`). */
    style?: string;
    /** Images this page alone shows (a reviewed client's logo on its consent screen): https or loopback URLs. */
    images?: string[];
  },
) {
  // Every page wears the deployment's brand (contract §13); its logo's origin, and only it, may serve images.
  const brand = await brandOf(c.var.deps, c.var.requestId);
  const images = [
    ...new Set(
      [brand.logoUrl, ...(options.images ?? [])]
        .map((url) => (url ? imageOrigin(url) : undefined))
        .filter((origin): origin is string => origin !== undefined),
    ),
  ];
  // The request id in the URL must not reach any other site: `same-origin` referrers (setPageHeaders).
  // Browsers hold a form's whole redirect chain to `form-action`: a provider button's post ends at the provider.
  const nonce = setPageHeaders(c, {
    formAction: [
      ...(options.redirectUri ? [formTarget(options.redirectUri)] : []),
      ...(options.providerOrigins ?? []),
    ],
    script: Boolean(options.script),
    connect: Boolean(options.script),
    connectOrigins: options.connectOrigins,
    widgetOrigin: options.widget ? TURNSTILE_ORIGIN : undefined,
    images,
  });
  const banner = impersonationBanner(c, options.t.lang);
  return c.html(
    page({
      nonce,
      lang: options.t.lang,
      title,
      body,
      script: options.script,
      widgetScript: options.widget ? TURNSTILE_SCRIPT : undefined,
      style: banner ? `${options.style ?? ""}${BANNER_STYLE}` : options.style,
      brand,
      banner,
    }),
    status,
  );
}

export const showProblem = (c: Ctx, message: (t: PageText) => string, status: 400 | 403 = 400) => {
  const t = pageText(c);
  return render(c, status, t.problemTitle, problem(t, message(t)), { t });
};

export const UNKNOWN_REQUEST = (t: PageText) => t.errors.unknownRequest;

/**
 * A page shown again after a fault (a binding failed for now: contract §1 "Unavailable"), made the 503 it is, with
 * `Retry-After` as the API's 503. A fault is no verdict on what the person sent, so its page must not read as a
 * refusal (a right password answered 401); the step renderers know refusals only, so the status is set here.
 */
export async function asUnavailable(shown: Promise<Response>, fault: AppError): Promise<Response> {
  const response = await shown;
  const headers = new Headers(response.headers);
  headers.set("Retry-After", String(retryAfterOf(fault)));
  return new Response(response.body, { status: 503, headers });
}

/** A page's 503 `Retry-After`: UnavailableError's own wait; another 503 of the catalog (Turnstile's) gets a default. */
export const retryAfterOf = (fault: AppError): number =>
  fault instanceof UnavailableError ? fault.retryAfterSeconds : 5;

/** The widget for a form whose endpoint Turnstile guards, when the page can show one (a site key is set). */
export function widgetFor(
  c: Ctx,
  endpoint: TurnstileEndpoint,
  action: TurnstileEndpoint = endpoint,
): WidgetSlot | undefined {
  const settings = c.var.config.turnstile;
  if (!settings?.siteKey || !settings.endpoints.has(endpoint)) return undefined;
  return { siteKey: settings.siteKey, action };
}
