import { lte } from "drizzle-orm";
import { getConfig } from "../config";
import { createDb } from "../db/client";
import {
  authorizationCodes,
  devMailbox,
  devSms,
  mfaTickets,
  personalAccessTokens,
  refreshTokens,
  sessions,
  tickets,
} from "../db/schema";
import type { Env } from "../env";

const DEV_RETENTION_MS = 7 * 24 * 3600 * 1000;

/** Daily cron: removes what has expired, so tables hold only live rows (docs/storage-schema.md). */
export async function runHousekeeping(env: Env, now = Date.now()): Promise<void> {
  getConfig(env);
  const db = createDb(env.DB);
  await db.batch([
    db.delete(refreshTokens).where(lte(refreshTokens.expiresAt, now)),
    db.delete(sessions).where(lte(sessions.expiresAt, now)),
    db.delete(tickets).where(lte(tickets.expiresAt, now)),
    db.delete(personalAccessTokens).where(lte(personalAccessTokens.expiresAt, now)),
    db.delete(authorizationCodes).where(lte(authorizationCodes.expiresAt, now)),
    db.delete(mfaTickets).where(lte(mfaTickets.expiresAt, now)),
    db.delete(devMailbox).where(lte(devMailbox.createdAt, now - DEV_RETENTION_MS)),
    db.delete(devSms).where(lte(devSms.createdAt, now - DEV_RETENTION_MS)),
  ]);
}
