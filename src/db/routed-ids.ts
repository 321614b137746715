import { type Shards, SLOTS, slotOfUser } from "./shards";

/**
 * Ids that say where their row lives (docs/scaling.md, "Past one D1 database"). An id the service mints for a row
 * of a user's (a session, a grant, a ticket, a code, a file) carries the user's slot in its first three hex digits,
 * so a request that arrives with only the id (a refresh token's family, a mailed link, a download) reaches the right
 * shard without a lookup. It is a UUID of version 8 ("custom", RFC 9562 §5.8): the version tells it from the random
 * version-4 ids of rows imported from Nhost or chosen by a client, which the directory finds instead. 110 random bits
 * remain, more than enough for a bearer secret (OWASP asks for 64).
 */

const ROUTED = /^([0-9a-f]{3})[0-9a-f]{5}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/** A fresh version-8 UUID whose first three hex digits are `slot`. */
export function routedUuid(slot: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[0] = slot >> 4;
  bytes[1] = ((slot & 0x0f) << 4) | (bytes[1]! & 0x0f);
  bytes[6] = 0x80 | (bytes[6]! & 0x0f);
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A new id for a row of `userId`'s: it routes to the user's shard. */
export function idForUser(userId: string): string {
  return routedUuid(slotOfUser(userId));
}

/** The slot an id minted by `routedUuid` carries, or undefined for any other id. */
export function slotOfRouted(id: string): number | undefined {
  const match = ROUTED.exec(id);
  if (!match) return undefined;
  const slot = Number.parseInt(match[1]!, 16);
  return slot < SLOTS ? slot : undefined;
}

/**
 * The shard an id names: its slot's for a routed id; the home database when there is one shard. Undefined when the
 * id does not say (an imported or client-chosen id with several shards): ask the directory (directory.ts).
 */
export function shardOfRouted(shards: Shards, id: string) {
  if (shards.count === 1) return shards.home;
  const slot = slotOfRouted(id);
  return slot === undefined ? undefined : shards.ofSlot(slot);
}
