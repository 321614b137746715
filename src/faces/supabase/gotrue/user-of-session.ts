import { sql } from "drizzle-orm";
import { type FactorFactsRow, type liveSession, liveSessionBy, liveSessionRead } from "../../../auth";
import { mfaFactors, userProviders, users } from "../../../db/schema";
import type { Deps } from "../../../http/deps";
import type { LinkedIdentity } from "../../../providers";
import { type UserExtras, userExtrasFrom } from "./user-reads";

/**
 * `getUser`'s one lookup (issue 43, "Speed": the face adds no query over the Nhost face's session check), and the
 * refresh grant's (renewSession's `alongside`): the live session and its user, with the user's identities and factors
 * as JSON arrays in the same row. Whether a TOTP factor still holds the user's current secret is compared in SQL (as
 * factor-reads.ts does), so no secret leaves the database.
 */
export const liveUserExtrasRead = liveSessionRead({
  identitiesJson:
    sql<string>`(SELECT json_group_array(json_array(${userProviders.id}, ${userProviders.provider}, ${userProviders.providerUserId}, ${userProviders.createdAt})) FROM ${userProviders} WHERE ${userProviders.userId} = ${users.id})`
      .mapWith(String)
      .as("live_identities"),
  factorsJson:
    sql<string>`(SELECT json_group_array(json_array(${mfaFactors.id}, ${mfaFactors.factorType}, ${mfaFactors.friendlyName}, ${mfaFactors.status}, ${mfaFactors.phone}, ${mfaFactors.createdAt}, ${mfaFactors.updatedAt}, ${mfaFactors.factorType} <> 'totp' OR ${mfaFactors.secret} IS ${users.totpSecret})) FROM ${mfaFactors} WHERE ${mfaFactors.userId} = ${users.id})`
      .mapWith(String)
      .as("live_factors"),
  totpEnabledAt: sql<number | null>`${users.totpEnabledAt}`.mapWith(Number).as("live_totp_enabled_at"),
  hasTotpSecret: sql<boolean>`${users.totpSecret} IS NOT NULL`.mapWith(Boolean).as("live_has_totp"),
});

type SessionUserRow = NonNullable<Awaited<ReturnType<typeof liveSession>>>;

type Row = SessionUserRow & {
  identitiesJson: unknown;
  factorsJson: unknown;
  totpEnabledAt: unknown;
  hasTotpSecret: unknown;
};

const arrays = (json: unknown) => JSON.parse(String(json ?? "[]")) as unknown[][];

/** The session (if live) and its user's identities and factors, from one statement. */
export async function liveUserWithExtras(
  deps: Deps,
  sessionId: string,
): Promise<{ live: SessionUserRow | undefined; extras?: () => Promise<UserExtras | undefined> }> {
  const row = await liveSessionBy(deps, sessionId, liveUserExtrasRead);
  if (!row) return { live: undefined };
  // Shaped only once the caller has found the session the token's (a repair of a stale factor list may write).
  return { live: row, extras: () => extrasOfLiveRow(deps, row) };
}

/** The user's identities and factors from a row of `liveUserExtrasRead`. */
export function extrasOfLiveRow(deps: Deps, found: SessionUserRow): Promise<UserExtras | undefined> {
  const row = found as Row;
  const identities = arrays(row.identitiesJson)
    .map(([id, provider, providerUserId, createdAt]) => ({
      userId: row.id,
      id: String(id),
      provider: String(provider),
      providerUserId: String(providerUserId),
      createdAt: Number(createdAt),
    }))
    // Oldest first, as identitiesOf lists them.
    .sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id)) satisfies LinkedIdentity[];
  const user = {
    userId: row.id,
    appMetadata: row.appMetadata ?? null,
    activeMfaType: row.activeMfaType ?? null,
    totpEnabledAt: row.totpEnabledAt === null ? null : Number(row.totpEnabledAt),
    hasTotpSecret: Boolean(row.hasTotpSecret),
  };
  const factors = arrays(row.factorsJson).map(
    ([id, factorType, friendlyName, status, phone, createdAt, updatedAt, current]): FactorFactsRow => ({
      ...user,
      id: String(id),
      factorType: String(factorType),
      friendlyName: friendlyName === null ? null : String(friendlyName),
      status: String(status),
      phone: phone === null ? null : String(phone),
      createdAt: Number(createdAt),
      updatedAt: Number(updatedAt),
      current: Boolean(current),
    }),
  );
  // A user without factors is one row of nulls, as the factor facts' left join reads it.
  const facts: FactorFactsRow[] = factors.length
    ? factors
    : [
        {
          ...user,
          id: null,
          factorType: null,
          friendlyName: null,
          status: null,
          phone: null,
          createdAt: null,
          updatedAt: null,
          current: true,
        },
      ];
  return userExtrasFrom(deps, row.id, identities, facts);
}
