import { z } from "zod";
import { isUuid } from "./postgres";

/**
 * The event stream's snapshots (migration 0020's views `event_user_snapshots` and `event_file_snapshots`, which events
 * carry and a resync reads) turned into rows of Nhost's tables. Snapshots carry no secrets, so no row built here can
 * hold one: the secret columns (password_hash, totp_secret, otp_hash, ticket, webauthn_current_challenge) are never
 * among the columns written.
 */
const time = z.string();
const providerSnapshot = z.object({
  id: z.string(),
  provider: z.string(),
  providerUserId: z.string(),
  createdAt: time,
  updatedAt: time,
});
const userSnapshot = z.object({
  id: z.string(),
  createdAt: time,
  updatedAt: time,
  lastSeen: time.nullable(),
  disabled: z.boolean(),
  displayName: z.string().nullable(),
  avatarUrl: z.string().nullable(),
  locale: z.string(),
  email: z.string().nullable(),
  emailVerified: z.boolean(),
  newEmail: z.string().nullable(),
  phoneNumber: z.string().nullable(),
  phoneNumberVerified: z.boolean(),
  defaultRole: z.string(),
  roles: z.array(z.string()),
  isAnonymous: z.boolean(),
  activeMfaType: z.string().nullable(),
  metadata: z.unknown(),
  providers: z.array(providerSnapshot).nullable(),
});
const fileSnapshot = z.object({
  id: z.string(),
  bucketId: z.string(),
  name: z.string(),
  size: z.number(),
  mimeType: z.string(),
  etag: z.string(),
  isUploaded: z.boolean(),
  uploadedByUserId: z.string().nullable(),
  metadata: z.unknown(),
  createdAt: time,
  updatedAt: time,
});

export interface UserProviderRow {
  id: string;
  provider_id: string;
  provider_user_id: string;
  created_at: string;
  updated_at: string;
}

/** An `auth.users` row, with what `auth.user_roles` and `auth.user_providers` hold for it. */
export interface UserRow {
  id: string;
  created_at: string;
  updated_at: string;
  last_seen: string | null;
  disabled: boolean;
  display_name: string;
  avatar_url: string;
  locale: string;
  email: string | null;
  phone_number: string | null;
  email_verified: boolean;
  phone_number_verified: boolean;
  new_email: string | null;
  default_role: string;
  is_anonymous: boolean;
  active_mfa_type: string | null;
  metadata: unknown;
  roles: string[];
  providers: UserProviderRow[];
}

export interface FileRow {
  id: string;
  created_at: string;
  updated_at: string;
  bucket_id: string;
  name: string;
  size: number;
  mime_type: string;
  etag: string;
  is_uploaded: boolean;
  uploaded_by_user_id: string | null;
  metadata: unknown;
}

/** A snapshot that is not what migration 0020 writes: a fault to see in the log and the dead letters, not to guess. */
export class SnapshotError extends Error {}

function parse<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const result = schema.safeParse(value);
  if (!result.success) throw new SnapshotError(`${what} snapshot: ${result.error.issues[0]?.message}`);
  return result.data;
}

/** null when the user's id is not a UUID: Nhost's `auth.users.id` could not hold it (the import only brings UUIDs). */
export function userRowOf(snapshot: unknown): UserRow | null {
  const user = parse(userSnapshot, snapshot, "user");
  if (!isUuid(user.id)) return null;
  const roles = [...new Set([user.defaultRole, ...user.roles])].sort();
  return {
    id: user.id,
    created_at: user.createdAt,
    updated_at: user.updatedAt,
    last_seen: user.lastSeen,
    disabled: user.disabled,
    display_name: user.displayName ?? "",
    avatar_url: user.avatarUrl ?? "",
    locale: user.locale,
    email: user.email,
    phone_number: user.phoneNumber,
    email_verified: user.emailVerified,
    phone_number_verified: user.phoneNumberVerified,
    new_email: user.newEmail,
    default_role: user.defaultRole,
    is_anonymous: user.isAnonymous,
    // Nhost's CHECK allows these two only: the email and WebAuthn steps (issue 47) are null there.
    active_mfa_type:
      user.activeMfaType === "totp" || user.activeMfaType === "sms" ? user.activeMfaType : null,
    metadata: user.metadata ?? null,
    roles,
    providers: (user.providers ?? [])
      .filter((p) => isUuid(p.id))
      .map((p) => ({
        id: p.id,
        provider_id: p.provider,
        provider_user_id: p.providerUserId,
        created_at: p.createdAt,
        updated_at: p.updatedAt,
      })),
  };
}

/** null when the file's id is not a UUID (`storage.files.id` is one). */
export function fileRowOf(snapshot: unknown): FileRow | null {
  const file = parse(fileSnapshot, snapshot, "file");
  if (!isUuid(file.id)) return null;
  return {
    id: file.id,
    created_at: file.createdAt,
    updated_at: file.updatedAt,
    bucket_id: file.bucketId,
    name: file.name,
    size: file.size,
    mime_type: file.mimeType,
    etag: file.etag,
    is_uploaded: file.isUploaded,
    // A uuid column: an uploader id of another shape (set by an app's Hasura permissions) is left out.
    uploaded_by_user_id: isUuid(file.uploadedByUserId) ? file.uploadedByUserId : null,
    metadata: file.metadata ?? null,
  };
}

/** The stream subject of a file: its uploader, or the file itself (migration 0020's triggers). */
export const fileSubject = (file: { id: string; uploadedByUserId?: string | null }) =>
  file.uploadedByUserId ?? `file:${file.id}`;
