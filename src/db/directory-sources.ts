import type { DirectoryKind } from "./directory";
import { slotOfRouted } from "./routed-ids";

/**
 * Where a one-shard deployment's directory keys come from (directory-build.ts): every row the live code would
 * have claimed a key for had it run several shards (docs/scaling.md, the directory's table of kinds), read from the
 * shard, and for each kind the check that an owner still holds a value, evaluated in the statement that writes the
 * key. Ids the service minted carry their slot (routed-ids.ts) and have no key: sessions and PATs minted here are
 * left out, as the live code leaves them out.
 */

/** A key to write: `value` as the key names it, `a`/`b` its parts as the check compares them, `ref` its row. */
export interface BuildEntry {
  kind: DirectoryKind;
  value: string;
  owner: string;
  a: string;
  b?: string;
  ref: string;
}

export interface BuildSource {
  /** `SELECT t.rowid AS r, … FROM <table> t … WHERE …`: the pass appends its rowid range. */
  scan: string;
  entries(row: Record<string, unknown>, ref: string): BuildEntry[];
}

const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);
const notRouted = (id: unknown) => typeof id === "string" && slotOfRouted(id) === undefined;
/** The directory's owner of a file's keys (storage/file-shards.ts `fileOwner`), in SQL. */
const FILE_OWNER = "coalesce(f.uploaded_by_user_id, 'file:' || f.id)";

export const BUILD_SOURCES: readonly BuildSource[] = [
  {
    // A soft-deleted user's address and number are hashes, given back at the deletion: no key.
    scan: "SELECT t.rowid AS r, t.id, t.email, t.phone_number FROM users t WHERE t.deleted_at IS NULL",
    entries: (row, ref) => {
      const [owner, email, phone] = [row.id as string, text(row.email), text(row.phone_number)];
      return [
        ...(email ? [{ kind: "email" as const, value: email, owner, a: email, ref }] : []),
        ...(phone ? [{ kind: "phone" as const, value: phone, owner, a: phone, ref }] : []),
      ];
    },
  },
  {
    scan: "SELECT t.rowid AS r, t.user_id, t.provider, t.provider_user_id FROM user_providers t WHERE 1",
    entries: (row, ref) => {
      const [a, b] = [row.provider as string, row.provider_user_id as string];
      return [{ kind: "provider", value: `${a}:${b}`, owner: row.user_id as string, a, b, ref }];
    },
  },
  {
    scan: "SELECT t.rowid AS r, t.id, t.user_id, t.token_hash FROM personal_access_tokens t WHERE 1",
    entries: (row, ref) => {
      const hash = row.token_hash as string;
      return notRouted(row.id)
        ? [{ kind: "pat", value: hash, owner: row.user_id as string, a: hash, ref }]
        : [];
    },
  },
  {
    scan: "SELECT t.rowid AS r, t.id, t.user_id FROM sessions t WHERE 1",
    entries: (row, ref) => {
      const id = row.id as string;
      return notRouted(id) ? [{ kind: "session", value: id, owner: row.user_id as string, a: id, ref }] : [];
    },
  },
  {
    scan: "SELECT t.rowid AS r, t.token_hash, s.user_id FROM refresh_tokens t JOIN sessions s ON s.id = t.session_id WHERE 1",
    entries: (row, ref) => {
      const hash = row.token_hash as string;
      return [{ kind: "refresh", value: hash, owner: row.user_id as string, a: hash, ref }];
    },
  },
  {
    // Only imported tickets have keys (a minted ticket's id carries its slot); a ticket row keeps no id, so the
    // import's ledger tells them apart: the user's imported ticket is the one whose hash it records.
    scan:
      "SELECT t.rowid AS r, t.user_id, t.ticket_hash FROM tickets t WHERE EXISTS (SELECT 1 FROM import_ledger l " +
      "WHERE l.kind = 'user' AND l.id = t.user_id AND json_extract(l.parts, '$.ticketHash') = t.ticket_hash)",
    entries: (row, ref) => {
      const hash = row.ticket_hash as string;
      return [{ kind: "ticket", value: hash, owner: row.user_id as string, a: hash, ref }];
    },
  },
  {
    scan: "SELECT t.rowid AS r, t.id, t.bucket_id, t.path, t.uploaded_by_user_id FROM files t WHERE 1",
    entries: (row, ref) => {
      const [id, bucket, path] = [row.id as string, row.bucket_id as string, text(row.path)];
      const owner = (row.uploaded_by_user_id as string | null) ?? `file:${id}`;
      return [
        ...(notRouted(id) ? [{ kind: "file" as const, value: id, owner, a: id, ref }] : []),
        ...(path
          ? [{ kind: "path" as const, value: `${bucket}/${path}`, owner, a: bucket, b: path, ref }]
          : []),
      ];
    },
  },
];

/**
 * Whether the row `j` names (`j.o` the owner, `j.a`/`j.b` the value's parts) still holds the value, in SQL: each
 * value is unique in the shard (its unique index), so the owner that holds it is the only one its key may name.
 */
export function holdsValue(kind: DirectoryKind): string {
  switch (kind) {
    case "email":
      return "EXISTS (SELECT 1 FROM users u WHERE u.id = j.o AND u.email = j.a AND u.deleted_at IS NULL)";
    case "phone":
      return "EXISTS (SELECT 1 FROM users u WHERE u.id = j.o AND u.phone_number = j.a AND u.deleted_at IS NULL)";
    case "provider":
      return "EXISTS (SELECT 1 FROM user_providers p WHERE p.provider = j.a AND p.provider_user_id = j.b AND p.user_id = j.o)";
    case "pat":
      return "EXISTS (SELECT 1 FROM personal_access_tokens p WHERE p.token_hash = j.a AND p.user_id = j.o)";
    case "session":
      return "EXISTS (SELECT 1 FROM sessions s WHERE s.id = j.a AND s.user_id = j.o)";
    case "refresh":
      return "EXISTS (SELECT 1 FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id WHERE r.token_hash = j.a AND s.user_id = j.o)";
    case "ticket":
      return "EXISTS (SELECT 1 FROM tickets k WHERE k.ticket_hash = j.a AND k.user_id = j.o)";
    case "file":
      return `EXISTS (SELECT 1 FROM files f WHERE f.id = j.a AND ${FILE_OWNER} = j.o)`;
    case "path":
      return `EXISTS (SELECT 1 FROM files f WHERE f.bucket_id = j.a AND f.path = j.b AND ${FILE_OWNER} = j.o)`;
  }
}
