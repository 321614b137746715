import type { OAuth2ClientRow } from "../../db/schema";
import type { ClientFacts } from "./render-consent";

const LOOPBACK = new Set(["127.0.0.1", "[::1]", "localhost"]);

function isLoopback(uri: string): boolean {
  try {
    const url = new URL(uri);
    return url.protocol === "http:" && LOOPBACK.has(url.hostname);
  } catch {
    return false;
  }
}

/**
 * What the consent screen tells about a client beyond its self-chosen name (contract §3.6): the host that publishes
 * its metadata document, whether anyone here reviewed it, and whether an unreviewed client only ever redirects to
 * this computer.
 */
export function clientFacts(client: OAuth2ClientRow): ClientFacts {
  const unreviewed = client.registration !== "admin";
  return {
    documentHost: client.registration === "metadata-document" ? new URL(client.clientId).host : undefined,
    unreviewed,
    // An admin chose this client's redirect URIs; for any other, a local app can claim any name it likes.
    loopbackOnly: unreviewed && client.redirectUris.length > 0 && client.redirectUris.every(isLoopback),
  };
}
