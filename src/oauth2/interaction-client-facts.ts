import type { OAuth2ClientRow } from "../db/schema";
import { imageOrigin } from "../lib/brand";
import { isLoopbackRedirect } from "./clients";

/** What the consent screen says about who the client is, beyond the name it gave itself (interaction contract). */
export interface ClientFacts {
  /** The host of a client metadata document: the name is only as good as this domain. */
  documentHost?: string;
  /** Where an unreviewed client's request sends the browser (and the code): a host, or an app's scheme. */
  redirectHost?: string;
  /** Registered by itself (open registration, a metadata document): nobody here reviewed it. */
  unreviewed: boolean;
  /** Every redirect URI is on this computer: an app running locally, which anyone can write and start. */
  loopbackOnly: boolean;
  /** The client's logo, only for a client an admin made (its page's CSP allows this image's origin). */
  logoUri?: string;
}

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
