import type { Context } from "hono";
import type { Config } from "../config";
import type { AppEnv } from "../http/app-env";
import type { Deps } from "../http/deps";
import { isAccountCenter } from "./app-requests";
import {
  type AuthorizationDetail,
  type AuthorizationDetailsType,
  authorizationDetailsHtml,
} from "./authorization-details";
import { findOAuth2Client } from "./clients";
import { consentCovers, grantedConsent } from "./consents";
import { OAuth2Error } from "./errors";
import { type ClientFacts, clientFacts } from "./interaction-client-facts";
import { type MemberOrganization, memberOrganizations, namedOrganization } from "./organizations";
import { oauth2Params } from "./params";
import { loadPendingRequest, type PendingRequest } from "./pending-requests";

/**
 * The interaction contract, read side (contract §3.5): what a login UI shows of a pending request. The built-in pages
 * (src/pages/) read it here, as an external login UI reads `GET /oauth2/interaction/request` (interaction.ts
 * `describeRequest`), and never the request's storage: the PKCE challenge, nonce, `state` and DPoP key stay here, read
 * only by the operations that finish the request (interaction-finish.ts), by its id.
 */

/** A pending request as a login UI sees it: what it shows, and what its steps ask of the sign-in. */
export interface InteractionRequest {
  readonly id: string;
  /** The client's id; empty for an invitation's or an app's request, which have no client. */
  readonly clientId: string;
  /** Where the code goes; empty for a device's, an invitation's or an app's request. */
  readonly redirectUri: string;
  readonly scopes: string[];
  /** RFC 8707 resources the tokens will be for. */
  readonly resources: string[];
  /** `prompt` values (OIDC Core §3.1.2.1): none, login, consent, select_account. */
  readonly prompt: string[];
  /** Seconds; the sign-in must be no older than this. */
  readonly maxAge?: number;
  /** The known `acr_values`, in order (src/browser/step-up.ts). */
  readonly acrValues?: string[];
  readonly loginHint?: string;
  /** `ui_locales`: the languages the page should speak, in order. */
  readonly uiLocales: string[];
  /** The organization (an id or slug) the client asks to act in. */
  readonly organization?: string;
  /** A device flow's request: the user code the person checks against their device's. */
  readonly device?: { readonly userCode: string };
  /**
   * A CIBA request's approval: the user it asks (only they may decide it) and the client's binding message, shown
   * quoted under a fixed header, attributed to the client.
   */
  readonly ciba?: { readonly userId: string; readonly bindingMessage?: string };
  /** An organization invitation's request: the ticket's SHA-256 (never the ticket). */
  readonly invitation?: { readonly ticketHash: string };
  /** A first-party app's request (the hosted pages): where the browser goes back to. */
  readonly app?: AppReturn;
  /** RFC 9396: the authorization details asked for, checked against the client's types; shown at consent. */
  readonly authorizationDetails?: AuthorizationDetail[];
  /** ms */
  readonly createdAt: number;
}

/** Where a first-party app's request goes back to: the app's `redirectTo`, or this service's account center. */
export interface AppReturn {
  readonly redirectTo: string;
  /** The account center (app-requests.ts): it gets no token, and the page's words say "your account". */
  readonly accountCenter: boolean;
}

/** The client a request is for, as the page names and describes it. */
export interface InteractionClient {
  readonly clientId: string;
  readonly clientName: string;
  readonly facts: ClientFacts;
  /** The client's authorization details types: the templates its details are shown with (`authorizationDetailsHtml`). */
  readonly authorizationDetailsTypes: AuthorizationDetailsType[];
}

/**
 * A pending request the built-in page serves: a client's (with its client), an invitation's (its organization is the
 * pages' to read, by `invitation.ticketHash`), or a first-party app's (with whether it goes back to the account center).
 */
export type Interaction =
  | { request: InteractionRequest; client: InteractionClient; invitation?: undefined; app?: undefined }
  | {
      request: InteractionRequest & { invitation: { ticketHash: string } };
      invitation: { ticketHash: string };
      client?: undefined;
      app?: undefined;
    }
  | {
      request: InteractionRequest & { app: AppReturn };
      app: AppReturn;
      client?: undefined;
      invitation?: undefined;
    };

const appReturn = (config: Config, redirectTo: string): AppReturn => ({
  redirectTo,
  accountCenter: isAccountCenter(config, redirectTo),
});

/** The fields a login UI may see, copied: the rest of the stored request never leaves oauth2. */
function viewOf(config: Config, request: PendingRequest): InteractionRequest {
  return {
    id: request.id,
    clientId: request.clientId,
    redirectUri: request.redirectUri,
    scopes: request.scopes,
    resources: request.resources,
    prompt: request.prompt,
    ...(request.maxAge !== undefined ? { maxAge: request.maxAge } : {}),
    ...(request.acrValues ? { acrValues: request.acrValues } : {}),
    ...(request.loginHint !== undefined ? { loginHint: request.loginHint } : {}),
    uiLocales: request.uiLocales,
    ...(request.organization !== undefined ? { organization: request.organization } : {}),
    ...(request.device ? { device: { userCode: request.device.userCode } } : {}),
    ...(request.ciba
      ? {
          ciba: {
            userId: request.ciba.userId,
            ...(request.ciba.bindingMessage ? { bindingMessage: request.ciba.bindingMessage } : {}),
          },
        }
      : {}),
    ...(request.invitation ? { invitation: { ticketHash: request.invitation.ticketHash } } : {}),
    ...(request.app ? { app: appReturn(config, request.app.redirectTo) } : {}),
    ...(request.authorizationDetails ? { authorizationDetails: request.authorizationDetails } : {}),
    createdAt: request.createdAt,
  };
}

