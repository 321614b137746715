import { slotOfRouted } from "./routed-ids";
import { slotOfUser } from "./shards";

/**
 * What a slot move carries (slot-moves.ts): every table whose rows live in the shard of a slot, with how a row's
 * slot is found, in the order a copy inserts them (a row after the rows its foreign keys name; removal runs the
 * other way). `owner` is a SQL expression over the row (alias `t`, joined to `join` when the owner is a parent's):
 * the user id, the directory key or the file's owner. `HOME_TABLES` is everything else: rows that stay where they
 * are. test/db/slot-moves.test.ts proves the two lists together name every table the migrations create, so a new
 * table must be placed in one of them.
 */

export type SlotRule = "user" | "key" | "file";

export interface MovedTable {
  table: string;
  owner: string;
  join?: string;
  /** Rows of the table that stay whatever their owner (a SQL condition over `t`). */
  stays?: string;
  rule: SlotRule;
}

export const MOVED_TABLES: readonly MovedTable[] = [
  { table: "users", owner: "t.id", rule: "user" },
  // A user's counter travels with the user, so its events stay numbered in order. Other subjects' (a file's, anything
  // global at home) stay: removal runs before the users go, while the condition can still see them.
  {
    table: "event_sequences",
    owner: "t.subject",
    stays: "NOT EXISTS (SELECT 1 FROM users u WHERE u.id = t.subject)",
    rule: "user",
  },
  { table: "sessions", owner: "t.user_id", rule: "user" },
  {
    table: "refresh_tokens",
    owner: "s.user_id",
    join: "JOIN sessions s ON s.id = t.session_id",
    rule: "user",
  },
  { table: "tickets", owner: "t.user_id", rule: "user" },
  { table: "authorization_codes", owner: "t.user_id", rule: "user" },
  { table: "personal_access_tokens", owner: "t.user_id", rule: "user" },
  { table: "mfa_tickets", owner: "t.user_id", rule: "user" },
  { table: "mfa_factors", owner: "t.user_id", rule: "user" },
  { table: "mfa_recovery_codes", owner: "t.user_id", rule: "user" },
  { table: "security_keys", owner: "t.user_id", rule: "user" },
  { table: "user_devices", owner: "t.user_id", rule: "user" },
  { table: "user_providers", owner: "t.user_id", rule: "user" },
  { table: "oauth2_grants", owner: "t.user_id", rule: "user" },
  {
    table: "oauth2_refresh_tokens",
    owner: "g.user_id",
    join: "JOIN oauth2_grants g ON g.id = t.grant_id",
    rule: "user",
  },
  { table: "oauth2_codes", owner: "t.user_id", rule: "user" },
  { table: "oauth2_consents", owner: "t.user_id", rule: "user" },
  { table: "vault_connections", owner: "t.user_id", rule: "user" },
  { table: "vault_consents", owner: "t.user_id", rule: "user" },
  // A file's record: its minted id's slot, else its owner's (the uploader, or the pseudo-user `file:<id>`).
  { table: "files", owner: "COALESCE(t.uploaded_by_user_id, 'file:' || t.id)", rule: "file" },
  // Audit events without a user, and every failed sign-in, are home rows (counted per address in one place).
  { table: "audit_events", owner: "t.user_id", stays: "t.type = 'signin.failure'", rule: "user" },
  { table: "import_ledger", owner: "t.owner", rule: "user" },
  { table: "directory", owner: "t.key", rule: "key" },
];

/**
 * Rows that stay in their database: the global tables (home only), the outbox (drained where it was written), the
 * mutes, and the copies of bucket rows a shard keeps for its files' foreign key (copied, never removed, by a move).
 */
export const HOME_TABLES: readonly string[] = [
  "authz_documents",
  "authz_relationships",
  "buckets",
  "console_sessions",
  "dead_letters",
  "dev_mailbox",
  "dev_sms",
  "device_authorizations",
  "event_mutes",
  "event_outbox",
  "impersonations",
  "oauth2_clients",
  "oauth2_pushed_requests",
  "org_domains",
  "org_invitations",
  "org_members",
  "org_session_hints",
  "organizations",
  "provider_requests",
  "provider_token_handoffs",
  "resumable_uploads",
  "scim_group_members",
  "scim_groups",
  "scim_tokens",
  "service_settings",
  "setup_links",
  "signing_keys",
  "sso_assertion_ids",
  "sso_connections",
  "sso_requests",
  "webhook_deliveries",
  "webhook_endpoints",
];

/**
 * The slot of a row from its `owner` (and, for a file, its id). Undefined for a row that belongs to no slot
 * (an audit event or a ledger row without a user): it stays where it is.
 */
export function slotOfRow(rule: SlotRule, owner: string | null, id: string | null): number | undefined {
  if (owner === null) return undefined;
  switch (rule) {
    case "key":
      return Number.parseInt(owner.slice(0, 3), 16);
    case "file":
      return (id === null ? undefined : slotOfRouted(id)) ?? slotOfUser(owner);
    default:
      return slotOfUser(owner);
  }
}
