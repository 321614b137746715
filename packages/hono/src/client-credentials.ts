import * as oauth from "oauth4webapi";
import { EdgeAuthError } from "./errors.js";

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  /** The service's token endpoint; by default `<issuer>/oauth2/token`. */
  tokenUrl?: string;
  /** What the token is asked for: `authzen` (the scope the AuthZEN API requires) unless said otherwise. */
  scope?: string;
}

/** A token is renewed this long before its `expires_in` runs out, so none expires on its way to the AuthZEN API. */
const EARLY_RENEWAL_SECONDS = 30;

/**
 * Client-credentials tokens (RFC 6749 §4.4) from the service's token endpoint, cached to their expiry. Only the
 * settled token is kept between requests (never a pending fetch: a Worker may not wait on another request's I/O),
 * so two requests that find no token at the same moment each ask for one.
 */
export function clientCredentialsTokens(
  issuer: string,
  credentials: ClientCredentials,
  fetchImpl: typeof fetch | undefined,
  now: () => number = Date.now,
) {
  const server: oauth.AuthorizationServer = {
    issuer,
    token_endpoint: credentials.tokenUrl ?? `${issuer.replace(/\/$/, "")}/oauth2/token`,
  };
  const client: oauth.Client = { client_id: credentials.clientId };
  const clientAuth = oauth.ClientSecretBasic(credentials.clientSecret);
  // Plain http only to a local service (development); oauth4webapi refuses it otherwise, as it should.
  const local = /^http:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?\//.test(server.token_endpoint!);
  let cached: { token: string; renewAt: number } | undefined;

  async function fetchToken(): Promise<string> {
    try {
      const response = await oauth.clientCredentialsGrantRequest(
        server,
        client,
        clientAuth,
        { scope: credentials.scope ?? "authzen" },
        { [oauth.customFetch]: fetchImpl, [oauth.allowInsecureRequests]: local },
      );
      const answer = await oauth.processClientCredentialsResponse(server, client, response);
      const lifetime = answer.expires_in ?? 0;
      cached = { token: answer.access_token, renewAt: now() + (lifetime - EARLY_RENEWAL_SECONDS) * 1000 };
      return answer.access_token;
    } catch (error) {
      // The app's credentials or the service failed the app, not its user: a gateway's 502, with the reason.
      throw new EdgeAuthError(
        "client-credentials-failed",
        `@edge-auth/hono: no token from ${server.token_endpoint}: ${(error as Error).message}`,
        { status: 502, cause: error },
      );
    }
  }

  return {
    /** A token to send; `fresh` drops the cached one first (the API refused it: revoked, or its key rotated out). */
    async get(fresh = false): Promise<string> {
      if (!fresh && cached && cached.renewAt > now()) return cached.token;
      cached = undefined;
      return fetchToken();
    },
  };
}
