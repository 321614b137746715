import type { Context } from "hono";
import type { AppEnv } from "../http/app-env";
import { DEVICE_PAGE_PATH, LOGIN_PAGE_PATH } from "../lib/redirect";

/** The built-in page's own URLs: where its forms post, its views, and the way back to it after a post. */

export type Ctx = Context<AppEnv>;

/**
 * The page's own URLs, as paths: its forms post to whichever origin served it, so the page works the same behind
 * any host name that reaches the Worker (and a WebAuthn RP ID can be chosen freely).
 */
export const paths = (c: Ctx) => {
  const issuerPath = c.var.config.urls.authPath;
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
    selectAccount: `${base}/select-account`,
    reauthPassword: `${base}/reauth/password`,
    reauthTotp: `${base}/reauth/totp`,
    reauthPasskey: `${base}/reauth/passkey`,
    reauthCancel: `${base}/reauth/cancel`,
  };
};

const pageFor = (c: Ctx, requestId: string) => `${paths(c).page}?request_id=${encodeURIComponent(requestId)}`;

/**
 * Where a form of the page may end, as the request goes on from it: the client's redirect URI, or an app's
 * `redirectTo` (the hosted pages). Browsers hold a form post's whole redirect chain to the page's `form-action`, so a
 * sign-in that goes straight back (consent remembered, the hosted pages) must name it (`render`'s `redirectUri`).
 */
export const returnTarget = (request: { redirectUri: string; app?: { redirectTo: string } }) =>
  request.app?.redirectTo ?? (request.redirectUri || undefined);

/** The page's absolute URL under `AUTH_SERVER_URL`: where a mailed link sends the person back. */
export const absolutePageFor = (c: Ctx, requestId: string) =>
  c.var.config.urls.auth(`${LOGIN_PAGE_PATH}?request_id=${encodeURIComponent(requestId)}`);

/** The page's own link to one of its views (sign-up, reset) for this request. */
export const viewHref = (c: Ctx, requestId: string, view?: "sign-up" | "reset") =>
  `${pageFor(c, requestId)}${view ? `&view=${view}` : ""}`;

/** After a form post, back to the page (on the origin that served it) to show the next step. */
export const backToPage = (c: Ctx, requestId: string) =>
  c.redirect(new URL(pageFor(c, requestId), c.req.url).toString(), 303);
