import type { OAuth2ClientRow } from "../../db/schema";
import type { Deps } from "../../http/deps";
import { settledCache } from "../../lib/settled";
import { forgetSupportedDetailTypes } from "../authorization-details";

/**
 * Client rows, kept ten seconds in the isolate: every token, introspection and revocation request reads its client,
 * and a refresh would otherwise cost two D1 reads instead of one (the grant's). A client changed or deleted here is
 * read again at once in this isolate (`forgetOAuth2Client`), within ten seconds elsewhere; a deleted client's grants
 * are gone at once everywhere (deleted from every shard before it, src/db/client-rows.ts), so its refresh tokens fail
 * regardless.
 */
const CLIENT_TTL_MS = 10_000;
const clients = settledCache<string, OAuth2ClientRow>(CLIENT_TTL_MS);

export function cachedClient(
  deps: Deps,
  clientId: string,
  read: () => Promise<OAuth2ClientRow | undefined>,
): Promise<OAuth2ClientRow | undefined> {
  return clients.get(clientId, deps.now(), read);
}

/** After a change to a client in this isolate: the next request reads it again. */
export function forgetOAuth2Client(clientId: string): void {
  clients.delete(clientId);
  // Its authorization details types may have changed: discovery's union is read again.
  forgetSupportedDetailTypes();
}
