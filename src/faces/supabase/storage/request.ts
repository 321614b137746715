import { Readable } from "node:stream";
import type { Context } from "hono";
import type { z } from "zod";
import type { AppEnv } from "../../../http/app-env";
import { MAX_JSON_BODY_BYTES } from "../../../http/validation";
import { metadataSchema } from "../../../lib/json-metadata";
import { readPastReader, readWithin } from "../../../lib/refused-body";
import { HASURA_NAMESPACE } from "../../../signing-keys/jwt";
import { type Caller, identifyCaller, multipartParts, type ObjectBody, userCaller } from "../../../storage";
import type { KeyRole } from "../api-keys";
import { GoTrueError, importedGoTrueClaims, verifyGoTrueToken } from "../gotrue";
import { invalidBucketName, invalidKey, invalidRequest, StorageApiError } from "./errors";

/** What the Storage routes read of a request: the object it names, a JSON body, an upload's body, the caller. */

export interface ObjectRef {
  bucketId: string;
  path: string;
}

/** Bucket ids as the core keeps them (storage/buckets.ts): Storage's wider names are refused as invalid. */
const BUCKET_ID = /^[a-z0-9][a-z0-9_-]{0,62}$/;

export function checkBucketId(id: string): string {
  if (!BUCKET_ID.test(id)) throw invalidBucketName();
  return id;
}

/**
 * An object key as storage-js sends it (each segment percent-encoded). Refused, as Storage refuses keys it does
 * not take (`Invalid key`): an empty segment, `.` or `..` (a key must never climb out of its folder, on any
 * backend a file is later exported to), control characters, and keys over 1024 characters.
 */
export function checkPath(path: string): string {
  const control = [...path].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f);
  if (path.length === 0 || path.length > 1024 || control) throw invalidKey(path);
  if (path.split("/").some((segment) => segment === "" || segment === "." || segment === "..")) {
    throw invalidKey(path);
  }
  return path;
}

/** `{bucket}/{path…}` after `head` (such as `/object/public/`) in the request's path, decoded segment by segment. */
export function objectRef(c: Context<AppEnv>, head: string): ObjectRef {
  const pathname = new URL(c.req.url).pathname;
  const at = pathname.indexOf(`/storage/v1${head}`);
  const raw = pathname.slice(at + `/storage/v1${head}`.length);
  let segments: string[];
  try {
    segments = raw.split("/").map(decodeURIComponent);
  } catch {
    throw invalidKey(raw);
  }
  const [bucketId = "", ...rest] = segments;
  // An encoded `/` inside a segment would make a key other than the URL shows.
  if (rest.some((segment) => segment.includes("/"))) throw invalidKey(rest.join("/"));
  return { bucketId: checkBucketId(bucketId), path: checkPath(rest.join("/")) };
}

/** The body as text, at most the API's 64 KB. */
async function boundedText(request: Request): Promise<string> {
  const tooLarge = () =>
    new StorageApiError(413, "EntityTooLarge", "Payload too large", "The request body is too large");
  if (Number(request.headers.get("content-length") ?? 0) > MAX_JSON_BODY_BYTES) throw tooLarge();
  if (!request.body) return "";
  // Past the bound, the rest is read past before the 413 goes (lib/refused-body.ts: a cancel loses the connection).
  const bytes = await readWithin(request.body, MAX_JSON_BODY_BYTES);
  if (bytes === "too-large") throw tooLarge();
  return new TextDecoder().decode(bytes);
}

/** A JSON body (at most the API's 64 KB) checked against `schema`: Storage's 400 naming what is wrong. */
export async function jsonOf<T extends z.ZodType>(c: Context<AppEnv>, schema: T): Promise<z.output<T>> {
  const text = await boundedText(c.req.raw);
  let raw: unknown;
  try {
    raw = text === "" ? {} : JSON.parse(text);
  } catch {
    throw invalidRequest("Body is not valid JSON");
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path.map(String).join(".");
  throw invalidRequest(field ? `body/${field} ${issue?.message}` : "Invalid request body");
}

/** User metadata (`x-metadata`, base64 JSON, or the form's `metadata` field): a JSON object within the core's bounds. */
function parseMetadata(text: string): Record<string, unknown> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw invalidRequest("metadata must be a JSON object");
  }
  const parsed = metadataSchema.safeParse(json);
  if (!parsed.success) throw invalidRequest(`metadata ${parsed.error.issues[0]?.message ?? "is invalid"}`);
  return parsed.data;
}

/**
 * An upload's body, as storage-js sends it: a form (a Blob or File: `cacheControl`, `metadata`, then the file under
 * any name) or the raw bytes (`content-type`, `x-metadata`). `store` receives the bytes as a stream while the body
 * is read (never held whole); a form's fields before the file are known by then, as storage-js sends them first.
 */
