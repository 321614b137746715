import { eq, inArray } from "drizzle-orm";
import {
  deviceAuthorizations,
  oauth2Clients,
  oauth2Codes,
  oauth2Consents,
  oauth2Grants,
  orgMembers,
  providerTokenHandoffs,
  scimGroupMembers,
  vaultConsents,
} from "./schema";
import { eachShard, type Shards } from "./shards";

/**
 * What foreign keys cascaded before users and OAuth2 clients could live in different databases (migration 0022):
 * a client is in the home database, the grants, codes and consents its users gave it are in each user's shard; a
 * user is in their shard, the clients they registered, the device authorizations they approved and the provider
 * tokens waiting for them are home rows. These deletions keep what the cascades kept.
 */

/** D1 binds at most 100 values a statement. */
const IDS_PER_STATEMENT = 90;

/**
 * A client's grants (and, by their own cascade, their legacy refresh tokens), codes and consents, from every shard
 * (one batch a shard, six shards at most at once): its access tokens turn inactive at introspection and userinfo,
 * its refresh tokens fail, a new authorization asks for consent again. Before the client's row goes, so that a
 * deletion that fails half-way leaves the client in place, and trying again finishes it.
 */
export async function removeClientRows(shards: Shards, clientIds: readonly string[]): Promise<void> {
  for (let start = 0; start < clientIds.length; start += IDS_PER_STATEMENT) {
    const ids = clientIds.slice(start, start + IDS_PER_STATEMENT);
    await eachShard(shards, (db) =>
      db.batch([
        db.delete(oauth2Grants).where(inArray(oauth2Grants.clientId, ids)),
        db.delete(oauth2Codes).where(inArray(oauth2Codes.clientId, ids)),
        db.delete(oauth2Consents).where(inArray(oauth2Consents.clientId, ids)),
        // The token vault's consents (operators.md §3): a deleted client's id, reused never, lets nothing.
        db.delete(vaultConsents).where(inArray(vaultConsents.clientId, ids)),
      ]),
    );
  }
}

/**
 * The home rows of a removed user (after their row left their shard): the clients they registered (with those
 * clients' rows in every shard), the device authorizations they approved, the provider tokens waiting for them,
 * their organization memberships.
 */
export async function removeHomeRowsOfUser(shards: Shards, userId: string): Promise<void> {
  const home = shards.home;
  const registered = await home
    .select({ clientId: oauth2Clients.clientId })
    .from(oauth2Clients)
    .where(eq(oauth2Clients.registeredByUserId, userId))
    .all();
  await removeClientRows(
    shards,
    registered.map((row) => row.clientId),
  );
  await home.batch([
    home.delete(oauth2Clients).where(eq(oauth2Clients.registeredByUserId, userId)),
    home.delete(deviceAuthorizations).where(eq(deviceAuthorizations.userId, userId)),
    home.delete(providerTokenHandoffs).where(eq(providerTokenHandoffs.userId, userId)),
    // Memberships and SCIM group memberships (organizations.md): the org stays, with its other members.
    home.delete(orgMembers).where(eq(orgMembers.userId, userId)),
    home.delete(scimGroupMembers).where(eq(scimGroupMembers.userId, userId)),
  ]);
}
