import { and, inArray, lte, ne, sql } from "drizzle-orm";
import type { Config } from "../config";
import {
  deviceAuthorizations,
  oauth2Clients,
  oauth2Codes,
  oauth2Consents,
  oauth2Grants,
  oauth2PushedRequests,
  oauth2RefreshTokens,
} from "../db/schema";
import { eachShard, type Shards } from "../db/shards";
import type { Deps } from "../http/deps";

/**
 * A used or expired OAuth2 code stays while its pending request could still be read from KV (ten minutes, and KV
 * forgets lazily): its unique `request_id` is what keeps that request from completing twice.
 */
const CODE_RETENTION_MS = 20 * 60 * 1000;

/**
 * The daily sweep of the authorization server: expired device authorizations and pushed requests (home database),
 * clients registered and never used since the TTL, and in every shard expired refresh tokens, grants and codes.
 */
export async function sweepOAuth2(
  { shards, config }: Pick<Deps, "shards" | "config">,
  now: number,
): Promise<void> {
  const home = shards.home;
  await home.batch([
    home.delete(deviceAuthorizations).where(lte(deviceAuthorizations.expiresAt, now)),
    // Pushed authorization requests (RFC 9126) live a minute; a used one is gone already, these expired unused.
    home.delete(oauth2PushedRequests).where(lte(oauth2PushedRequests.expiresAt, now)),
  ]);
  await sweepUnusedClients(shards, config, now);
  await eachShard(shards, (db) =>
    db.batch([
      db.delete(oauth2RefreshTokens).where(lte(oauth2RefreshTokens.expiresAt, now)),
      db.delete(oauth2Grants).where(lte(oauth2Grants.expiresAt, now)),
      db.delete(oauth2Codes).where(lte(oauth2Codes.expiresAt, now - CODE_RETENTION_MS)),
    ]),
  );
}

/**
 * Clients that registered themselves (or named a metadata document) and were never used since the TTL: gone with
 * their grants, codes and consents, which live in their users' shards (no foreign key reaches them there: migration
 * 0022), so those go first, in every shard, then the clients. An admin's clients stay until an admin deletes them.
 */
async function sweepUnusedClients(
  shards: Shards,
  config: Pick<Config, "oauth2">,
  now: number,
): Promise<void> {
  const unused = and(
    ne(oauth2Clients.registration, "admin"),
    lte(
      sql`coalesce(${oauth2Clients.lastUsedAt}, ${oauth2Clients.createdAt})`,
      now - config.oauth2.registrationTtl * 1000,
    ),
  );
  const doomed = (
    await shards.home.select({ id: oauth2Clients.clientId }).from(oauth2Clients).where(unused).all()
  ).map((row) => row.id);
  // D1 binds at most 100 parameters a statement.
  for (let i = 0; i < doomed.length; i += 90) {
    const ids = doomed.slice(i, i + 90);
    await eachShard(shards, (db) =>
      db.batch([
        db.delete(oauth2Grants).where(inArray(oauth2Grants.clientId, ids)),
        db.delete(oauth2Codes).where(inArray(oauth2Codes.clientId, ids)),
        db.delete(oauth2Consents).where(inArray(oauth2Consents.clientId, ids)),
      ]),
    );
    // Still unused: one used meanwhile keeps what it has left.
    await shards.home
      .delete(oauth2Clients)
      .where(and(inArray(oauth2Clients.clientId, ids), unused))
      .run();
  }
}
