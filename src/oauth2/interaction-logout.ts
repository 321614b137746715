import type { Context } from "hono";
import type { AppEnv } from "../http/app-env";
import type { Deps } from "../http/deps";
import { OAuth2Error } from "./errors";
import { checkEndSession, type EndSessionParams, type EndSessionProblem, endSessionParams } from "./logout";
import { oauth2Params } from "./params";

/**
 * The interaction contract, for RP-Initiated Logout 1.0 (contract §12): the built-in page asks and signs the person
 * out of its own browser session (src/pages/logout-routes.ts); what the request asks, and whether its hint, client
 * and `post_logout_redirect_uri` hold, is the authorization server's to say (logout/end-session.ts).
 */

export type { EndSessionParams, EndSessionProblem };

/** An end-session request, checked: its problem, or whom it is for and where the browser may go after. */
export type LogoutCheck =
  | { ok: false; problem: EndSessionProblem }
  | {
      ok: true;
      /** The client the request is for (the hint's audience, else `client_id`), by the name it registered. */
      clientName?: string;
      /** A verified `id_token_hint`: whom (`sub`) and which browser session (`sid`) it was issued for. */
      hint?: { sub: string; sid?: string };
      /** Where the browser goes after signing out: the registered URI with `state`; only with a verified hint. */
      target?: string;
    };

/** The request's parameters (a GET's query, a POST's form), bounded, or why they could not be read. */
export async function readEndSession(c: Context<AppEnv>): Promise<EndSessionParams | { unreadable: string }> {
  try {
    return endSessionParams(await oauth2Params(c));
  } catch (error) {
    if (error instanceof OAuth2Error) return { unreadable: error.description };
    throw error;
  }
}

export async function checkLogout(deps: Deps, params: EndSessionParams): Promise<LogoutCheck> {
  const checked = await checkEndSession(deps, params);
  if (!checked.ok) return checked;
  const { client, hint, target } = checked;
  return {
    ok: true,
    ...(client ? { clientName: client.clientName } : {}),
    ...(hint ? { hint: { sub: hint.sub, ...(hint.sid !== undefined ? { sid: hint.sid } : {}) } } : {}),
    ...(target !== undefined ? { target } : {}),
  };
}
