import type { Config } from "../config";
import type { OAuth2ErrorCode } from "./errors";

/**
 * A response to the client's redirect URI (RFC 6749 §4.1.2): the parameters join whatever query the registered URI
 * has, and `iss` names this server (RFC 9207), so a client talking to several servers cannot be mixed up.
 */
export function authorizationResponse(
  config: Config,
  redirectUri: string,
  values: Record<string, string | undefined>,
): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(values))
    if (value !== undefined) url.searchParams.set(name, value);
  url.searchParams.set("iss", config.urls.server);
  return url.toString();
}

export function errorResponse(
  config: Config,
  redirectUri: string,
  error: OAuth2ErrorCode,
  description: string,
  state: string | undefined,
): string {
  return authorizationResponse(config, redirectUri, { error, error_description: description, state });
}
