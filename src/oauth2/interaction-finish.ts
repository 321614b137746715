import type { SignInScope } from "../auth";
import type { UserRow } from "../db/schema";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { finishAppSignIn } from "./app-requests";
import { rememberConsent } from "./consents";
import { type Completer, completeRequest, denyRequest } from "./interaction";
import type { InteractionRequest } from "./interaction-describe";
import { forgetPendingRequest, loadPendingRequest, type PendingRequest } from "./pending-requests";
import { authorizationResponse } from "./redirects";

/**
 * The interaction contract, the ends of a request the built-in pages served (contract §3.5). A client's or a
 * device's request is finished by its id, read again here as an external login UI's completion reads it
 * (interaction.ts `completeWithAccessToken`), and through the same `completeRequest` and `denyRequest`: the page
 * holds only what it showed (interaction-describe.ts), never the PKCE challenge, nonce, `state` or DPoP key. The
 * page judged the sign-in (browser/step-up.ts) before it calls these.
 */

/** A request decided already, expired, or not the authorization server's: 400 `invalid-request`. */
async function authorizationRequest(deps: Deps, requestId: string): Promise<PendingRequest> {
  const request = await loadPendingRequest(deps.env, requestId, deps.now());
  if (!request || request.invitation || request.app) {
    throw new AppError("invalid-request", "unknown or expired request_id");
  }
  return request;
}

/**
 * Completes the request for the person signed in: a code for the client's redirect URI, in `orgId` if they picked
 * one (the page checked the membership); or the device's authorization approved.
 */
export async function completeInteraction(
  deps: Deps,
  requestId: string,
  completer: Completer,
  orgId: string | null,
): Promise<{ redirectUri: string } | { device: true }> {
  return completeRequest(deps, await authorizationRequest(deps, requestId), completer, orgId);
}

/**
 * The person allowed the request on the consent screen: the consent is remembered (a device's never is: it is asked
 * every time), so only a new scope or resource is asked about again, then the request completes.
 */
export async function allowInteraction(
  deps: Deps,
  requestId: string,
  completer: Completer,
  orgId: string | null,
): Promise<{ redirectUri: string } | { device: true }> {
  const request = await authorizationRequest(deps, requestId);
  if (!request.device && !request.ciba) {
    const allowed = { scopes: request.scopes, resources: request.resources };
    await rememberConsent(deps, completer.userId, request.clientId, allowed);
  }
  return completeRequest(deps, request, completer, orgId);
}

/** The person refused the request: the client hears `access_denied`, a device's poll too. */
export async function denyInteraction(
  deps: Deps,
  requestId: string,
  userId: string,
  actor: string | null,
): Promise<{ redirectUri: string } | { device: true }> {
  return denyRequest(deps, await authorizationRequest(deps, requestId), userId, actor);
}

/**
 * The person can't meet what the client asks and goes back (OpenID Connect Unmet Authentication Requirements 1.0):
 * the client hears `unmet_authentication_requirements`, with `iss` (RFC 9207). A device's request has nobody to
 * send back to: null.
 */
export async function cancelInteraction(deps: Deps, requestId: string): Promise<string | null> {
  const request = await authorizationRequest(deps, requestId);
  if (request.device || request.ciba) return null;
  deps.background(forgetPendingRequest(deps.env, request.id));
  return authorizationResponse(deps.config, request.redirectUri, {
    error: "unmet_authentication_requirements",
    error_description: "the account cannot meet the requested acr_values",
    state: request.state,
  });
}

/**
 * Where the browser goes back to for an app's request (the hosted pages, app-requests.ts `finishAppSignIn`): the
 * account center as it is, or the app's `redirectTo` with a new session's `refreshToken`. `request`: the pending
 * request it completes, claimed once and then forgotten; undefined for a browser already signed in when the app sent
 * it. Null when it was completed before: nothing is minted.
 */
export async function finishAppInteraction(
  scope: SignInScope,
  redirectTo: string,
  user: UserRow,
  request?: Pick<InteractionRequest, "id" | "createdAt">,
): Promise<string | null> {
  const target = await finishAppSignIn(scope, redirectTo, user, request);
  if (target && request) scope.deps.background(forgetPendingRequest(scope.deps.env, request.id));
  return target;
}

/** A request the page finished itself (an invitation joined): forgotten, so its id opens nothing again. */
export function closeInteraction(deps: Deps, requestId: string): void {
  deps.background(forgetPendingRequest(deps.env, requestId));
}
