import type { OAuth2ClientRow } from "../../db/schema";

/**
 * Redirect URIs on this computer: what native apps and CLIs listen on (RFC 8252 §7.3), and the only hosts `http`
 * is allowed for. One set for the admin API's schema, registration, matching and the consent screen.
 */
export const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(["127.0.0.1", "[::1]", "localhost"]);

/** Whether `uri` is an http URI on a loopback host. */
export function isLoopbackRedirect(uri: string): boolean {
  try {
    const url = new URL(uri);
    return url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname);
  } catch {
    return false;
  }
}

/**
 * Whether `requested` is one of the client's redirect URIs: exactly (RFC 9700 §2.1), except that a native client's
 * loopback http URI matches on any port, which the app picks when it starts listening (RFC 8252 §7.3). A web client's
 * loopback URI (development) still matches exactly.
 */
export function isRegisteredRedirect(client: OAuth2ClientRow, requested: string): boolean {
  if (client.redirectUris.includes(requested)) return true;
  if (client.applicationType !== "native" || !requested.startsWith("http://")) return false;
  let asked: URL;
  try {
    asked = new URL(requested);
  } catch {
    return false;
  }
  if (!LOOPBACK_HOSTS.has(asked.hostname) || asked.username || asked.password || asked.hash) return false;
  return client.redirectUris.some((uri) => {
    const registered = new URL(uri);
    return (
      registered.protocol === "http:" &&
      registered.hostname === asked.hostname &&
      registered.pathname === asked.pathname &&
      registered.search === asked.search
    );
  });
}
