import type { Deps } from "../http/deps";
import { appRequest } from "./app-requests";
import { deviceRequest, normalizeUserCode, pendingByUserCode } from "./device";
import { newRequestId, type PendingRequest, savePendingRequest } from "./pending-requests";

/**
 * The interaction contract, the requests the built-in pages open themselves (contract §3.5): a client's request comes
 * from `/oauth2/authorize`, but a device's starts at the device page, an invitation's at its mailed link and a
 * first-party app's at the hosted pages. Each becomes a pending request the page then serves like any other
 * (interaction-describe.ts), known to the page by its id only.
 */

// Where an app's request may go back to, checked before it is opened (the hosted pages answer 400 otherwise).
export { appTarget } from "./app-requests";
// An OpenID CIBA request's approval, opened by its link's handle (src/pages/ciba-routes.ts), and where it lives.
export { CIBA_PAGE_PATH, openCibaApproval } from "./ciba";

/**
 * A user code as the device page shows it back: the code the person typed (a `verification_uri_complete` link's)
 * in its printed form `BCDF-GHJK`, or as it came when it cannot be one, bounded. Never submitted for the person.
 */
export function shownUserCode(value: string): string {
  const code = normalizeUserCode(value.slice(0, 20));
  return code ? `${code.slice(0, 4)}-${code.slice(4)}` : value.slice(0, 20);
}

/** A pending device authorization a typed user code names; `open` makes the page's request for it. */
export interface UserCodeMatch {
  /** Saves the page's request for the device (sign-in and consent, never skipped) and answers its id. */
  open(): Promise<string>;
}

/**
 * The pending, unexpired device authorization a typed user code names (any case, with or without the dash), or
 * undefined. Nothing is saved until `open`: the page counts the guess first (a wrong code, and past the limit a right
 * one too, opens nothing).
 */
export async function findUserCode(deps: Deps, typed: string): Promise<UserCodeMatch | undefined> {
  const code = normalizeUserCode(typed);
  const found = code ? await pendingByUserCode(deps, code) : undefined;
  if (!found || !code) return undefined;
  return {
    async open() {
      const request = deviceRequest(deps, found, code);
      await savePendingRequest(deps.env, request);
      return request.id;
    },
  };
}

/**
 * A first-party app's request (contract §13, app-requests.ts): no client and no redirect URI; `target` is the
 * `redirectTo` the app asked for, checked already (`appTarget`); `prompt=login` asks for a sign-in made for it.
 */
export async function openAppInteraction(
  deps: Deps,
  target: string,
  options: { promptLogin: boolean; uiLocales: string[] },
): Promise<string> {
  const request = appRequest(deps.now(), target, options);
  await savePendingRequest(deps.env, request);
  return request.id;
}

/**
 * An organization invitation's request (contract organizations.md §1): no client, no redirect; only the ticket's
 * hash is kept, and the invited address prefills the sign-in form. The invitation is the orgs feature's, re-read by
 * the page at every step; the request only carries the person through sign-in to the page's join step.
 */
export async function openInvitationInteraction(
  deps: Deps,
  ticketHash: string,
  invitedEmail: string,
): Promise<string> {
  const request: PendingRequest = {
    id: newRequestId(),
    clientId: "",
    redirectUri: "",
    scopes: [],
    resources: [],
    prompt: [],
    uiLocales: [],
    loginHint: invitedEmail,
    invitation: { ticketHash },
    createdAt: deps.now(),
  };
  await savePendingRequest(deps.env, request);
  return request.id;
}
