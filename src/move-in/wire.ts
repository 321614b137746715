import { z } from "zod";
import { IMPORT_SYSTEMS } from "../db/schema";
import { IMPORTED_HASHERS } from "../lib/imported-hashes";
import { metadataSchema } from "../lib/json-metadata";

/**
 * The import's wire (`POST /admin/import/nhost/…`, written by `npm run admin -- import-nhost`): Nhost's rows as the
 * command reads them from Postgres, one user with everything of theirs per bundle. The shapes are lenient where Nhost's
 * columns are (any string in a text column); what cannot be imported is found by the checks in user-checks.ts and
 * reported per row, so one bad user never fails the batch it came in.
 */

const time = z.iso.datetime({ offset: true });
const uuid = z
  .string()
  .regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/);
/** Text columns: bounded, so a hostile file can't make one row hold megabytes. */
const text = (max: number) => z.string().max(max);
const json = z.record(z.string(), z.unknown());
/**
 * The system a run imports from, on its users, its ledger page and its removals (the ledger's `system`): absent, the
 * Nhost import's, which sent none before other systems came.
 */
const system = z.enum(IMPORT_SYSTEMS).default("nhost");

export const providerRowSchema = z.object({
  id: uuid,
  providerId: text(100),
  providerUserId: text(500),
  createdAt: time.optional(),
  updatedAt: time.optional(),
});

export const securityKeyRowSchema = z.object({
  id: uuid,
  credentialId: text(2048),
  publicKey: text(4096),
  counter: z
    .number()
    .int()
    .min(0)
    .max(2 ** 53 - 1),
  transports: text(255).nullable(),
  nickname: text(255).nullable(),
});

export const tokenRowSchema = z.object({
  id: uuid,
  createdAt: time,
  expiresAt: time,
  metadata: json.nullable(),
  type: z.enum(["regular", "pat"]),
  /** As Nhost's column holds it: `\x` and the lower-case hex SHA-256 of the token's text. */
  hash: text(200),
});

/**
 * A `webauthn` factor's key as GoTrue's `web_authn_credential` holds it, in the core's terms (src/auth/webauthn's
 * `FactorKey`): base64url credential id and COSE public key, the signature counter, the transports. Nothing secret.
 */
export const factorKeySchema = z.object({
  credentialId: text(2048),
  publicKey: text(4096),
  counter: z
    .number()
    .int()
    .min(0)
    .max(2 ** 53 - 1),
  transports: z.array(text(50)).max(10),
});

/**
 * A second factor of a system that keeps a list of them (Supabase's `auth.mfa_factors`): its id and name carried so
 * that an app holding the factor's id still finds it. A TOTP factor's secret travels as the bundle's `totpSecret`
 * (the core holds one TOTP secret per user); a phone factor is its number; a
 * `webauthn` factor its key.
 */
export const factorRowSchema = z.object({
  id: uuid,
  type: z.enum(["totp", "phone", "webauthn"]),
  friendlyName: text(255).nullable(),
  status: z.enum(["verified", "unverified"]),
  phone: text(100).nullable(),
  /** A verified `webauthn` factor's key (absent otherwise). */
  key: factorKeySchema.nullable().optional(),
  createdAt: time,
  updatedAt: time,
});

/**
 * A GoTrue session (`auth.sessions`) with its refresh tokens (`auth.refresh_tokens`), as `import-supabase` reads them
 * (supabase.md §5). The 12-character tokens GoTrue stores in plain text cross the wire only as their SHA-256 (the
 * command hashes them); a session on GoTrue's v2 tokens sends its HMAC key (opened with `--supabase-encryption-key`
 * when GoTrue sealed it) and counter, from which src/move-in/supabase-sessions.ts derives the one live token's hash.
 * Nothing here is stored as sent: only that hash is (token-writes.ts).
 */
export const supabaseRefreshTokenSchema = z.object({
  /** `auth.refresh_tokens.id` (a bigserial): GoTrue's live token of a session is its unrevoked one of highest id. */
  id: z.union([z.string().regex(/^\d{1,19}$/), z.number().int().min(0)]),
  /** Lower-case hex SHA-256 of the token's text (`auth.refresh_tokens.token`). */
  tokenHash: z.string().regex(/^[0-9a-fA-F]{64}$/),
  revoked: z.boolean(),
  createdAt: time,
  /**
   * SHA-256 of its `parent` (the token it replaced), for the session's live token: GoTrue takes the parent again as a
   * client's retry whose answer was lost (supabase-sessions.ts).
   */
  parentHash: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/)
    .nullable()
    .default(null),
});