export async function withUploadBody<T>(
  c: Context<AppEnv>,
  filename: string,
  store: (body: ObjectBody, metadata: Record<string, unknown> | undefined) => Promise<T>,
): Promise<T> {
  const request = c.req.raw;
  if (/^multipart\/form-data/i.test(request.headers.get("content-type") ?? "")) {
    let metadata: Record<string, unknown> | undefined;
    let result: { value: T } | undefined;
    for await (const part of multipartParts(request)) {
      if (part.kind === "field" && part.name) {
        if (part.name === "metadata") metadata = parseMetadata(part.value);
      } else if (part.kind === "field") {
        // A Blob serialised with an empty file name (Workers runtimes do so) is no file part to the streaming parser,
        // only a text field, cut at 64 KiB: refused, never stored changed.
        if (!result)
          throw invalidRequest("The file part has no file name: send a File, or the bytes as the body");
      } else if (!result) {
        result = { value: await store({ mimeType: part.mimeType, stream: part.stream, filename }, metadata) };
      } else {
        part.stream.resume();
      }
    }
    if (!result) throw invalidRequest("No file was sent");
    return result.value;
  }
  const header = request.headers.get("x-metadata");
  let metadata: Record<string, unknown> | undefined;
  if (header) {
    const text = Buffer.from(header, "base64").toString("utf8");
    metadata = parseMetadata(text);
  }
  const reader = request.body?.getReader();
  const stream = reader ? bodyStream(reader) : Readable.from([]);
  const mimeType = (request.headers.get("content-type") ?? "").split(";")[0]!.trim();
  try {
    return await store({ mimeType, stream, filename }, metadata);
  } finally {
    // An upload refused before or while its bytes were read (no bucket, a duplicate key, a policy, the bucket's limit)
    // leaves the body locked and unread: read past it before answering, as a refused form is
    // (lib/refused-body.ts). A stored upload read it all, so nothing is left to read.
    if (reader) await readPastReader(reader);
  }
}

/**
 * The body's bytes as the core reads a file. The core stops reading a file it refuses part-way (over the bucket's
 * limit) and its loop then destroys the stream; a stream made by `Readable.fromWeb` would cancel the request body
 * with it (workerd's streams destroy on return whatever `destroyOnReturn` says), so this one only pulls from the
 * reader, and destroying it leaves the body to `readPastReader`.
 */
function bodyStream(reader: ReadableStreamDefaultReader<Uint8Array>): Readable {
  return new Readable({
    read() {
      reader.read().then(
        ({ done, value }) => this.push(done ? null : value),
        (error: unknown) => this.destroy(error instanceof Error ? error : new Error(String(error))),
      );
    },
  });
}

/**
 * Who calls (contract supabase.md §1): the service role (a secret key or the admin secret, with no other token in
 * `Authorization`) is the admin; else the user of the access token in `Authorization`, acting as its role; else the
 * public role. A token in `Authorization` that does not verify is refused, as Storage refuses it (its 400 with
 * `statusCode` 403), not taken for the public role: an app whose session lapsed hears so.
 */
export async function storageCaller(c: Context<AppEnv>, role: KeyRole | null): Promise<Caller> {
  const authorization = c.req.header("authorization");
  const bearer = /^Bearer (\S+)$/i.exec(authorization ?? "")?.[1];
  const apikey = c.req.header("apikey") ?? bearer;
  if (role === "service_role" && (!authorization || bearer === apikey)) return { kind: "admin" };
  const caller = await identifyCaller(c);
  // The key again as the bearer (supabase-js sends it so while no one is signed in): an `sb_` key or an old JWT key.
  if (caller.kind !== "public" || !authorization || bearer?.startsWith("sb_") || bearer === apikey)
    return caller;
  // Not a token of the Nhost API: one this face's GoTrue issued (its issuer and audience are GoTrue's).
  // Only GoTrue's verdict on the token makes it no token (the key set unreadable is the request's 503).
  const claims = bearer
    ? await verifyGoTrueToken(c.var.config, bearer).catch((error: unknown) => {
        if (error instanceof GoTrueError) return null;
        throw error;
      })
    : null;
  // The old Supabase project's token after a move, admitted as on the GoTrue routes (gotrue/imported-tokens.ts).
  const old = !claims && bearer ? await importedGoTrueClaims(c.var.deps, bearer) : null;
  if (old) return userCaller(c, { sub: old.sub, [HASURA_NAMESPACE]: old.hasura }, bearer!);
  // A token bound to a key (DPoP) is not taken as a bearer token here either.
  if (!claims || (claims as { cnf?: unknown }).cnf !== undefined) {
    throw new StorageApiError(403, "InvalidJWT", "Unauthorized", "invalid JWT");
  }
  return userCaller(c, claims as Parameters<typeof userCaller>[1], bearer!);
}
