import type { Context } from "hono";
import { activeMembership, issueExchangeCode, signInScope, startSession } from "../auth";
import type { SsoConnectionRow } from "../db/schema";
import { AppError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { browserBinding } from "../http/browser-binding";
import { timingSafeEqualString } from "../lib/crypto";
import { withQuery } from "../lib/redirect";
import { userThroughConnection } from "./jit";
import { IDP_INITIATED, type PendingSsoRequest, type SsoIdentity } from "./requests";

/**
 * The end of every enterprise sign-in (OIDC callback, SAML ACS's GET), as a provider sign-in ends (contract auth.md
 * §7): a 302 to the request's `redirectTo` with `refreshToken` (or `mfaTicket` when the user has TOTP on), or with
 * `error` and `errorDescription`.
 */

/** The 302 to `redirectTo` carrying an error; 5xx errors are thrown on for the error handler (503, Retry-After). */
export function ssoFailure(c: Context<AppEnv>, redirectTo: string, error: unknown): Response {
  if (!(error instanceof AppError) || error.status >= 500) throw error;
  if (error.reason) {
    console.warn(JSON.stringify({ level: "warn", what: error.code, detail: error.reason.slice(0, 500) }));
  }
  return c.redirect(withQuery(redirectTo, { error: error.code, errorDescription: error.message }), 302);
}

/**
 * Whether this request comes from the browser that started the sign-in (the `sso-flow` cookie `POST /sso/start`
 * set): a result URL opened in another browser (login CSRF, RFC 9700 §4.7) completes nothing. An IdP-initiated SAML
 * response was started by no browser: accepted only when the connection allows them.
 */
export async function sameBrowser(
  c: Context<AppEnv>,
  connection: SsoConnectionRow,
  request: PendingSsoRequest,
) {
  if (request.browserHash === IDP_INITIATED)
    return connection.type === "saml" && connection.allowIdpInitiated;
  const present = await browserBinding(c, "sso-flow");
  return present !== null && timingSafeEqualString(present, request.browserHash);
}

/**
 * Checks the browser binding, then the connection (enabled, the request's), then signs in the user the identity
 * names (./jit.ts: only inside the org's verified domains) and answers the redirect.
 */
export async function finishSsoSignIn(
  c: Context<AppEnv>,
  connection: SsoConnectionRow,
  identity: SsoIdentity,
  request: PendingSsoRequest,
): Promise<Response> {
  try {
    if (!(await sameBrowser(c, connection, request))) {
      throw new AppError("invalid-state", "this sign-in was started in another browser; start it again");
    }
    if (connection.id !== request.connectionId || !connection.enabled) {
      throw new AppError("sso-connection-not-found", "this connection is disabled or was removed");
    }
    const deps = c.var.deps;
    const user = await userThroughConnection(deps, connection, identity);
    // The session starts inside the connection's organization: that is where its IdP vouched for the person.
    const org = await activeMembership(deps, connection.orgId, user.id);
    // The method is the connection's kind, named here: no path says it (the ACS's GET and the OIDC callback differ).
    // (The scope names none: this route's refusals are redirects, never a credential failure to audit.)
    const method = connection.type === "saml" ? "sso:saml" : "sso:oidc";
    // A face's code flow: a code for its session, which opens in the org when the code comes back.
    if (request.codeChallenge) {
      const code = await issueExchangeCode(deps, user.id, request.codeChallenge, {
        method,
        orgId: org?.orgId,
      });
      return c.redirect(withQuery(request.redirectTo, { code }), 302);
    }
    const signedIn = await startSession(signInScope(c, null), { user, org, method, mfaGate: true });
    return c.redirect(
      withQuery(
        request.redirectTo,
        signedIn.session
          ? { refreshToken: signedIn.session.refreshToken }
          : { mfaTicket: signedIn.mfa!.ticket },
      ),
      302,
    );
  } catch (error) {
    return ssoFailure(c, request.redirectTo, error);
  }
}
