// Auth0: the user export job's file (NDJSON, one user per line: `user_id`, `email`, `email_verified`, `name`,
// `picture`, `created_at`, `updated_at`, `last_login`, `blocked`, `identities[{provider, user_id, connection}]`, …)
// and, with --passwords, the password-hash export Auth0's support hands out (NDJSON: `_id.$oid`, `email`,
// `passwordHash` bcrypt, …), joined on the database user's id (`auth0|<oid>`). Auth0's database hashes are bcrypt.
import { ndjsonLines } from "./files.mjs";
import { isoTime, providerId } from "./records.mjs";

const KIND = "an Auth0 user export (NDJSON with user_id)";
const PASSWORDS_KIND = "Auth0's password-hash export (NDJSON with _id.$oid and passwordHash)";

/** Auth0's own connections: a password or a passwordless login, not a linked provider. */
const NOT_PROVIDERS = new Set(["auth0", "email", "sms"]);

async function readPasswords(file) {
  const hashes = new Map();
  const problems = [];
  for await (const { line, value, error } of ndjsonLines(file, {
    kind: PASSWORDS_KIND,
    firstLine: (v) =>
      typeof v?._id?.$oid === "string" && "passwordHash" in v
        ? null
        : "its first line has no _id.$oid and passwordHash",
  })) {
    const oid = value?._id?.$oid;
    if (error || typeof oid !== "string") {
      problems.push({
        id: `${file}:${line}`,
        reason: `${error ?? "no _id.$oid"}: line not read`,
        passwordsFile: true,
      });
      continue;
    }
    hashes.set(oid, { hash: value.passwordHash ?? null, email: value.email ?? null, line });
  }
  return { hashes, problems };
}

export async function* readAuth0({ file, passwords }) {
  const hashes = passwords ? await readPasswords(passwords) : { hashes: new Map(), problems: [] };
  for (const problem of hashes.problems) yield { problem };
  const used = new Set();
  for await (const { line, value, error } of ndjsonLines(file, {
    kind: KIND,
    firstLine: (v) => (typeof v?.user_id === "string" ? null : "its first line has no user_id"),
  })) {
    if (error || typeof value?.user_id !== "string") {
      yield { problem: { id: `line ${line}`, reason: error ?? "no user_id: not imported" } };
      continue;
    }
    const user = value;
    const [connection, oid] = splitUserId(user.user_id);
    const found = connection === "auth0" ? hashes.hashes.get(oid) : undefined;
    if (found) used.add(oid);
    // A hash filed under this id with another address is not this user's to carry.
    if (found?.email && user.email && found.email.toLowerCase() !== user.email.toLowerCase()) {
      yield {
        problem: {
          id: user.user_id,
          sourceId: user.user_id,
          reason: `the password file's line ${found.line} has this id with another email (${found.email}): not imported`,
        },
      };
      continue;
    }
    const identities = (Array.isArray(user.identities) ? user.identities : [])
      .filter((identity) => identity && !NOT_PROVIDERS.has(identity.provider))
      .map((identity) => ({
        provider: providerId(String(identity.provider)),
        subject: String(identity.user_id),
      }));
    const metadata = {};
    for (const key of ["given_name", "family_name", "nickname", "username"])
      if (typeof user[key] === "string" && user[key]) metadata[key] = user[key];
    if (user.user_metadata && typeof user.user_metadata === "object")
      metadata.user_metadata = user.user_metadata;
    if (user.app_metadata && typeof user.app_metadata === "object") metadata.app_metadata = user.app_metadata;
    yield {
      record: {
        system: "auth0",
        sourceId: user.user_id,
        email: user.email ?? null,
        emailVerified: user.email_verified === true,
        phone: user.phone_number ?? null,
        phoneVerified: user.phone_verified === true,
        displayName: user.name && user.name !== user.email ? user.name : "",
        avatarUrl: typeof user.picture === "string" ? user.picture : "",
        passwordHash: found?.hash ?? null,
        passwordHasher: "bcrypt",
        totpSecret: null,
        disabled: user.blocked === true,
        createdAt: isoTime(user.created_at),
        updatedAt: isoTime(user.updated_at),
        lastSeen: isoTime(user.last_login),
        identities,
        metadata,
        leftOut: [],
      },
    };
  }
  for (const [oid, { line }] of hashes.hashes)
    if (!used.has(oid))
      yield {
        problem: {
          id: `auth0|${oid}`,
          reason: `the password file's line ${line} names a user not in the export: its hash is not imported`,
          passwordsFile: true,
        },
      };
}

/** `auth0|60425dc4…` → ["auth0", "60425dc4…"]; the connection's strategy is the part before the first `|`. */
function splitUserId(userId) {
  const at = userId.indexOf("|");
  return at < 0 ? ["", userId] : [userId.slice(0, at), userId.slice(at + 1)];
}
