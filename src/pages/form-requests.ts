import type { Ctx } from "../browser/page-paths";
import { showProblem, UNKNOWN_REQUEST } from "../browser/page-response";
import { isSameOrigin } from "../browser/same-origin";
import {
  type AppReturn,
  describeInteraction,
  type InteractionClient,
  type InteractionRequest,
  interactionParams,
} from "../oauth2";
import { findPendingInvitation, type PendingInvitation } from "../orgs";
import { appName } from "./hosted-text";

/** The request a page view or form post works on, and the checks every form post passes first. */

/**
 * A client's request, with its client; or an invitation's, with the invitation while it is still pending (its
 * organization's name stands where a client's name would, on the sign-in views); or a first-party app's (the hosted
 * pages, contract §13), with the name the page gives the app. What the request is, and whether the page serves it,
 * is the interaction contract's to say (oauth2 `describeInteraction`); the names are the page's.
 */
export type PageRequest =
  | { request: InteractionRequest; client: InteractionClient; invitation?: undefined; app?: undefined }
  | {
      request: InteractionRequest;
      client: { clientName: string };
      invitation: PendingInvitation;
      app?: undefined;
    }
  | { request: AppRequest; client: { clientName: string }; invitation?: undefined; app: AppRequest["app"] };

type AppRequest = InteractionRequest & { app: AppReturn };

export async function pageRequest(c: Ctx, requestId: string | undefined): Promise<PageRequest | null> {
  const described = await describeInteraction(c.var.deps, requestId);
  if (!described) return null;
  const { request } = described;
  if (described.app) {
    return {
      request: described.request,
      client: { clientName: await appName(c, described.app.redirectTo) },
      app: described.app,
    };
  }
  if (described.invitation) {
    const invitation = await findPendingInvitation(c.var.deps, described.invitation.ticketHash);
    return invitation ? { request, client: { clientName: invitation.org.name }, invitation } : null;
  }
  return { request, client: described.client };
}

/** Form posts of the page: the same-origin check, the parameters and the pending request, or a problem page. */
export async function formRequest(c: Ctx) {
  if (!isSameOrigin(c)) return { failure: showProblem(c, (t) => t.errors.otherSite, 403) };
  const read = await interactionParams(c);
  if ("unreadable" in read) return { failure: showProblem(c, () => read.unreadable) };
  const { params } = read;
  const loaded = await pageRequest(c, params.get("request_id"));
  if (!loaded) return { failure: showProblem(c, UNKNOWN_REQUEST) };
  return { params, ...loaded };
}