export const supabaseSessionSchema = z.object({
  id: uuid,
  createdAt: time,
  /** `not_after`: GoTrue refuses the session from then on; null when unbounded (the service's lifetime applies). */
  notAfter: time.nullable().default(null),
  /** `refreshed_at`: when GoTrue last refreshed it (the v2 token's issue; the v1 ones' rows say theirs). */
  refreshedAt: time.nullable().default(null),
  aal: z.enum(["aal1", "aal2", "aal3"]).nullable().default(null),
  factorId: uuid.nullable().default(null),
  /**
   * `auth.mfa_amr_claims` of the session: each method (`password`, `totp`, `mfa/phone`, `mfa/webauthn`, …) and its
   * last use. Null when GoTrue kept none (older versions): `aal` alone then says whether it showed a second factor.
   */
  amr: z
    .array(z.object({ method: z.string().max(64), at: time }))
    .max(20)
    .nullable()
    .default(null),
  /** `refresh_token_hmac_key`, opened: base64url (no padding) of the session's HMAC-SHA-256 key (v2 tokens). */
  refreshTokenHmacKey: z
    .string()
    .regex(/^[A-Za-z0-9_-]{22,200}$/)
    .nullable()
    .default(null),
  /** `refresh_token_counter`: the counter of the v2 token GoTrue issued last. */
  refreshTokenCounter: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).nullable().default(null),
  refreshTokens: z.array(supabaseRefreshTokenSchema).max(1000).default([]),
});

export type SupabaseSession = z.infer<typeof supabaseSessionSchema>;

export const userBundleSchema = z.object({
  /**
   * Whose rows these are. `supabase` (`import-supabase`): the ticket is GoTrue's mailed token hash, and the role and
   * locale, which GoTrue has not, are the service's defaults (supabase-users.ts).
   */
  system: z.enum(["nhost", "supabase"]).default("nhost"),
  id: uuid,
  createdAt: time,
  updatedAt: time,
  lastSeen: time.nullable(),
  disabled: z.boolean(),
  displayName: text(1000),
  avatarUrl: text(2048),
  locale: text(35),
  email: text(1000).nullable(),
  phoneNumber: text(100).nullable(),
  emailVerified: z.boolean(),
  phoneNumberVerified: z.boolean(),
  newEmail: text(1000).nullable(),
  passwordHash: text(1000).nullable(),
  /** The layout of `passwordHash` (src/lib/imported-hashes/); absent: bcrypt, as Nhost writes it. */
  passwordHasher: z.enum(IMPORTED_HASHERS).nullish(),
  defaultRole: text(100),
  roles: z.array(text(100)).max(100),
  isAnonymous: z.boolean(),
  activeMfaType: text(20).nullable(),
  /** Plain base32, decrypted by the command with Nhost's key. */
  totpSecret: text(200).nullable(),
  /** Nhost had a TOTP secret the command could not decrypt (no key or a wrong one). */
  totpSecretUnreadable: z.boolean().default(false),
  ticket: text(300).nullable(),
  ticketExpiresAt: time.nullable(),
  metadata: json.nullable(),
  providers: z.array(providerRowSchema).max(50),
  securityKeys: z.array(securityKeyRowSchema).max(50),
  refreshTokens: z.array(tokenRowSchema).max(1000),
  /** GoTrue's `app_metadata` without `provider`/`providers` (those are the identities'). */
  appMetadata: json.nullable().optional(),
  /** A timed ban (GoTrue's `banned_until`): disabled until then. */
  bannedUntil: time.nullable().optional(),
  factors: z.array(factorRowSchema).max(10).optional(),
  /** A user moved from Supabase: GoTrue's sessions, each carried as one session (supabaseSessionSchema). */
  supabaseSessions: z.array(supabaseSessionSchema).max(1000).default([]),
  /**
   * The row is one this service's Postgres mirror wrote (the command finds it in `edge_auth_mirror.versions`, not
   * changed since): it holds this service's data, not Nhost's (src/move-in/user-import.ts).
   */
  mirrored: z.boolean().default(false),
});

export type UserBundle = z.infer<typeof userBundleSchema>;

/**
 * A row of a batch: an object, checked field by field later (user-checks.ts) so that one bad row is reported and
 * skipped. A row that is not an object at all means the batch is not the command's: refused whole, where it used to
 * answer 200 with every row skipped.
 */
const row = z.record(z.string(), z.unknown());

export const importUsersBody = z.object({
  /** Absent: each user's own `system` if it names one, else `nhost` (src/move-in/ledger.ts `userSystem`). */
  system: z.enum(IMPORT_SYSTEMS).optional(),
  dryRun: z.boolean().default(false),
  users: z.array(row).min(1).max(100),
});

