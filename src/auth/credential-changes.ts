import { eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { users } from "../db/schema";

/**
 * Records that the account's credentials changed here (`users.credentials_changed_at`, contract supabase.md §6): a
 * password, sign-out of all sessions, MFA, a security key, a PAT, a linked provider, the email address. An old
 * system's access token issued before it is refused (src/http/imported-tokens.ts), so the owner's remedy for a
 * token someone else holds works on those too. A statement, so callers put it in the batch that makes the change.
 */
export const credentialsChanged = (db: Db, userId: string, now: number) =>
  db.update(users).set({ credentialsChangedAt: now }).where(eq(users.id, userId));
