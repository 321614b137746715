import { z } from "zod";
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
 * A second factor of a system that keeps a list of them (Supabase's `auth.mfa_factors`): its id and name carried so
 * that an app holding the factor's id still finds it. A TOTP factor's secret travels as the bundle's `totpSecret`
 * (the core holds one TOTP secret per user); a phone factor is its number.
 */
export const factorRowSchema = z.object({
  id: uuid,
  type: z.enum(["totp", "phone"]),
  friendlyName: text(255).nullable(),
  status: z.enum(["verified", "unverified"]),
  phone: text(100).nullable(),
  createdAt: time,
  updatedAt: time,
});

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

export const planFilesBody = z.object({ files: z.array(row).min(1).max(100) });

export const removalsBody = z.object({
  dryRun: z.boolean().default(false),
  kind: z.enum(["user", "bucket", "file"]),
  ids: z.array(text(100)).min(1).max(100),
});

export const ledgerQuery = z.object({
  kind: z.enum(["user", "bucket", "file"]),
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
