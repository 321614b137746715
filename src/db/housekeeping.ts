import { and, eq, inArray, lte, ne, sql } from "drizzle-orm";
import type { Config } from "../config";
import type { Env } from "../env";
import type { Db } from "./client";
import { releaseEntries } from "./directory";
import {
  auditEvents,
  consoleSessions,
  deviceAuthorizations,
  devMailbox,
  devSms,
  files,
  linkExchangeCodes,
  mfaTickets,
  oauth2Clients,
  oauth2Codes,
  oauth2Consents,
  oauth2Grants,
  oauth2PushedRequests,
  oauth2RefreshTokens,
  orgInvitations,
  personalAccessTokens,
  providerRequests,
  providerTokenHandoffs,
  refreshTokens,
  sessions,
  ssoAssertionIds,
  ssoRequests,
  tickets,
} from "./schema";
import { eachShard, type Shards, shardsOf } from "./shards";

const DAY_MS = 24 * 3600 * 1000;
const DEV_RETENTION_MS = 7 * DAY_MS;
/** An upload holds its ids for the length of one request; a day later a reservation is what a crash left. */
const STALE_UPLOAD_MS = 24 * 3600 * 1000;

/**
 * A used or expired OAuth2 code stays while its pending request could still be read from KV (ten minutes, and KV
 * forgets lazily): its unique `request_id` is what keeps that request from completing twice.
 */
const CODE_RETENTION_MS = 20 * 60 * 1000;

/**
 * Daily cron: removes what has expired, so tables hold only live rows (docs/storage-schema.md). With several shards
 * (shards.ts) the user-keyed tables are swept in every shard, the global ones in the home database.
 */
export async function runHousekeeping(
  env: Env,
  config: Pick<
    Config,
    "AUTH_AUDIT_RETENTION_DAYS" | "AUTH_OAUTH2_PROVIDER_REGISTRATION_TTL" | "AUTH_D1_SHARDS"
  >,
  now = Date.now(),
): Promise<void> {
  const shards = shardsOf(env, config.AUTH_D1_SHARDS);
  await sweepGlobal(shards, config, now);
  await eachShard(shards, (db) => sweepShard(env, shards, db, config, now));
}

/** The home database's own tables (buckets, clients, provider requests, console sessions, …). */
async function sweepGlobal(
  shards: Shards,
  config: Pick<Config, "AUTH_OAUTH2_PROVIDER_REGISTRATION_TTL">,
  now: number,
): Promise<void> {
  const db = shards.home;
  await db.batch([
    db.delete(providerRequests).where(lte(providerRequests.expiresAt, now)),
    db.delete(providerTokenHandoffs).where(lte(providerTokenHandoffs.expiresAt, now)),
    db.delete(consoleSessions).where(lte(consoleSessions.expiresAt, now)),
    db.delete(deviceAuthorizations).where(lte(deviceAuthorizations.expiresAt, now)),
    // Pushed authorization requests (RFC 9126) live a minute; a used one is gone already, these expired unused.
    db.delete(oauth2PushedRequests).where(lte(oauth2PushedRequests.expiresAt, now)),
    db.delete(devMailbox).where(lte(devMailbox.createdAt, now - DEV_RETENTION_MS)),
    db.delete(devSms).where(lte(devSms.createdAt, now - DEV_RETENTION_MS)),
    db.delete(orgInvitations).where(lte(orgInvitations.expiresAt, now)),
    db.delete(ssoRequests).where(lte(ssoRequests.expiresAt, now)),
    // An assertion id is remembered until its assertion expires: a replay after that fails its time check anyway.
    db.delete(ssoAssertionIds).where(lte(ssoAssertionIds.expiresAt, now)),
  ]);
  await sweepUnusedClients(shards, config, now);
}

/**
 * Clients that registered themselves (or named a metadata document) and were never used since the TTL: gone with
 * their grants, codes and consents, which live in their users' shards (no foreign key reaches them there: migration
 * 0022), so those go first, in every shard, then the clients. An admin's clients stay until an admin deletes them.
 */
async function sweepUnusedClients(
  shards: Shards,
  config: Pick<Config, "AUTH_OAUTH2_PROVIDER_REGISTRATION_TTL">,
  now: number,
): Promise<void> {
  const unused = and(
    ne(oauth2Clients.registration, "admin"),
    lte(
      sql`coalesce(${oauth2Clients.lastUsedAt}, ${oauth2Clients.createdAt})`,
      now - config.AUTH_OAUTH2_PROVIDER_REGISTRATION_TTL * 1000,
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

/** One shard's user-keyed tables (the home database is one too): expired tokens, old audit events, dead uploads. */
async function sweepShard(
  env: Env,
  shards: Shards,
  db: Db,
  config: Pick<Config, "AUTH_AUDIT_RETENTION_DAYS">,
  now: number,
): Promise<void> {
  await db.batch([
    db.delete(auditEvents).where(lte(auditEvents.at, now - config.AUTH_AUDIT_RETENTION_DAYS * DAY_MS)),
    db.delete(refreshTokens).where(lte(refreshTokens.expiresAt, now)),
    db.delete(sessions).where(lte(sessions.expiresAt, now)),
    db.delete(tickets).where(lte(tickets.expiresAt, now)),
    db.delete(personalAccessTokens).where(lte(personalAccessTokens.expiresAt, now)),
    db.delete(linkExchangeCodes).where(lte(linkExchangeCodes.expiresAt, now)),
    db.delete(mfaTickets).where(lte(mfaTickets.expiresAt, now)),
    db.delete(oauth2RefreshTokens).where(lte(oauth2RefreshTokens.expiresAt, now)),
    db.delete(oauth2Grants).where(lte(oauth2Grants.expiresAt, now)),
    db.delete(oauth2Codes).where(lte(oauth2Codes.expiresAt, now - CODE_RETENTION_MS)),
  ]);
  // Upload reservations left by a crash (storage/upload.ts): the record, then its id's directory entry (a
  // client-chosen id's, with several shards: the owner is its uploader, else the file itself), then any bytes.
  const stale = await db
    .delete(files)
    .where(and(eq(files.isUploaded, false), lte(files.createdAt, now - STALE_UPLOAD_MS)))
    .returning({ id: files.id, objectKey: files.objectKey, uploadedByUserId: files.uploadedByUserId })
    .all();
  for (const row of stale) {
    await releaseEntries(shards, row.uploadedByUserId ?? `file:${row.id}`, [{ kind: "file", value: row.id }]);
  }
  for (let i = 0; i < stale.length; i += 1000) {
    await env.FILES.delete(stale.slice(i, i + 1000).map((row) => row.objectKey));
  }
}
