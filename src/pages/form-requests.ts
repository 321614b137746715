import type { Ctx } from "../browser/page-paths";
import { showProblem, UNKNOWN_REQUEST } from "../browser/page-response";
import type { OAuth2ClientRow } from "../db/schema";
import {
  findOAuth2Client,
  loadPendingRequest,
  OAuth2Error,
  oauth2Params,
  type PendingRequest,
} from "../oauth2";
import { findPendingInvitation, type PendingInvitation } from "../orgs";
import { appName } from "./hosted-text";

/** The request a page view or form post works on, and the checks every form post passes first. */

/**
 * A client's request, with its client; or an invitation's, with the invitation while it is still pending (its
 * organization's name stands where a client's name would, on the sign-in views); or a first-party app's (the hosted
 * pages, contract §13), with the name the page gives the app.
 */
export type LoadedRequest =
  | { request: PendingRequest; client: OAuth2ClientRow; invitation?: undefined; app?: undefined }
  | {
      request: PendingRequest;
      client: { clientName: string };
      invitation: PendingInvitation;
      app?: undefined;
    }
  | { request: AppPendingRequest; client: { clientName: string }; invitation?: undefined; app: AppRequest };

type AppRequest = NonNullable<PendingRequest["app"]>;
type AppPendingRequest = PendingRequest & { app: AppRequest };

export async function loadRequest(c: Ctx, requestId: string | undefined): Promise<LoadedRequest | null> {
  const request = requestId ? await loadPendingRequest(c.env, requestId, c.var.deps.now()) : null;
  if (request?.app) {
    return {
      request: { ...request, app: request.app },
      client: { clientName: await appName(c, request.app.redirectTo) },
      app: request.app,
    };
  }
  // The page serves the authorization server's requests only while it is on and the page is its login UI; an app's
  // requests it serves always (the hosted pages). So a request made before the switch went off completes nothing.
  const { config } = c.var;
  if (!config.oauth2.enabled || config.oauth2.loginUrl) return null;
  if (request?.invitation) {
    const invitation = await findPendingInvitation(c.var.deps, request.invitation.ticketHash);
    return invitation ? { request, client: { clientName: invitation.org.name }, invitation } : null;
  }
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
