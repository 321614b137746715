// The service's own CSV, for any other system (contract supabase.md §5): a header row with exactly these columns
// (others are ignored; a missing one refuses the run), one user per row. `password_hasher` names the layout of
// `password_hash` (records.mjs HASHERS); `metadata` is a JSON object or empty.
import { csvRows, refuseJson, truthy } from "./files.mjs";
import { HASHERS, isoTime } from "./records.mjs";

export const CSV_COLUMNS = [
  "id",
  "email",
  "email_verified",
  "phone",
  "display_name",
  "password_hash",
  "password_hasher",
  "metadata",
];

const KIND = `a user CSV (${CSV_COLUMNS.join(",")})`;

export async function* readCsv({ file }) {
  await refuseJson(file, KIND);
  for await (const { line, row } of csvRows(file, { kind: KIND, required: CSV_COLUMNS })) {
    const id = String(row.id ?? "").trim();
    const email = String(row.email ?? "").trim() || null;
    const phone = String(row.phone ?? "").trim() || null;
    const problem = (reason) => ({
      problem: {
        id: id || `line ${line}`,
        ...(id ? { sourceId: id } : {}),
        reason: `${reason}: not imported`,
      },
    });
    if (!id) {
      yield problem("no id");
      continue;
    }
    if (!email && !phone) {
      yield problem("no email or phone");
      continue;
    }
    const hash = String(row.password_hash ?? "").trim();
    const hasher = String(row.password_hasher ?? "")
      .trim()
      .toLowerCase();
    if (hash && !HASHERS.has(hasher)) {
      yield problem(
        hasher
          ? `password_hasher "${hasher}" is not one this service verifies`
          : "password_hash without password_hasher",
      );
      continue;
    }
    let metadata = {};
    const text = String(row.metadata ?? "").trim();
    if (text) {
      try {
        metadata = JSON.parse(text);
      } catch {
        metadata = null;
      }
      if (metadata === null || typeof metadata !== "object" || Array.isArray(metadata)) {
        yield problem("metadata is not a JSON object");
        continue;
      }
    }
    yield {
      record: {
        system: "csv",
        sourceId: id,
        email,
        emailVerified: truthy(row.email_verified),
        phone,
        phoneVerified: false,
        displayName: String(row.display_name ?? "").trim(),
        avatarUrl: "",
        passwordHash: hash || null,
        passwordHasher: hasher,
        totpSecret: null,
        disabled: false,
        // Optional columns a file may add: when the user was created and last changed.
        createdAt: isoTime(row.created_at),
        updatedAt: isoTime(row.updated_at),
        lastSeen: null,
        identities: [],
        metadata,
        leftOut: [],
      },
    };
  }
}
