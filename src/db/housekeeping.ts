import { and, eq, lte, ne, sql } from "drizzle-orm";
import type { Config } from "../config";
import type { Env } from "../env";
import { createDb } from "./client";
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
  oauth2Grants,
  oauth2RefreshTokens,
  personalAccessTokens,
  providerRequests,
  providerTokenHandoffs,
  refreshTokens,
  sessions,
  tickets,
} from "./schema";

const DAY_MS = 24 * 3600 * 1000;
const DEV_RETENTION_MS = 7 * DAY_MS;
/** An upload holds its ids for the length of one request; a day later a reservation is what a crash left. */
const STALE_UPLOAD_MS = 24 * 3600 * 1000;

/**
 * A used or expired OAuth2 code stays while its pending request could still be read from KV (ten minutes, and KV
 * forgets lazily): its unique `request_id` is what keeps that request from completing twice.
 */
const CODE_RETENTION_MS = 20 * 60 * 1000;

/** Daily cron: removes what has expired, so tables hold only live rows (docs/storage-schema.md). */
export async function runHousekeeping(
  env: Env,
  config: Pick<Config, "AUTH_AUDIT_RETENTION_DAYS" | "AUTH_OAUTH2_PROVIDER_REGISTRATION_TTL">,
  now = Date.now(),
): Promise<void> {
  const db = createDb(env.DB);
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
    db.delete(providerRequests).where(lte(providerRequests.expiresAt, now)),
    db.delete(providerTokenHandoffs).where(lte(providerTokenHandoffs.expiresAt, now)),
    db.delete(consoleSessions).where(lte(consoleSessions.expiresAt, now)),
    db.delete(deviceAuthorizations).where(lte(deviceAuthorizations.expiresAt, now)),
    // Clients that registered themselves (or named a metadata document) and were never used since the TTL: gone
    // with their grants, codes and consents (cascade). An admin's clients stay until an admin deletes them.
    db
      .delete(oauth2Clients)
      .where(
        and(
          ne(oauth2Clients.registration, "admin"),
          lte(
            sql`coalesce(${oauth2Clients.lastUsedAt}, ${oauth2Clients.createdAt})`,
            now - config.AUTH_OAUTH2_PROVIDER_REGISTRATION_TTL * 1000,
          ),
        ),
      ),
    db.delete(devMailbox).where(lte(devMailbox.createdAt, now - DEV_RETENTION_MS)),
    db.delete(devSms).where(lte(devSms.createdAt, now - DEV_RETENTION_MS)),
  ]);
  // Upload reservations left by a crash (storage/upload.ts): the record, then any bytes written under it.
  const stale = await db
    .delete(files)
    .where(and(eq(files.isUploaded, false), lte(files.createdAt, now - STALE_UPLOAD_MS)))
    .returning({ objectKey: files.objectKey })
    .all();
  for (let i = 0; i < stale.length; i += 1000) {
    await env.FILES.delete(stale.slice(i, i + 1000).map((row) => row.objectKey));
  }
}
