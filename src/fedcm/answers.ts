import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { type BrowserSession, browserSessionOf, FEDCM_SESSION_COOKIE } from "../browser/session";
import type { AppEnv } from "../http/app-env";
import { settleRefusal } from "../http/refusal";
import { OAuth2Error } from "../oauth2";

/** What the FedCM routes share: the browser's own marker on each request, their error shape, their CORS. */

export type Ctx = Context<AppEnv>;

/**
 * W3C FedCM §§ #idp-api-well-known to #idp-api-disconnect-endpoint: the browser fetches every IdP endpoint with
 * `Sec-Fetch-Dest: webidentity`, a header no page's script can set (Fetch's forbidden request-header names). A request
 * without it is a page's or a script's own, which these endpoints never answer: an accounts list read by a page, an
 * assertion posted by a form. Case matters not in the name, but the value is exact.
 */
export const fromBrowserPrompt = (c: Ctx) => c.req.header("sec-fetch-dest") === "webidentity";

/**
 * An error as the browser reads it (W3C FedCM § Identity assertion endpoint, `error` of IdentityAssertionResponse):
 * `{"error": {"code": …}}`, never a description of the account or the client. `origin`: the registered caller's, when
 * it may read the answer (CORS); absent for a caller no client registered, which then reads nothing at all.
 */
export function refuse(c: Ctx, status: ContentfulStatusCode, code: string, origin?: string) {
  if (origin) corsFor(c, origin);
  return c.json({ error: { code } }, status, { "Cache-Control": "no-store" });
}

/**
 * Chrome reads the ID assertion and disconnect answers in CORS mode with credentials: the exact origin of the relying
 * party, never `*`, and `Access-Control-Allow-Credentials: true`. Set over what the auth API's CORS put there for
 * its own apps' origins.
 */
export function corsFor(c: Ctx, origin: string): void {
  c.header("Access-Control-Allow-Origin", origin);
  c.header("Access-Control-Allow-Credentials", "true");
  c.header("Vary", "Origin");
}

/**
 * The person signed in to this browser at the hosted pages, through the SameSite=None twin of their session cookie
 * (src/browser/session.ts). Nobody for an anonymous user (no identity to vouch for) or an impersonation (it
 * authorizes no client, operators.md §1): for FedCM both are no one signed in.
 */
export async function signedIn(c: Ctx): Promise<BrowserSession | null> {
  const session = await browserSessionOf(c.var.deps, getCookie(c, FEDCM_SESSION_COOKIE));
  if (!session || session.actor || session.user.isAnonymous) return null;
  return session;
}

/**
 * The FedCM answer of what the authorization server refused (its OAuth2 code: `invalid_request`, `access_denied`, …)
 * or the service could not do, settled as every face settles it (a D1 or Durable Object fault: 503, logged).
 * `origin`: the registered caller's, to read it; absent before the client is known (the routes' own error handler).
 */
export async function refusalOf(c: Ctx, caught: unknown, origin?: string) {
  if (caught instanceof OAuth2Error) {
    return refuse(c, caught.error === "access_denied" ? 403 : 400, caught.error, origin);
  }
  const error = await settleRefusal(c, caught);
  const code =
    error.status >= 500 ? "server_error" : error.code === "forbidden" ? "access_denied" : "invalid_request";
  return refuse(c, error.status, code, origin);
}
