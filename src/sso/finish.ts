import type { Context } from "hono";
import { issueExchangeCode, revokeSession, signInScope, startSession } from "../auth";
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
 * names (./jit.ts: only inside the org's verified domains) and answers the redirect. `userHint`: the id the SAML
 * result's take answered for the asserted email (./requests.ts), so that the user's reads start at once.
 *
 * The trips (issue 48, "Round trips"; docs/performance.md, "The SAML ACS's GET"): the user's row, the org's
 * verified domains, the membership, the second factors and the risk gate's reads side by side; then the session's
 * batch beside its family's start and the membership's write. Every refusal is decided before that last trip.
 */
export async function finishSsoSignIn(
  c: Context<AppEnv>,
  connection: SsoConnectionRow,
  identity: SsoIdentity,
  request: PendingSsoRequest,
  userHint?: string,
): Promise<Response> {
  try {
    if (!(await sameBrowser(c, connection, request))) {
      throw new AppError("invalid-state", "this sign-in was started in another browser; start it again");
    }
    if (connection.id !== request.connectionId || !connection.enabled) {
      throw new AppError("sso-connection-not-found", "this connection is disabled or was removed");
    }
    const deps = c.var.deps;
    // (The scope names no method: this route's refusals are redirects, never a credential failure to audit.)
    const scope = signInScope(c, null);
    // The session starts inside the connection's organization: that is where its IdP vouched for the person.
    const { user, org, keepMembership } = await userThroughConnection(deps, connection, identity, {
      scope,
      userHint,
    });
    // The method is the connection's kind, named here: no path says it (the ACS's GET and the OIDC callback differ).
    const method = connection.type === "saml" ? "sso:saml" : "sso:oidc";
    // A face's code flow: a code for its session, which opens in the org when the code comes back (the membership
    // is written before the redirect carries the code).
    if (request.codeChallenge) {
      const [code] = await Promise.all([
        issueExchangeCode(deps, user.id, request.codeChallenge, { method, orgId: org.orgId }),
        keepMembership(),
      ]);
      return c.redirect(withQuery(request.redirectTo, { code }), 302);
    }
    // The membership's write beside the session's start: before, it was written first whatever the session step
    // decided (a second factor's ticket, the risk gate's refusal), and it still is; a session is only answered once
    // both are written, and one whose membership failed (or was suspended meanwhile) is ended.
    const [kept, signedIn] = await Promise.allSettled([
      keepMembership(),
      startSession(scope, { user, org, method, mfaGate: true }),
    ]);
    if (kept.status === "rejected") {
      const orphan = signedIn.status === "fulfilled" ? signedIn.value.session : null;
      if (orphan) deps.background(revokeSession(deps, orphan.refreshTokenId));
      throw kept.reason;
    }
    if (signedIn.status === "rejected") throw signedIn.reason;
    return c.redirect(
      withQuery(
        request.redirectTo,
        signedIn.value.session
          ? { refreshToken: signedIn.value.session.refreshToken }
          : { mfaTicket: signedIn.value.mfa!.ticket },
      ),
      302,
    );
  } catch (error) {
    return ssoFailure(c, request.redirectTo, error);
  }
}
