import type { DirectoryEntry } from "../db/directory";
import { slotOfRouted } from "../db/routed-ids";
import type { ImportedParts } from "../db/schema";
import type { CheckedUser } from "./user-checks";
import type { Here } from "./what-is-here";
import type { RowReason } from "./wire";

/**
 * The directory keys of an imported user (src/db/directory.ts), with several shards: what finds the user's shard from
 * something other than its id. Its email and number, its identities, its PATs' and refresh tokens' hashes, its
 * sessions (Nhost's ids carry no slot), its pending ticket. Claimed before the user's batch, given back if the batch
 * did not happen; once written, the email, number and identities the run removed are given back too (another user
 * may want them). A token's, session's or ticket's key outlives its row harmlessly (random, never anyone else's):
 * such keys go with the user (`releaseUser`).
 */

/** A token of the ledger (`regular:<session id>` or `pat:<id>`, by hash) as its keys. */
function tokenEntries(hash: string, ref: string): DirectoryEntry[] {
  const [kind, id] = ref.split(":") as [string, string];
  if (kind === "pat") return [{ kind: "pat", value: hash }];
  return [
    { kind: "refresh", value: hash },
    // A session the service minted names its shard itself; Nhost's do not.
    ...(slotOfRouted(id) === undefined ? [{ kind: "session" as const, value: id }] : []),
  ];
}

const identity = (provider: string, providerUserId: string): DirectoryEntry => ({
  kind: "provider",
  value: `${provider}:${providerUserId}`,
});

const contact = (row: { email: string | null; phoneNumber: string | null }): DirectoryEntry[] => [
  ...(row.email ? [{ kind: "email" as const, value: row.email }] : []),
  ...(row.phoneNumber ? [{ kind: "phone" as const, value: row.phoneNumber }] : []),
];

export interface UserEntries {
  /** What the write puts in place: claimed before it. */
  claims: DirectoryEntry[];
  /** Of those, what the user did not hold before: given back if the write does not happen. */
  fresh: DirectoryEntry[];
  /** What the write takes away (an email changed, an identity Nhost unlinked): given back once it happened. */
  dropped: DirectoryEntry[];
}

const same = (a: DirectoryEntry, b: DirectoryEntry) => a.kind === b.kind && a.value === b.value;
const without = (list: DirectoryEntry[], other: DirectoryEntry[]) =>
  list.filter((entry) => !other.some((o) => same(o, entry)));

/**
 * The keys of one user's write: `tokens` is what the user's tokens are after it (hash → ref), `rowWritten` whether
 * its row (email, number) is written (not when the row changed here since the last run: it stays as it is).
 */
export function userEntries(
  user: CheckedUser,
  previous: ImportedParts,
  here: Here,
  tokens: Record<string, string>,
  rowWritten: boolean,
): UserEntries {
  const existing = here.usersById.get(user.id);
  const identities = here.identitiesOf.get(user.id) ?? [];
  const incoming = user.providers.map((p) => identity(p.provider, p.providerUserId));
  const claims = [
    ...(rowWritten ? contact(user.row) : []),
    ...incoming,
    ...Object.entries(tokens).flatMap(([hash, ref]) => tokenEntries(hash, ref)),
    ...(user.ticket ? [{ kind: "ticket" as const, value: user.ticket.hash }] : []),
  ];
  const held = [
    ...(existing ? contact(existing) : []),
    ...identities.map((i) => identity(i.provider, i.providerUserId)),
    ...Object.entries(previous.tokens).flatMap(([hash, ref]) => tokenEntries(hash, ref)),
    ...(previous.ticketHash ? [{ kind: "ticket" as const, value: previous.ticketHash }] : []),
  ];
  const unlinked = identities
    .filter((i) => previous.providers.includes(i.id) && !user.providers.some((p) => p.id === i.id))
    .map((i) => identity(i.provider, i.providerUserId));
  const dropped = [...(rowWritten && existing ? contact(existing) : []), ...unlinked];
  return { claims, fresh: without(claims, held), dropped: without(dropped, claims) };
}

/** The reason a user is skipped when another user holds one of its keys (found by the claim, after the checks). */
export function heldByAnother(user: CheckedUser, entry: DirectoryEntry): RowReason {
  switch (entry.kind) {
    case "email":
      return { table: "auth.users", id: user.id, reason: `email ${entry.value} belongs to another user` };
    case "phone":
      return {
        table: "auth.users",
        id: user.id,
        reason: `phone number ${entry.value} belongs to another user`,
      };
    case "provider": {
      const linked = user.providers.find((p) => `${p.provider}:${p.providerUserId}` === entry.value);
      return {
        table: "auth.user_providers",
        id: linked?.id ?? user.id,
        reason: "identity is linked to another user",
      };
    }
    default:
      return {
        table: entry.kind === "ticket" ? "auth.users" : "auth.refresh_tokens",
        id: user.id,
        reason: `its ${entry.kind} belongs to another user`,
      };
  }
}
