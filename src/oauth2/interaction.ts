import { activeMembership, findUserById } from "../auth";
import type { MethodTimes } from "../browser/acr";
import type { Ctx } from "../browser/page-paths";
import { readBrowserSession } from "../browser/session";
import { demandOf, judge, signInFor } from "../browser/step-up";
import { bearerMethodTimes } from "../browser/step-up-sessions";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { actorOf, refuseWhileImpersonating } from "../http/impersonation";
import type { AccessTokenPayload } from "../signing-keys/jwt";
import { CIBA_DONE_PATH, pingClient } from "./ciba";
import { findOAuth2Client } from "./clients";
import { issueCode } from "./codes";
import { consentCovers, grantedConsent } from "./consents";
import { DEVICE_PAGE_PATH, finishDeviceRequest } from "./device";
import { namedOrganization } from "./organizations";
import { forgetPendingRequest, loadPendingRequest, type PendingRequest } from "./pending-requests";
import { authorizationResponse, errorResponse } from "./redirects";

/**
 * The interaction contract (contract §3.5): how a login UI reads a pending authorization request (`describeRequest`),
 * finishes it for the person it signed in (`completeRequest`) or refuses it for them (`denyRequest`). An external
 * login UI (`AUTH_OAUTH2_PROVIDER_LOGIN_URL`) signs the user in with the ordinary API, asks for consent itself and
 * completes with the user's access token (`completeWithAccessToken`); the built-in pages (src/pages/) sign the person
 * in to the browser session and complete with its sign-in, by the request's id as the external UI does
 * (interaction-finish.ts), through the same two functions. What the pages read of a request: interaction-describe.ts.
 */

async function pendingRequest(deps: Deps, requestId: string): Promise<PendingRequest> {
  const request = await loadPendingRequest(deps.env, requestId, deps.now());
  // An invitation's request and the hosted pages' (an app's `/signin`) belong to the built-in page alone: neither has
  // a client to complete for (completing one minted a code for no client, then failed on its empty redirect URI).
  if (!request || request.invitation || request.app)
    throw new AppError("invalid-request", "unknown or expired request_id");
  return request;
}

export async function describeRequest(deps: Deps, requestId: string) {
  const request = await pendingRequest(deps, requestId);
  const client = await findOAuth2Client(deps, request.clientId);
  if (!client) throw new AppError("invalid-request", "the client of this request no longer exists");
  return {
    requestId: request.id,
    clientId: client.clientId,
    clientName: client.clientName,
    scopes: request.scopes,
    redirectUri: request.redirectUri,
    // RFC 8707: where the tokens go, for the UI's own consent to name (as the built-in page's "It asks for access to").
    ...(request.resources.length ? { resources: request.resources } : {}),
    // What the sign-in must be (contract §12): the UI re-authenticates the person before completing when asked.
    ...(request.acrValues?.length ? { acrValues: request.acrValues } : {}),
    ...(request.maxAge !== undefined ? { maxAge: request.maxAge } : {}),
    ...(request.prompt.length ? { prompt: request.prompt } : {}),
    // The organization the client asked to act in (`organization`: an id or slug), for the UI to preselect.
    ...(request.organization ? { organization: request.organization } : {}),
    // A device flow's request: the UI shows this code so the person can check it is their device's.
    ...(request.device ? { deviceUserCode: request.device.userCode } : {}),
    // A CIBA request's: the UI shows the client's message quoted, and lets only `cibaUserId` decide.
    ...(request.ciba
      ? { cibaUserId: request.ciba.userId, bindingMessage: request.ciba.bindingMessage ?? null }
      : {}),
    // RFC 9396: what the person must see and approve, with the client's types to show them by (docs/agents.md).
    ...(request.authorizationDetails
      ? {
          authorizationDetails: request.authorizationDetails,
          authorizationDetailsTypes: client.authorizationDetailsTypes,
        }
      : {}),
  };
}

