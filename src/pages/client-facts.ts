import type { OAuth2ClientRow } from "../db/schema";
import { imageOrigin } from "../lib/brand";
import { isLoopbackRedirect } from "../oauth2";
import type { ClientFacts } from "./render-consent";

/** Where a redirect URI sends the browser, as a person can judge it: its host, or an app's own scheme. */
function destinationOf(redirectUri: string): string | undefined {
  try {
    const url = new URL(redirectUri);
    return url.host || url.protocol;
  } catch {
    return undefined;
  }
}

/**
 * What the consent screen tells about a client beyond its self-chosen name (contract §3.6): the host that publishes
 * its metadata document, whether anyone here reviewed it, and whether an unreviewed client only ever redirects to
 * this computer. For an unreviewed client, also where this request sends the browser back to: its name is its own
 * choice (a document's host can be any site that serves JSON), the destination is where the code goes.
 */
export function clientFacts(client: OAuth2ClientRow, redirectUri?: string): ClientFacts {
  const unreviewed = client.registration !== "admin";
  return {
    documentHost: client.registration === "metadata-document" ? new URL(client.clientId).host : undefined,
    redirectHost: unreviewed && redirectUri ? destinationOf(redirectUri) : undefined,
    unreviewed,
    // A logo is a claim of identity as strong as a name: shown only when an admin made the client and chose it. A
    // self-registered client's logo could be any brand's (contract §13).
    logoUri: !unreviewed && client.logoUri && imageOrigin(client.logoUri) ? client.logoUri : undefined,
    // An admin chose this client's redirect URIs; for any other, a local app can claim any name it likes.
    loopbackOnly:
      unreviewed && client.redirectUris.length > 0 && client.redirectUris.every(isLoopbackRedirect),
  };
}
