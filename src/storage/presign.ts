import type { Config } from "../config";
import { timingSafeEqualString } from "../lib/crypto";
import { fromHex, toHex } from "../lib/hex";
import { settledMemo } from "../lib/settled";
import { StorageError } from "./errors";

/**
 * Presigned URLs (storage contract §3.5): the nine S3-style parameters the reference's URLs carry, signed by this
 * service with HMAC-SHA256 over what must not change — the file id, the signing time and the lifetime — and verified
 * here, in constant time. Image parameters a caller appends are not signed, by design.
 */
const ALGORITHM = "AWS4-HMAC-SHA256";
const keys = settledMemo<string, CryptoKey>();

/** STORAGE_PRESIGN_SECRET, or a key derived from AUTH_ENCRYPTION_KEY for this one purpose (never the key itself). */
function signingKey(config: Config): Promise<CryptoKey> {
  const source = config.storage.presignSecret ?? `derived:${config.secrets.encryptionKey}`;
  return keys.get(source, async () => {
    const raw = config.storage.presignSecret
      ? new TextEncoder().encode(config.storage.presignSecret)
      : new Uint8Array(
          await crypto.subtle.sign(
            "HMAC",
            await crypto.subtle.importKey(
              "raw",
              fromHex(config.secrets.encryptionKey),
              { name: "HMAC", hash: "SHA-256" },
              false,
              ["sign"],
            ),
            new TextEncoder().encode("storage presigned URLs"),
          ),
        );
    return crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  });
}

/** `YYYYMMDDTHHMMSSZ` (X-Amz-Date). */
const amzDate = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}/, "");

function parseAmzDate(value: string): number | null {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  return m ? Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!) : null;
}

async function signature(config: Config, fileId: string, date: string, expires: string, credential: string) {
  const data = new TextEncoder().encode([ALGORITHM, fileId, date, expires, credential].join("\n"));
  return toHex(await crypto.subtle.sign("HMAC", await signingKey(config), data));
}

/** getFilePresignedURL: `{url, expiration}` valid for `expiresIn` seconds from `now`. */
export async function presignedUrl(
  config: Config,
  fileId: string,
  expiresIn: number,
  now: number,
): Promise<{ url: string; expiration: number }> {
  const date = amzDate(now);
  const credential = `edge-auth/${date.slice(0, 8)}/auto/s3/aws4_request`;
  const expires = String(expiresIn);
  const url = new URL(
    `${config.urls.storage}${config.urls.storagePrefix}/files/${fileId}/presignedurl/contents`,
  );
  const params: [string, string][] = [
    ["X-Amz-Algorithm", ALGORITHM],
    ["X-Amz-Credential", credential],
    ["X-Amz-Date", date],
    ["X-Amz-Expires", expires],
    ["X-Amz-Signature", await signature(config, fileId, date, expires, credential)],
    ["X-Amz-SignedHeaders", "host"],
    ["X-Amz-Checksum-Mode", "ENABLED"],
    ["x-id", "GetObject"],
  ];
  for (const [name, value] of params) url.searchParams.set(name, value);
  return { url: url.toString(), expiration: expiresIn };
}

/**
 * Checks a presigned request for `fileId`: a missing or wrong signature is 403 `invalid signature`; a good one past
 * its lifetime is 400 `signature already expired`. Returns the seconds left, for `Cache-Control: max-age`.
 */
export async function verifyPresigned(
  config: Config,
  fileId: string,
  query: URLSearchParams,
  now: number,
): Promise<number> {
  const invalid = new StorageError(403, "invalid signature");
  const [date, expires, credential, given] = [
    "X-Amz-Date",
    "X-Amz-Expires",
    "X-Amz-Credential",
    "X-Amz-Signature",
  ].map((name) => query.get(name));
  if (!date || !expires || !credential || !given || query.get("X-Amz-Algorithm") !== ALGORITHM) throw invalid;
  if (!/^\d{1,6}$/.test(expires) || credential.length > 200 || !/^[0-9a-f]{64}$/.test(given)) throw invalid;
  if (!timingSafeEqualString(await signature(config, fileId, date, expires, credential), given))
    throw invalid;
  const signedAt = parseAmzDate(date);
  if (signedAt === null) throw invalid;
  const secondsLeft = Math.floor((signedAt + Number(expires) * 1000 - now) / 1000);
  if (secondsLeft <= 0) throw new StorageError(400, "signature already expired");
  return secondsLeft;
}

/**
 * A token naming a path-addressed object (the Supabase face's signed URLs and signed upload URLs): base64url JSON
 * claims, a dot, and the hex HMAC-SHA256 of that text under the presigned URLs' key, in a domain of its own (the
 * text signed starts with a line no presigned URL's does), so neither kind of signature passes for the other.
 */
const OBJECT_TOKEN_DOMAIN = "storage object token\n";

async function objectTokenSignature(config: Config, body: string): Promise<string> {
  const data = new TextEncoder().encode(OBJECT_TOKEN_DOMAIN + body);
  return toHex(await crypto.subtle.sign("HMAC", await signingKey(config), data));
}

export interface ObjectTokenClaims {
  /** What the token is for: `download` or `upload`. */
  use: "download" | "upload";
  /** `<bucket>/<path>`. */
  url: string;
  /** Unix seconds. */
  exp: number;
  /** An upload token's: who the file will belong to (its creator), and whether it may replace a file. */
  owner?: string;
  upsert?: boolean;
  /** A download token's image transformation (the face's query parameters), applied whatever the URL adds. */
  transform?: Record<string, string>;
}

export async function signObjectToken(config: Config, claims: ObjectTokenClaims): Promise<string> {
  const body = Buffer.from(JSON.stringify(claims)).toString("base64url");
  return `${body}.${await objectTokenSignature(config, body)}`;
}

/**
 * The claims of a token for `use` on `url`, checked in constant time: a wrong one, or one for another object or use,
 * is 400 `invalid signature`; a good one past its time 400 `signature already expired`.
 */
export async function verifyObjectToken(
  config: Config,
  token: string,
  use: ObjectTokenClaims["use"],
  url: string,
  now: number,
): Promise<ObjectTokenClaims> {
  const invalid = new StorageError(400, "invalid signature");
  const [body, given] = token.split(".");
  if (!body || !given || token.length > 4096 || !/^[0-9a-f]{64}$/.test(given)) throw invalid;
  if (!timingSafeEqualString(await objectTokenSignature(config, body), given)) throw invalid;
  const claims = JSON.parse(Buffer.from(body, "base64url").toString()) as ObjectTokenClaims;
  if (claims.use !== use || claims.url !== url) throw invalid;
  if (claims.exp * 1000 <= now) throw new StorageError(400, "signature already expired");
  return claims;
}