/**
 * Completes the request for the bearer's user. `auth_time` is when that user signed in: the creation of the
 * session the token belongs to (a refreshed token keeps its session's), so `max_age` and `prompt=login` mean what
 * they say; `acr` and `amr` come from the way the session was made (its `method`), and an elevated token counts as a
 * passkey at its issue (contract §6 and §12 agree: src/browser/step-up.ts, `recentPhishingResistant`). `orgId` is the
 * organization the person let the client act in (the UI's picker): it must be one of the person's active memberships
 * (403 `not-org-member`); a device request takes none (docs/oauth2.md).
 */
export async function completeWithAccessToken(
  deps: Deps,
  requestId: string,
  auth: AccessTokenPayload,
  orgId: string | null = null,
): Promise<{ redirectUri: string }> {
  const request = await pendingRequest(deps, requestId);
  const user = await findUserById(deps.shards, auth.sub);
  if (!user) throw new AppError("unauthorized");
  if (user.disabled) throw new AppError("disabled-user");
  // An anonymous user has no identity to vouch for to another app.
  if (user.isAnonymous) throw new AppError("forbidden-anonymous");
  // How and when the bearer's user signed in (step-up-sessions.ts): the session's way, an elevation's passkey.
  const demand = demandOf(request, deps.now());
  const times = await bearerMethodTimes(deps, auth);
  const verdict = judge(times, demand);
  if (verdict === "stale") {
    throw new AppError("unauthorized", "this authorization request needs a more recent sign-in");
  }
  if (verdict === "weak") {
    // An external UI steps up with the API: TOTP at sign-in, or an elevation with a security key (contract §6).
    throw new AppError("unauthorized", "this authorization request needs a stronger sign-in (acr_values)");
  }
  if (orgId !== null && (request.device || request.ciba || !(await activeMembership(deps, orgId, user.id)))) {
    throw new AppError("not-org-member");
  }
  const done = await completeRequest(
    deps,
    request,
    { userId: user.id, times, sid: auth.sid ?? null, actor: actorOf(auth) },
    orgId,
  );
  // No client to send the browser back to: the device learns the outcome by polling; the UI shows the result page.
  if ("device" in done) {
    const page = request.ciba ? CIBA_DONE_PATH : `${DEVICE_PAGE_PATH}?result=approved`;
    return { redirectUri: deps.config.urls.auth(page) };
  }
  return done;
}

/** Who completes a request: the user, when each of their sign-in methods was last performed, their session (`sid`). */
export interface Completer {
  userId: string;
  times: MethodTimes;
  sid: string | null;
  /** Who acts in that session, when it is an impersonation: it authorizes and approves nothing. */
  actor?: string | null;
}

/**
 * Completes the request for a person whose sign-in meets what it asks (the caller judged it: browser/step-up.ts): a
 * code for the client's redirect URI with how and when they signed in (`acr`, `amr`, `auth_time`), in `orgId` if they
 * picked one; or, for a device request, the device's authorization approved (`{ device: true }`). A request decided
 * already or expired is refused (400 `invalid-request`).
 */
export async function completeRequest(
  deps: Deps,
  request: PendingRequest,
  completer: Completer,
  orgId: string | null,
): Promise<{ redirectUri: string } | { device: true }> {
  // An impersonation authorizes no client, not even one consented to before, and approves no device (operators.md §1).
  refuseWhileImpersonating(
    completer.actor,
    request.device
      ? "approving a device"
      : request.ciba
        ? "approving a CIBA request"
        : "authorizing a client",
  );
  const signIn = signInFor(completer.times, demandOf(request, deps.now()), completer.sid);
  const polled = request.device ?? request.ciba;
  if (polled) {
    const approvedBy = { userId: completer.userId, ...signIn };
    const decided = await finishDeviceRequest(deps, request, polled.codeHash, { approvedBy });
    // A CIBA request is decided only by the user it asks (the UPDATE's own condition).
    if (!decided) throw new AppError("invalid-request", "this request was decided already, or has expired");
    await pingClient(deps, decided);
    return { device: true };
  }
  return { redirectUri: await issueCode(deps, request, completer.userId, signIn, orgId) };
}

