import { eq } from "drizzle-orm";
import { type OAuth2ClientRow, oauth2Clients } from "../../db/schema";
import type { Deps } from "../../http/deps";
import { type IdTokenHint, verifyIdTokenHint } from "../id-token-hint";
import { param } from "../params";

/**
 * What an RP-Initiated Logout 1.0 request (§2) asks, checked. The rules, each against a threat:
 * - `id_token_hint` must be an ID token we signed (any age); one that does not verify (`alg: none`, a changed
 *   signature, another issuer's) makes the request invalid: it shows an error, never a redirect (forged logout links);
 * - `client_id`, when sent with a hint, must be the hint's audience (§2: "MUST verify");
 * - `post_logout_redirect_uri` must be exactly one of the client's registered `postLogoutRedirectUris` (§3), or the
 *   request is invalid: no redirect at all (an open redirector). It is followed only with a verified hint: a bare
 *   `client_id` names a client but proves nothing about who sent the browser here (§3: "MUST NOT perform post-logout
 *   redirection unless the OP has other means of confirming the legitimacy"), so it gets the signed-out page;
 * - `state` goes back exactly as it came; `ui_locales` picks the page's language; `logout_hint` is accepted and not
 *   used (the hint's `sub` says more, and a page never tells whose session a link names).
 */

export interface EndSessionParams {
  idTokenHint?: string;
  clientId?: string;
  postLogoutRedirectUri?: string;
  state?: string;
  uiLocales: string[];
}

export type EndSessionProblem = "invalid-hint" | "unknown-client" | "unregistered-redirect";

export type EndSession =
  | { ok: false; problem: EndSessionProblem }
  | {
      ok: true;
      /** The client the request is for: the hint's audience, else `client_id`. */
      client?: OAuth2ClientRow;
      hint?: IdTokenHint;
      /** Where the browser goes after signing out: the registered URI with `state`; only with a verified hint. */
      target?: string;
    };

/** The request's parameters (a GET's query or a POST's form: oauth2Params), bounded. */
export function endSessionParams(params: Map<string, string>): EndSessionParams {
  return {
    idTokenHint: param(params, "id_token_hint", 8192),
    clientId: param(params, "client_id"),
    postLogoutRedirectUri: param(params, "post_logout_redirect_uri"),
    state: param(params, "state"),
    uiLocales: (param(params, "ui_locales", 200) ?? "").split(" ").filter(Boolean).slice(0, 10),
  };
}

/**
 * A stored client only: a logout never fetches a client ID metadata document (a link anyone can craft would make
 * the server fetch any URL), and such a client has no post-logout URIs to check against anyway.
 */
function storedClient(deps: Deps, clientId: string): Promise<OAuth2ClientRow | undefined> {
  return deps.db.select().from(oauth2Clients).where(eq(oauth2Clients.clientId, clientId)).get();
}

export async function checkEndSession(deps: Deps, params: EndSessionParams): Promise<EndSession> {
  let hint: IdTokenHint | undefined;
  if (params.idTokenHint) {
    hint = (await verifyIdTokenHint(deps.config, params.idTokenHint)) ?? undefined;
    if (!hint || (params.clientId !== undefined && params.clientId !== hint.clientId)) {
      return { ok: false, problem: "invalid-hint" };
    }
  }
  const clientId = hint?.clientId ?? params.clientId;
  const client = clientId ? await storedClient(deps, clientId) : undefined;
  // A hint we signed for a client deleted since: the hint still says who and which session, but nobody to return to.
  if (params.clientId !== undefined && !client) return { ok: false, problem: "unknown-client" };
  if (params.postLogoutRedirectUri === undefined) return { ok: true, client, hint };
  // Exact string comparison, as for redirect URIs (RFC 9700 §4.1.3): no prefix, no added query, no other port.
  if (!client?.postLogoutRedirectUris.includes(params.postLogoutRedirectUri)) {
    return { ok: false, problem: "unregistered-redirect" };
  }
  return {
    ok: true,
    client,
    hint,
    target: hint ? withState(params.postLogoutRedirectUri, params.state) : undefined,
  };
}

/**
 * The registered URI with `state` added as it came (§3: "MUST" be passed back). The URI's own query is kept byte
 * for byte (registered URIs have no fragment: client-schema.ts), so the client sees the URI it registered.
 */
function withState(uri: string, state: string | undefined): string {
  if (state === undefined) return uri;
  return `${uri}${uri.includes("?") ? "&" : "?"}state=${encodeURIComponent(state)}`;
}
