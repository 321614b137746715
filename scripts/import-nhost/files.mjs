// storage.buckets and storage.files → the wire's records, and the files' bytes: from a directory (what `aws s3 sync`
// of Nhost's bucket leaves: objects named by file id, directly or under the one root folder) or from the old Nhost
// Storage API. Bytes are streamed from the source to the service, never held whole in memory.
import { createReadStream } from "node:fs";
import { opendir, stat } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { withRetries } from "./api.mjs";
import { iso } from "./user-bundles.mjs";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function bucketRecord(row) {
  return {
    id: row.id,
    downloadExpiration: row.download_expiration,
    minUploadFileSize: row.min_upload_file_size,
    maxUploadFileSize: row.max_upload_file_size,
    cacheControl: row.cache_control ?? null,
    presignedUrlsEnabled: row.presigned_urls_enabled !== false,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

/** A storage.files row as the wire's FileRecord (etag keeps its double quotes, as Nhost stores it). */
export function fileRecord(row) {
  return {
    id: row.id,
    bucketId: row.bucket_id,
    name: row.name,
    size: row.size === null || row.size === undefined ? null : Number(row.size),
    mimeType: row.mime_type,
    etag: row.etag,
    isUploaded: row.is_uploaded === true,
    uploadedByUserId: row.uploaded_by_user_id ?? null,
    metadata: row.metadata ?? null,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

/** The `x-import-file` header: base64url of the record's JSON. */
export const fileHeader = (record) => Buffer.from(JSON.stringify(record)).toString("base64url");

/**
 * Where bytes come from. Each source has `find(id, record)` → {size} | null (null: not there) and `open(id, record)`
 * (the record: a source that addresses files by bucket and path reads them from it) → {size, body,
 * cancel} | null: `body()` gives a fresh stream each call (an upload that is retried reads again from the start),
 * `cancel()` drops what was opened and will not be sent.
 */
export function directorySource(dir) {
  let folders = null;
  /**
   * The first-level folders of DIR, read once: with the root folder, the objects are one level down. The listing is
   * streamed (opendir) and keeps only folder names, so a DIR holding a million objects directly costs no memory.
   * The promise is what is cached: concurrent uploads wait for the one listing rather than see it half done.
   */
  function subfolders() {
    folders ??= (async () => {
      const names = [];
      for await (const entry of await opendir(dir)) if (entry.isDirectory()) names.push(entry.name);
      return names.sort();
    })();
    return folders;
  }
  async function locate(id) {
    if (!UUID.test(id)) return null; // never a path outside DIR
    for (const path of [join(dir, id), ...(await subfolders()).map((folder) => join(dir, folder, id))]) {
      const found = await stat(path).catch(() => null);
      if (found?.isFile()) return { path, size: found.size };
    }
    return null;
  }
  return {
    describe: `--files-dir ${dir}`,
    find: locate,
    async open(id) {
      const found = await locate(id);
      return (
        found && {
          size: found.size,
          body: () => Readable.toWeb(createReadStream(found.path)),
          cancel: () => {},
        }
      );
    },
  };
}

/** Bytes from the old Nhost Storage API: `GET {base}/files/{id}` with its admin secret. */
export function storageApiSource(base, adminSecret) {
  const root = base.replace(/\/$/, "");
  return httpSource({
    describe: `--files-from ${root}`,
    urlOf: (id) => `${root}/files/${encodeURIComponent(id)}`,
    headers: { "x-hasura-admin-secret": adminSecret },
    refusedHint: " (is NHOST_ADMIN_SECRET the old project's admin secret?)",
  });
}

/**
 * Bytes over HTTP: `urlOf(id, record)` is a file's URL, `headers` what opens it, `missing(status, text)` whether an
 * answer means the file is not there (404 always).
 */
export function httpSource({ describe, urlOf, headers, refusedHint = "", missing = () => false }) {
  /** {response, size} | null (not there). Throws SourceError for other answers; `fatal` when the API does not answer. */
  const fetchFile = async (method, id, record) => {
    const url = urlOf(id, record);
    const { response, error } = await withRetries(() => fetch(url, { method, headers }));
    if (error) throw new SourceError(`cannot reach ${url}: ${error.cause?.code ?? error.message}`, true);
    if (response.status === 404) {
      await response.body?.cancel().catch(() => {});
      return null;
    }
    if (!response.ok) {
      const text = method === "HEAD" ? "" : await response.text().catch(() => "");
      if (missing(response.status, text)) return null;
      const refused = response.status === 401 || response.status === 403;
      throw new SourceError(
        `${method} ${url}: ${response.status} ${text.slice(0, 200)}`.trim() + (refused ? refusedHint : ""),
        refused,
        response.status,
      );
    }
    const length = response.headers.get("content-length");
    return { response, size: length === null ? null : Number(length) };
  };
  return {
    describe,
    async find(id, record) {
      try {
        const found = await fetchFile("HEAD", id, record);
        return found && { size: found.size };
      } catch (error) {
        if (error.status !== 405 && error.status !== 400) throw error;
        // No HEAD there: a GET whose body is dropped at once.
        const found = await fetchFile("GET", id, record);
        await found?.response.body?.cancel().catch(() => {});
        return found && { size: found.size };
      }
    },
    async open(id, record) {
      const first = await fetchFile("GET", id, record);
      if (!first) return null;
      let response = first.response;
      return {
        size: first.size,
        // The first try streams the download already started; a retried upload downloads again.
        body: () => {
          const body = response?.body ?? null;
          response = null;
          return body ?? streamOf(() => fetchFile("GET", id, record));
        },
        // Not sent after all (its size is wrong): the download started is dropped.
        cancel: () => response?.body?.cancel().catch(() => {}),
      };
    },
  };
}

/** A failure of the byte source; `fatal`: no file can come from it (unreachable, secret refused). */
export class SourceError extends Error {
  constructor(message, fatal = false, status = 0) {
    super(message);
    this.fatal = fatal;
    this.status = status;
  }
}

/** A ReadableStream whose bytes come from a download started on the first read. */
function streamOf(start) {
  let reader = null;
  return new ReadableStream({
    async pull(controller) {
      if (!reader) {
        const found = await start();
        if (!found) return controller.error(new Error("the file disappeared from the old storage"));
        reader = found.response.body.getReader();
      }
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => reader?.cancel(reason),
  });
}

/** Runs `task` over `items`, at most `limit` at once. */
export async function eachLimited(items, limit, task) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await task(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * A file's bytes to the service: `PUT /import/nhost/files/{id}`. Answers {outcome} or {notCarried: reason}; a failure
 * of the service itself (unreachable, 401, 5xx after retries) stops the run (api.failWith). SourceError: the bytes
 * could not be read.
 */
export async function uploadFile(api, record, source) {
  const opened = await source.open(record.id, record);
  if (!opened) return { notCarried: `bytes not found (${source.describe})` };
  if (opened.size !== null && opened.size !== record.size) {
    await opened.cancel();
    return {
      notCarried: `bytes differ in size: ${opened.size} at the source, ${record.size} in storage.files`,
    };
  }
  let answer;
  try {
    answer = await api.request("PUT", `/files/${encodeURIComponent(record.id)}`, {
      body: opened.body,
      headers: {
        "content-type": "application/octet-stream",
        "content-length": String(record.size),
        "x-import-file": fileHeader(record),
      },
      strict: false,
      // The source sent more or fewer bytes than it announced: trying again won't help.
      giveUp: (error) => error?.cause?.code === "UND_ERR_REQ_CONTENT_LENGTH_MISMATCH",
    });
  } catch (error) {
    if (error?.cause?.code === "UND_ERR_REQ_CONTENT_LENGTH_MISMATCH")
      return { notCarried: `bytes differ in size from storage.files (${record.size})` };
    throw error;
  }
  if (answer.ok) return { outcome: answer.answer?.outcome ?? "imported" };
  // A refusal of this one file (400 size mismatch, 404 bucket, 413 over a limit…): reported, the run goes on.
  if (answer.status >= 400 && answer.status < 500 && answer.status !== 401 && answer.status !== 403)
    return { notCarried: `refused by the service: ${answer.answer?.message ?? answer.text.slice(0, 200)}` };
  return api.failWith("PUT", answer);
}