/**
 * The person refused the request: a device's authorization or CIBA request is denied (its poll hears `access_denied`,
 * a ping client is pinged), if `userId` may decide it; a client's
 * request is forgotten and the browser goes back with `access_denied` (RFC 6749 §4.1.2.1). `actor`: who acts, when
 * the deciding session is an impersonation.
 */
export async function denyRequest(
  deps: Deps,
  request: PendingRequest,
  userId: string,
  actor: string | null = null,
): Promise<{ redirectUri: string } | { device: true }> {
  const polled = request.device ?? request.ciba;
  if (polled) {
    // A denial is a decision in the user's name too (operators.md §1: no device-code or CIBA approval), refused here
    // as `completeRequest` refuses the approval, whatever door the decision came through.
    refuseWhileImpersonating(actor, request.device ? "deciding on a device" : "deciding on a CIBA request");
    const decided = await finishDeviceRequest(deps, request, polled.codeHash, { deniedBy: userId });
    // CIBA Core §10.2: a ping client hears of a denial too, and learns it by polling (`access_denied`).
    if (decided) await pingClient(deps, decided);
    return { device: true };
  }
  deps.background(forgetPendingRequest(deps.env, request.id));
  const denied = errorResponse(
    deps.config,
    request.redirectUri,
    "access_denied",
    "the user denied the request",
    request.state,
  );
  return { redirectUri: denied };
}

/**
 * `prompt=none` with the built-in page (OIDC Core §3.1.2.1, §3.1.2.6): no page at all, whichever login UI is set
 * (an external one is told nothing: the browser session is the built-in page's). The browser's session and a
 * remembered consent complete the request at once; otherwise the client hears `login_required` (no sign-in, or none
 * recent enough for `max_age`), `interaction_required` (a sign-in below the `acr_values` asked: a step-up needs the
 * page) or `consent_required`.
 */
export async function silentAuthorization(c: Ctx, request: PendingRequest): Promise<string> {
  const deps = c.var.deps;
  const session = await readBrowserSession(c);
  const fail = (
    error: "login_required" | "consent_required" | "interaction_required" | "access_denied",
    why: string,
  ) =>
    authorizationResponse(deps.config, request.redirectUri, {
      error,
      error_description: why,
      state: request.state,
    });
  if (!session) return fail("login_required", "the user is not signed in");
  // OIDC Core §3.1.2.1: the client named the user it believes is signed in (`id_token_hint`); someone else is.
  if (request.hintedUserId && request.hintedUserId !== session.user.id) {
    return fail("login_required", "the signed-in user is not the one id_token_hint names");
  }
  const demand = demandOf(request, deps.now());
  const verdict = judge(session.methods, demand);
  if (verdict === "stale") return fail("login_required", "the user's sign-in is older than max_age allows");
  if (verdict === "weak") {
    return fail("interaction_required", "the user's sign-in does not meet the requested acr_values");
  }
  // RFC 8707: a resource is part of what the person allowed, like a scope (consents.ts `consentCovers`).
  const granted = await grantedConsent(deps, session.user.id, request.clientId);
  if (!consentCovers(granted, request)) {
    return fail("consent_required", "the user has not allowed these scopes or resources");
  }
  // RFC 9396: details are approved on the page, request by request (interaction-describe.ts `consentQuestion`).
  if (request.authorizationDetails) {
    return fail("consent_required", "authorization_details must be approved by the user");
  }
  // A named organization completes into it only for an active member; otherwise the user would have to choose.
  const named = await namedOrganization(deps, session.user.id, request.organization);
  if (request.organization !== undefined && !named) {
    return fail("consent_required", "the user has not allowed acting in that organization");
  }
  // An impersonation authorizes no client (contract operators.md §1); the client hears it as OAuth2 says, at its
  // redirect URI, rather than the browser stopping on a 403 page with no way back to the app.
  if (session.actor) return fail("access_denied", "an impersonated session may not authorize a client");
  const signIn = signInFor(session.methods, demand, session.sessionId);
  return issueCode(deps, request, session.user.id, signIn, named?.orgId ?? null);
}
