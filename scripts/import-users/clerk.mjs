// Clerk: the CSV the Clerk Dashboard exports (Settings → User exports), the only Clerk export that holds password
// digests and TOTP secrets. Its columns, as Clerk's documentation and migration tools name them (this list is the one
// place they are written; a header without one of them refuses the run). Lists inside a cell (several verified
// addresses) are separated by `|`. The export holds no linked providers (Google, GitHub…): those users sign in here
// with the provider again, which links by verified email as any sign-in does (the guide says so).
import { csvRows, refuseJson } from "./files.mjs";
import { HASHERS } from "./records.mjs";

export const CLERK_COLUMNS = [
  "id",
  "first_name",
  "last_name",
  "username",
  "primary_email_address",
  "primary_phone_number",
  "verified_email_addresses",
  "unverified_email_addresses",
  "verified_phone_numbers",
  "unverified_phone_numbers",
  "totp_secret",
  "password_digest",
  "password_hasher",
];

const KIND = "Clerk's user export (CSV with primary_email_address, password_digest, password_hasher)";

/**
 * Clerk's `password_hasher` names → this service's (contract supabase.md §5). Clerk's Django variants carry Django's
 * layout, which the service's pbkdf2 and bcrypt_sha256 take as they are.
 */
const CLERK_HASHERS = {
  bcrypt_sha256_django: "bcrypt_sha256",
  pbkdf2_sha256_django: "pbkdf2_sha256",
  md5_phpass: "phpass",
  sha256_salted: "sha256_salted",
};

const list = (cell) =>
  String(cell ?? "")
    .split("|")
    .map((value) => value.trim().toLowerCase())
    .filter(Boolean);

/**
 * When a Clerk user was created: Clerk's ids are `user_` and a KSUID, whose first four bytes are seconds since
 * 2014-05-13T16:53:20Z (1.4e9). The export has no date column; without this every user would be dated 1970.
 */
export function clerkCreatedAt(id) {
  const ksuid = /^user_([0-9A-Za-z]{27})$/.exec(id)?.[1];
  if (!ksuid) return null;
  const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  let n = 0n;
  for (const char of ksuid) n = n * 62n + BigInt(ALPHABET.indexOf(char));
  const seconds = Number(n >> 128n) + 1_400_000_000;
  return seconds > 1_400_000_000 && seconds < 4_000_000_000 ? new Date(seconds * 1000).toISOString() : null;
}

export async function* readClerk({ file }) {
  await refuseJson(file, KIND);
  for await (const { line, row } of csvRows(file, { kind: KIND, required: CLERK_COLUMNS })) {
    const id = String(row.id ?? "").trim();
    const email = String(row.primary_email_address ?? "").trim() || null;
    const phone = String(row.primary_phone_number ?? "").trim() || null;
    if (!id || (!email && !phone)) {
      const what = !id
        ? "no id"
        : `no email or phone${row.username ? ` (only the username ${row.username})` : ""}`;
      yield {
        problem: {
          id: id || `line ${line}`,
          ...(id ? { sourceId: id } : {}),
          reason: `${what}: nothing to sign in with here, not imported`,
        },
      };
      continue;
    }
    const digest = String(row.password_digest ?? "").trim();
    const clerkHasher = String(row.password_hasher ?? "").trim();
    const hasher = CLERK_HASHERS[clerkHasher] ?? clerkHasher;
    if (digest && !HASHERS.has(hasher)) {
      yield {
        problem: {
          id,
          sourceId: id,
          reason: `password_hasher "${clerkHasher}" is not one this service verifies: not imported`,
        },
      };
      continue;
    }
    const name = [row.first_name, row.last_name].map((part) => String(part ?? "").trim()).filter(Boolean);
    const metadata = {};
    for (const key of ["first_name", "last_name", "username"])
      if (String(row[key] ?? "").trim()) metadata[key] = String(row[key]).trim();
    const totp = String(row.totp_secret ?? "").trim();
    yield {
      record: {
        system: "clerk",
        sourceId: id,
        email,
        emailVerified: email !== null && list(row.verified_email_addresses).includes(email.toLowerCase()),
        phone,
        phoneVerified: phone !== null && list(row.verified_phone_numbers).includes(phone.toLowerCase()),
        displayName: name.join(" ") || String(row.username ?? "").trim(),
        avatarUrl: "",
        passwordHash: digest || null,
        passwordHasher: hasher,
        totpSecret: totp || null,
        disabled: false,
        createdAt: clerkCreatedAt(id),
        updatedAt: null,
        lastSeen: null,
        identities: [],
        metadata,
        leftOut: otherAddresses(row, email, phone),
      },
    };
  }
}

/** Clerk lets a user hold several addresses; this service one email and one phone: the others are reported. */
function otherAddresses(row, email, phone) {
  const others = [
    ...list(row.verified_email_addresses),
    ...list(row.unverified_email_addresses),
    ...list(row.verified_phone_numbers),
    ...list(row.unverified_phone_numbers),
  ].filter((value) => value !== email?.toLowerCase() && value !== phone?.toLowerCase());
  return others.length > 0 ? ["addresses beyond the primary email and phone (one of each here)"] : [];
}
