import { and, asc, eq, gt } from "drizzle-orm";
import { type DeviceAuthorizationRow, deviceAuthorizations, oauth2Clients } from "../../db/schema";
import type { Deps } from "../../http/deps";
import { polledRequest } from "../device";
import { type PendingRequest, savePendingRequest } from "../pending-requests";

/**
 * The user's side of a CIBA request: the approval link (mailed, and listed in the account center) opens a page
 * request that goes through sign-in, a step-up when the request asks `acr_values`, and the consent screen with the
 * binding message, like a device's (src/pages/interaction-routes.ts); only the user the request names may decide it
 * (device.ts `decideDevice`). Opening the link decides nothing.
 */

/** The approval page (src/pages/ciba-routes.ts) and where it lands once approved. */
export const CIBA_PAGE_PATH = "/oauth2/ciba";
export const CIBA_DONE_PATH = `${CIBA_PAGE_PATH}?result=approved`;

const HANDLE_PREFIX = "ciba:";
const HANDLE = /^[A-Za-z0-9_-]{43}$/;

/** The link to a request's approval page: its handle, which names the request and grants nothing. */
export function approvalLink(deps: Deps, row: DeviceAuthorizationRow): string {
  const handle = row.userCodeHash.slice(HANDLE_PREFIX.length);
  return deps.config.urls.auth(`${CIBA_PAGE_PATH}?request=${handle}`);
}

const pendingCiba = (now: number) =>
  and(
    eq(deviceAuthorizations.kind, "ciba"),
    eq(deviceAuthorizations.status, "pending"),
    gt(deviceAuthorizations.expiresAt, now),
  );

/**
 * Opens the page request for the pending, unexpired CIBA request a handle names (the page's id), or undefined. The
 * request asks the step-up its `acr_values` asked, and carries the user it names and the client's binding message.
 */
export async function openCibaApproval(deps: Deps, handle: string): Promise<string | undefined> {
  if (!HANDLE.test(handle)) return undefined;
  const now = deps.now();
  const row = await deps.db
    .select()
    .from(deviceAuthorizations)
    .where(and(eq(deviceAuthorizations.userCodeHash, `${HANDLE_PREFIX}${handle}`), pendingCiba(now)))
    .get();
  if (!row?.subject) return undefined;
  const request: PendingRequest = {
    ...polledRequest(deps, row),
    ...(row.acrValues?.length ? { acrValues: row.acrValues } : {}),
    ...(row.authorizationDetails?.length ? { authorizationDetails: row.authorizationDetails } : {}),
    ciba: {
      codeHash: row.deviceCodeHash,
      userId: row.subject,
      ...(row.bindingMessage ? { bindingMessage: row.bindingMessage } : {}),
    },
  };
  await savePendingRequest(deps.env, request);
  return request.id;
}

/** A request waiting for the user, as the account center lists it. */
export interface WaitingApproval {
  /** The approval page's handle (`?request=`). */
  handle: string;
  clientName: string;
  bindingMessage: string | null;
  /** ms */
  expiresAt: number;
}

/** The CIBA requests waiting for this user's decision, the soonest to expire first (at most `limit`). */
export async function waitingApprovals(deps: Deps, userId: string, limit = 20): Promise<WaitingApproval[]> {
  const rows = await deps.db
    .select({
      userCodeHash: deviceAuthorizations.userCodeHash,
      clientName: oauth2Clients.clientName,
      bindingMessage: deviceAuthorizations.bindingMessage,
      expiresAt: deviceAuthorizations.expiresAt,
    })
    .from(deviceAuthorizations)
    .innerJoin(oauth2Clients, eq(oauth2Clients.clientId, deviceAuthorizations.clientId))
    .where(and(pendingCiba(deps.now()), eq(deviceAuthorizations.subject, userId)))
    .orderBy(asc(deviceAuthorizations.expiresAt))
    .limit(limit)
    .all();
  return rows.map((row) => ({
    handle: row.userCodeHash.slice(HANDLE_PREFIX.length),
    clientName: row.clientName,
    bindingMessage: row.bindingMessage,
    expiresAt: row.expiresAt,
  }));
}
