import { sql } from "drizzle-orm";
import { oauth2Clients } from "../../db/schema";
import type { Deps } from "../../http/deps";

/**
 * RFC 9396 §10.1 `authorization_details_types_supported`: the types some client may use. Types are set per client
 * (by the admin), so this is their union, read from the clients that have any (migration 0032's partial index) and
 * kept a minute in the isolate: discovery is fetched often and changes rarely. A change made in this isolate shows
 * at once (`forgetSupportedDetailTypes`, from every client write), elsewhere within the minute.
 */
const TTL_MS = 60_000;
/** More clients with types than this and the list is cut: discovery says what is typical, the client its own. */
const MAX_CLIENTS = 1000;

let memo: { types: string[]; at: number } | undefined;

export async function supportedDetailTypes(deps: Deps): Promise<string[]> {
  const now = deps.now();
  if (memo && now - memo.at < TTL_MS) return memo.types;
  const rows = await deps.db
    .select({ types: oauth2Clients.authorizationDetailsTypes })
    .from(oauth2Clients)
    .where(sql`${oauth2Clients.authorizationDetailsTypes} <> '[]'`)
    .limit(MAX_CLIENTS)
    .all();
  const types = [...new Set(rows.flatMap((row) => row.types.map((entry) => entry.type)))].sort();
  memo = { types, at: now };
  return types;
}

export function forgetSupportedDetailTypes(): void {
  memo = undefined;
}