/**
 * The pending request the built-in page works on, or null (unknown, expired, or not the page's to serve). An app's
 * request it serves always (the hosted pages); the authorization server's only while it is on and the page is its
 * login UI, so a request made before the switch went off completes nothing; a client's only while the client exists.
 */
export async function describeInteraction(
  deps: Deps,
  requestId: string | undefined,
): Promise<Interaction | null> {
  const request = requestId ? await loadPendingRequest(deps.env, requestId, deps.now()) : null;
  const { config } = deps;
  if (request?.app) {
    const app = appReturn(config, request.app.redirectTo);
    return { request: { ...viewOf(config, request), app }, app };
  }
  if (!config.oauth2.enabled || config.oauth2.loginUrl) return null;
  if (!request) return null;
  if (request.invitation) {
    const invitation = { ticketHash: request.invitation.ticketHash };
    return { request: { ...viewOf(config, request), invitation }, invitation };
  }
  const client = await findOAuth2Client(deps, request.clientId);
  if (!client) return null;
  return {
    request: viewOf(config, request),
    client: {
      clientId: client.clientId,
      clientName: client.clientName,
      // A device's or CIBA request goes back nowhere: the consent screen names no destination for it.
      facts: clientFacts(client, request.device || request.ciba ? undefined : request.redirectUri),
      authorizationDetailsTypes: client.authorizationDetailsTypes,
    },
  };
}

/**
 * RFC 9396: the request's authorization details as the consent page shows them, in `language` (the page's), each
 * through the client's template for its type (authorization-details/render.ts); undefined when it has none.
 */
export function shownAuthorizationDetails(
  client: InteractionClient,
  request: InteractionRequest,
  language: string,
) {
  return request.authorizationDetails
    ? authorizationDetailsHtml(client, request.authorizationDetails, language)
    : undefined;
}

/** What the consent step asks, or that it asks nothing and completes (in the organization the request named). */
export type ConsentQuestion =
  | { ask: false; orgId: string | null }
  | {
      ask: true;
      /** Scopes allowed before: listed apart, the new ones asked about (incremental consent, contract §12). */
      granted: string[];
      /** The organizations the person may let the client act in (none for a device), and the one preselected. */
      organizations: MemberOrganization[];
      selectedOrg?: string;
    };

/**
 * Consent, unless the person allowed this client every scope and every resource (RFC 8707) before (incremental
 * consent, contract §12). A device
 * request is always asked about: the code may have come from someone else (RFC 8628 §5.4), and its consent is never
 * remembered. A request naming an organization the person can't pick is asked about too, rather than silently
 * completed without it.
 */
export async function consentQuestion(
  deps: Deps,
  request: InteractionRequest,
  userId: string,
): Promise<ConsentQuestion> {
  // A device's or CIBA request: asked every time (the client started it, not the person), with no organization to
  // pick (a CIBA client's is its own, set by an admin).
  const polled = request.device !== undefined || request.ciba !== undefined;
  // The organization the request names, when the user may pick it: a remembered consent then completes into it.
  const named = polled ? undefined : await namedOrganization(deps, userId, request.organization);
  const granted = polled
    ? { scopes: [], resources: [] }
    : await grantedConsent(deps, userId, request.clientId);
  const mustAsk =
    polled ||
    request.prompt.includes("consent") ||
    // RFC 9396: details describe this one request (a payment, a document): never taken as allowed before.
    request.authorizationDetails !== undefined ||
    (request.organization !== undefined && !named) ||
    // A resource not allowed before is asked about like a new scope: the page listed where the tokens go.
    !consentCovers(granted, request);
  if (!mustAsk) return { ask: false, orgId: named?.orgId ?? null };
  // A device grant carries no organization (docs/oauth2.md): its page offers none.
  const organizations = polled ? [] : await memberOrganizations(deps, userId);
  return {
    ask: true,
    granted: granted.scopes,
    organizations,
    ...(named ? { selectedOrg: named.orgId } : {}),
  };
}

/**
 * A page's form post or query, read by the authorization server's rules (params.ts: a repeated parameter, a body
 * that is not a form, are refused), or why it could not be read.
 */
export async function interactionParams(
  c: Context<AppEnv>,
): Promise<{ params: Map<string, string> } | { unreadable: string }> {
  try {
    return { params: await oauth2Params(c) };
  } catch (error) {
    if (error instanceof OAuth2Error) return { unreadable: error.description };
    throw error;
  }
}
