// Firebase: `firebase auth:export users.json --format=json` ({"users":[{localId, email, emailVerified, passwordHash,
// salt (both base64), displayName, photoUrl, phoneNumber, disabled, createdAt, lastSignedInAt (ms), customAttributes,
// providerUserInfo[{providerId, rawId}]}]}) with the project's scrypt parameters (--hash-config: the `hash_config`
// block the console shows under Authentication → Users → ⋮ → Password hash parameters, as it is or as JSON). Each
// hash is sent as `scrypt_firebase`, the six fields Clerk also uses: hash$salt$signerKey$saltSeparator$rounds$memCost.
import { readFile } from "node:fs/promises";
import { jsonDocument, RefusedFile } from "./files.mjs";
import { isoTime, providerId } from "./records.mjs";

const KIND = 'Firebase\'s auth:export JSON ({"users":[{"localId":…}]})';
/** Firebase's own sign-in methods: not a linked provider. */
const NOT_PROVIDERS = new Set(["password", "phone", "anonymous"]);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * The console's block, pasted as it is:
 *   hash_config {
 *     algorithm: SCRYPT,
 *     base64_signer_key: jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==,
 *     base64_salt_separator: Bw==,
 *     rounds: 8,
 *     mem_cost: 14,
 *   }
 * or as JSON with the same keys (or firebase-tools' camelCase: signerKey, saltSeparator, rounds, memCost).
 */
export function parseHashConfig(text) {
  let fields = {};
  try {
    const json = JSON.parse(text);
    fields = json.hash_config ?? json.hashConfig ?? json;
  } catch {
    for (const match of text.matchAll(/([A-Za-z0-9_]+)\s*:\s*"?([^,\s"}]+)"?/g)) fields[match[1]] = match[2];
  }
  const pick = (...names) => names.map((name) => fields[name]).find((v) => v !== undefined && v !== "");
  const config = {
    algorithm: String(pick("algorithm") ?? "SCRYPT").toUpperCase(),
    signerKey: String(pick("base64_signer_key", "signerKey", "signer_key") ?? ""),
    saltSeparator: String(pick("base64_salt_separator", "saltSeparator", "salt_separator") ?? ""),
    rounds: Number(pick("rounds")),
    memCost: Number(pick("mem_cost", "memCost", "memoryCost")),
  };
  const wrong = [];
  if (config.algorithm !== "SCRYPT")
    wrong.push(`algorithm ${config.algorithm} (Firebase's project hash is SCRYPT)`);
  if (!config.signerKey || !BASE64.test(config.signerKey))
    wrong.push("base64_signer_key missing or not base64");
  if (!BASE64.test(config.saltSeparator)) wrong.push("base64_salt_separator not base64");
  if (!Number.isInteger(config.rounds) || config.rounds < 1 || config.rounds > 8)
    wrong.push("rounds missing or not 1–8");
  if (!Number.isInteger(config.memCost) || config.memCost < 1 || config.memCost > 14)
    wrong.push("mem_cost missing or not 1–14");
  if (wrong.length > 0)
    throw new RefusedFile(`--hash-config is not Firebase's hash_config: ${wrong.join("; ")}`);
  return config;
}

export async function* readFirebase({ file, hashConfig }) {
  const document = await jsonDocument(file, KIND);
  const users = document?.users;
  if (!Array.isArray(users) || (users.length > 0 && typeof users[0]?.localId !== "string"))
    throw new RefusedFile(`${file} is not ${KIND}: no "users" array of objects with localId`);
  // Refused before anything is sent: without the project's parameters no hash can ever be checked.
  const withHash = users.filter((user) => user?.passwordHash).length;
  if (withHash > 0 && !hashConfig)
    throw new RefusedFile(
      `${withHash} users have a password hash, but there is no --hash-config: give the project's hash parameters ` +
        "(Firebase console → Authentication → Users → ⋮ → Password hash parameters, saved to a file)",
    );
  const config = hashConfig ? parseHashConfig(await readFile(hashConfig, "utf8")) : null;
  for (const [index, user] of users.entries()) {
    if (typeof user?.localId !== "string" || user.localId === "") {
      yield { problem: { id: `users[${index}]`, reason: "no localId: not imported" } };
      continue;
    }
    let passwordHash = null;
    if (user.passwordHash) {
      if (!BASE64.test(user.passwordHash) || !BASE64.test(user.salt ?? "")) {
        yield {
          problem: {
            id: user.localId,
            sourceId: user.localId,
            reason: "passwordHash or salt is not base64: not imported",
          },
        };
        continue;
      }
      passwordHash = [
        user.passwordHash,
        user.salt ?? "",
        config.signerKey,
        config.saltSeparator,
        config.rounds,
        config.memCost,
      ].join("$");
    }
    const leftOut = [];
    const identities = [];
    for (const info of Array.isArray(user.providerUserInfo) ? user.providerUserInfo : []) {
      if (!info || NOT_PROVIDERS.has(info.providerId)) continue;
      identities.push({ provider: providerId(String(info.providerId)), subject: String(info.rawId ?? "") });
    }
    if (Array.isArray(user.mfaInfo) && user.mfaInfo.length > 0)
      leftOut.push("Firebase second factors (their secrets are not exported): to be enrolled again here");
    const metadata = {};
    if (typeof user.customAttributes === "string" && user.customAttributes) {
      try {
        metadata.customClaims = JSON.parse(user.customAttributes);
      } catch {
        leftOut.push("customAttributes that are not JSON");
      }
    }
    yield {
      record: {
        system: "firebase",
        sourceId: user.localId,
        email: user.email ?? null,
        emailVerified: user.emailVerified === true,
        phone: user.phoneNumber ?? null,
        // Firebase signs in by phone only after an SMS code: a phone number it holds is a verified one.
        phoneVerified: Boolean(user.phoneNumber),
        displayName: user.displayName ?? "",
        avatarUrl: user.photoUrl ?? "",
        passwordHash,
        passwordHasher: "scrypt_firebase",
        totpSecret: null,
        disabled: user.disabled === true,
        createdAt: isoTime(user.createdAt),
        updatedAt: null,
        lastSeen: isoTime(user.lastSignedInAt),
        identities,
        metadata,
        leftOut,
      },
    };
  }
}
