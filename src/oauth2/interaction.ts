import { activeMembership, findUserById } from "../auth";
import { demandOf, judge, signInFor } from "../browser/step-up";
import { bearerMethodTimes } from "../browser/step-up-sessions";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import type { AccessTokenPayload } from "../lib/jwt";
import { findOAuth2Client } from "./clients";
import { issueCode } from "./codes";
import { DEVICE_PAGE_PATH, finishDeviceRequest } from "./device";
import { loadPendingRequest, type PendingRequest } from "./pending-requests";

/**
 * The login step for an external login UI (`AUTH_OAUTH2_PROVIDER_LOGIN_URL`, contract §3.5): the UI reads the
 * request, signs the user in with the ordinary API, asks for consent itself, and completes the request with the
 * user's access token.
 */

async function pendingRequest(deps: Deps, requestId: string): Promise<PendingRequest> {
  const request = await loadPendingRequest(deps.env, requestId, deps.now());
  // An invitation's request belongs to the built-in page alone: it has no client to complete for.
  if (!request || request.invitation) throw new AppError("invalid-request", "unknown or expired request_id");
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
    // What the sign-in must be (contract §12): the UI re-authenticates the person before completing when asked.
    ...(request.acrValues?.length ? { acrValues: request.acrValues } : {}),
    ...(request.maxAge !== undefined ? { maxAge: request.maxAge } : {}),
    ...(request.prompt.length ? { prompt: request.prompt } : {}),
    // The organization the client asked to act in (`organization`: an id or slug), for the UI to preselect.
    ...(request.organization ? { organization: request.organization } : {}),
    // A device flow's request: the UI shows this code so the person can check it is their device's.
    ...(request.device ? { deviceUserCode: request.device.userCode } : {}),
  };
}

/**
 * Completes the request for the bearer's user. `auth_time` is when that user signed in: the creation of the
 * session the token belongs to (a refreshed token keeps its session's), so `max_age` and `prompt=login` mean what
 * they say; `acr` and `amr` come from the way the session was made (its `method`), and an elevated token counts as a
 * passkey at its issue (contract §6 and §12 agree: step-up.ts, `recentPhishingResistant`). `orgId` is the
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
  const signIn = signInFor(times, demand, auth.sid ?? null);
  if (orgId !== null && (request.device || !(await activeMembership(deps, orgId, user.id)))) {
    throw new AppError("not-org-member");
  }
  if (request.device) {
    // No client to send the browser back to: the device learns the outcome by polling; the UI shows the result page.
    const approvedBy = { userId: user.id, ...signIn };
    if (!(await finishDeviceRequest(deps, { ...request, device: request.device }, { approvedBy }))) {
      throw new AppError("invalid-request", "this device request was decided already, or has expired");
    }
    return { redirectUri: `${deps.config.AUTH_SERVER_URL}${DEVICE_PAGE_PATH}?result=approved` };
  }
  return { redirectUri: await issueCode(deps, request, user.id, signIn, orgId) };
}