export const bucketRowSchema = z.object({
  id: text(100).regex(/^[A-Za-z0-9._-]+$/, "a bucket id of letters, digits, dots, dashes and underscores"),
  downloadExpiration: z.number().int().min(1).max(604_800),
  minUploadFileSize: z.number().int().min(0),
  /** null (Supabase's `file_size_limit` unset): the service's default. */
  maxUploadFileSize: z.number().int().min(0).nullable(),
  cacheControl: text(1000).nullable(),
  presignedUrlsEnabled: z.boolean(),
  createdAt: time,
  updatedAt: time,
  /**
   * Supabase's buckets (import-supabase): `public` decides a new bucket's rules as the Supabase face's bucket
   * creation does (public read, else every client rule `none`); its allowed MIME types follow on every run.
   */
  public: z.boolean().optional(),
  allowedMimeTypes: z.array(text(255)).max(100).nullable().optional(),
});

export const importBucketsBody = z.object({
  system,
  dryRun: z.boolean().default(false),
  buckets: z.array(row).min(1).max(100),
});

export const fileRecordSchema = z.object({
  id: uuid,
  bucketId: text(100),
  // Nullable in Nhost's schema: a record without a name, type or ETag still names bytes.
  name: text(1024).nullable(),
  size: z.number().int().min(0),
  mimeType: text(255).nullable(),
  etag: text(200).nullable(),
  isUploaded: z.boolean().nullable(),
  uploadedByUserId: uuid.nullable(),
  metadata: json.nullable(),
  createdAt: time,
  updatedAt: time,
  /** Supabase's objects (import-supabase): the object's name in its bucket, the Supabase face's `files.path`. */
  path: text(1024).min(1).nullable().optional(),
  /** The row is one this service's Postgres mirror wrote (as a user's `mirrored`). */
  mirrored: z.boolean().default(false),
});

export type FileRecord = Omit<z.infer<typeof fileRecordSchema>, "mirrored">;

export const planFilesBody = z.object({ system, files: z.array(row).min(1).max(100) });

export const removalsBody = z.object({
  system,
  dryRun: z.boolean().default(false),
  /** `org`: Supabase's SSO providers (org-import.ts). */
  kind: z.enum(["user", "bucket", "file", "org"]),
  ids: z.array(text(100)).min(1).max(100),
});

/** `PUT …/files/{id}?system=`: the run's system, recorded on the file's ledger row. */
export const fileImportQuery = z.object({ system });

export const ledgerQuery = z.object({
  system,
  kind: z.enum(["user", "bucket", "file", "org"]),
  after: text(100).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(1000),
});

/**
 * The run's counts (the command sends no lists): bounded like any stored JSON, since the report is written to the audit
 * log and the event stream, and a deep one overflowed the stack there (a 500 found by the fuzz of issue 42).
 */
export const completedBody = z.object({ report: metadataSchema });

/** One row that was not imported, or was imported without something: the table and id as Nhost names them. */
export interface RowReason {
  table: string;
  id: string;
  reason: string;
  /** For the command to tell reasons apart without reading their words: `bucket-missing`. */
  code?: "bucket-missing";
}

export type Outcome =
  | "imported"
  | "updated"
  | "unchanged"
  | "kept"
  | "skipped"
  /** Files: the record is new or changed, its bytes are to be sent. */
  | "needs-bytes"
  /** Removals. */
  | "deleted"
  | "absent";

export interface ImportResult {
  id: string;
  outcome: Outcome;
  /** Why it was skipped or kept. */
  reasons?: RowReason[];
  /** Imported, but something of it was not carried (`notCarried`) or was knowingly left (`left`). */
  warnings?: (RowReason & { notCarried: boolean })[];
  /** Rows of a kept or unchanged user this run newly carried (a session Nhost made since): counted as imported. */
  carried?: { table: string; id: string }[];
}

const rowReasonSchema = z.object({
  table: z.string(),
  id: z.string(),
  reason: z.string(),
  code: z.enum(["bucket-missing"]).optional(),
});

export const importResultsSchema = z.object({
  results: z.array(
    z.object({
      id: z.string(),
      outcome: z.enum([
        "imported",
        "updated",
        "unchanged",
        "kept",
        "skipped",
        "needs-bytes",
        "deleted",
        "absent",
      ]),
      reasons: z.array(rowReasonSchema).optional(),
      warnings: z.array(rowReasonSchema.extend({ notCarried: z.boolean() })).optional(),
      carried: z.array(z.object({ table: z.string(), id: z.string() })).optional(),
    }),
  ),
});

export const fileResultSchema = importResultsSchema.shape.results.element;

export const ledgerPageSchema = z.object({ items: z.array(z.string()), next: z.string().nullable() });
