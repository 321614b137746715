import type { Config } from "../config";
import type { OAuth2ClientRow } from "../db/schema";
import { OAuth2Error } from "./errors";

/**
 * Resource indicators (RFC 8707): a client names the resources (APIs, MCP servers) a token is for, and the token's
 * `aud` is exactly those, so a resource server that checks its audience refuses a token meant for another one. The
 * resources a deployment serves are configured (`AUTH_OAUTH2_PROVIDER_RESOURCES`, the storage API by default) and
 * can be narrowed per client (`resources`). Without any, the audience is the client itself (contract §3.5).
 */

/** The resources `client` may have tokens for. */
export function allowedResources(config: Config, client: OAuth2ClientRow): string[] {
  return client.resources ?? config.oauth2.resources;
}

/**
 * The `resource` values of a request, checked (RFC 8707 §2): absolute URIs without a fragment, each one the client
 * may have; anything else is `invalid_target`. No value: an empty list.
 */
export function requestedResources(config: Config, client: OAuth2ClientRow, values: string[]): string[] {
  const allowed = allowedResources(config, client);
  for (const value of values) {
    let url: URL | undefined;
    try {
      url = new URL(value);
    } catch {}
    if (!url || value.includes("#") || value.length > 2048) {
      throw new OAuth2Error("invalid_target", "resource must be an absolute URI without a fragment");
    }
    if (!allowed.includes(value)) {
      throw new OAuth2Error("invalid_target", `this server issues no tokens for ${value.slice(0, 200)}`);
    }
  }
  return [...new Set(values)];
}

/**
 * The resources of a token asked for at the token endpoint: what the authorization (or the grant) allowed, narrowed
 * to the request's `resource` values when it names some; a value outside it widens, which is `invalid_target`.
 */
export function narrowedResources(granted: string[], asked: string[]): string[] {
  if (asked.length === 0) return granted;
  const outside = asked.filter((resource) => !granted.includes(resource));
  if (outside.length > 0) {
    throw new OAuth2Error("invalid_target", "a token can only be for resources the authorization allowed");
  }
  return [...new Set(asked)];
}

/** The access token's `aud`: the resources, or the client itself when there are none. */
export function audienceOf(clientId: string, resources: string[]): string | string[] {
  if (resources.length === 0) return clientId;
  return resources.length === 1 ? resources[0]! : resources;
}
