import type { Config } from "../config";
import type { FileRow } from "../db/schema";
import { logError } from "../http/context";
import type { Deps } from "../http/deps";
import type { Caller } from "./access";
import { type DeliveryPolicy, readPolicy } from "./download";
import { badRequest, fileNotFound, notAuthorized } from "./errors";
import {
  type Acting,
  askHasura,
  askHasuraIds,
  hasuraUnavailable,
  MAX_LISTED_IDS,
  type Verdict,
} from "./hasura-files";

/**
 * Storage permissions from Hasura (`STORAGE_PERMISSIONS=hasura`, contract move-in §5.1b): what Nhost Storage asks the
 * app's Hasura before it touches a file, asked the same way, so the app's permissions on `storage.files` carry over
 * unchanged (docs/hasura.md, "Storage permissions from Hasura"). The service asks before it changes anything of its
 * own: the D1 record and the R2 object change only after Hasura said yes. The bucket's own rules (storage contract
 * §4) are not consulted in this mode; its sizes and MIME types still are. No answer is cached: a permission the app
 * withdraws holds at the next request.
 *
 * - Reads (getFile, HEAD, a presigned URL; the Supabase face's downloads, `info`, signed URLs, and the source of a
 *   move or copy): `file(id)` under the caller's permissions; no row is `file not found` (no existence leak). A
 *   public URL asks as the unauthorized role; a list asks `files` of the bucket (`hasuraVisibleFiles`). The contents
 *   of a presigned URL ask nothing: the URL is the credential, signed for someone Hasura let see the file
 *   (hasura-storage reads that row with the admin secret).
 * - Writes: `insertFile`, `updateFile` (a replace; the Supabase face's move, with the new bucket and name),
 *   `deleteFile` under the caller's permissions; a refusal, or no row the permission's filter lets through, is 403
 *   `you are not authorized`.
 * - The admin secret reads without asking (it reads everything) and writes as the service, so the app's row stays in
 *   step with the file.
 */

export const decidedByHasura = (config: Config) => config.storage.permissions === "hasura";

/** The service's own permissions: what hasura-storage does with the admin secret. */
const SERVICE: Acting = { kind: "service" };

const actingFor = (caller: Caller): Acting => (caller.kind === "admin" ? SERVICE : caller);

/** Ids are UUIDs (`uuid` in Hasura): anything else names no file, and is not sent. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A write's verdict as the answer: yes goes on; the service itself finding no row is fine (nothing to keep). */
function allowWrite(verdict: Verdict, acting: Acting): void {
  if (verdict.is === "done" || (verdict.is === "none" && acting.kind === "service")) return;
  if (verdict.is === "rejected") throw badRequest(`the app's database refused the file: ${verdict.message}`);
  throw notAuthorized();
}

/** getFile, HEAD and presign: the caller's select permission decides; what it cannot see is not found. */
export async function hasuraMayRead(deps: Deps, caller: Caller, id: string): Promise<void> {
  if (caller.kind === "admin") return;
  if (!UUID.test(id)) throw fileNotFound();
  const verdict = await askHasura(deps, caller, "file", { id });
  if (verdict.is !== "done") throw fileNotFound();
}

/**
 * getFile's policy under Hasura: asked before the record is read. The answer depended on the caller's token, so no
 * cache between the service and the client keeps it (file-headers.ts).
 */
export async function hasuraReadPolicy(deps: Deps, caller: Caller, id: string): Promise<DeliveryPolicy> {
  await hasuraMayRead(deps, caller, id);
  return ({ bucket }) => ({ cacheControl: bucket.cacheControl, shared: false });
}

/** A download's policy in either mode: Hasura's select permission (asked now), else the bucket's read rule. */
export async function readPolicyFor(deps: Deps, caller: Caller, id: string): Promise<DeliveryPolicy> {
  return decidedByHasura(deps.config) ? hasuraReadPolicy(deps, caller, id) : readPolicy(caller);
}

/**
 * A public URL's policy (the Supabase face's `object/public`): a bucket whose read rule is `public`. Under Hasura the
 * bucket's rules are not consulted: what Hasura's unauthorized role may select is public, as in Nhost, asked each
 * time (a shared cache would keep a withdrawn permission).
 */
export async function publicReadPolicy(deps: Deps, id: string): Promise<DeliveryPolicy> {
  if (decidedByHasura(deps.config)) return hasuraReadPolicy(deps, { kind: "public" }, id);
  return ({ bucket }) => {
    if (bucket.rules.read !== "public") throw fileNotFound();
    return { cacheControl: bucket.cacheControl, shared: true };
  };
}

/**
 * The files of a bucket the caller's select permission lets them see (the Supabase face's `list`), by id: none when
 * the role may not select at all. A caller who may see more than `MAX_LISTED_IDS` of one bucket's files is refused
 * rather than shown a part of them as if it were all (Hasura knows no paths to narrow the question by folder).
 */
export async function hasuraVisibleFiles(deps: Deps, caller: Caller, bucketId: string): Promise<string[]> {
  const ids = await askHasuraIds(deps, caller, bucketId);
  if (ids === null) return [];
  if (ids.length > MAX_LISTED_IDS) {
    throw badRequest(
      `more than ${MAX_LISTED_IDS} files of this bucket are visible to the caller: under STORAGE_PERMISSIONS=hasura ` +
        `list reads at most ${MAX_LISTED_IDS}; ask the app's GraphQL API for the rest`,
    );
  }
  return ids.filter((id) => UUID.test(id));
}

/**
 * An upload's row under the caller's insert permission, with the columns hasura-storage's `InsertFile` sends (id,
 * bucket, name, MIME type, size); `uploadedByUserId` is the app's to set, as in Nhost: a column preset from
 * `X-Hasura-User-Id`. `isUploaded` keeps its default, false, until `hasuraCompleteUpload`.
 */
export async function hasuraInsertFile(
  deps: Deps,
  caller: Caller,
  row: { id: string; bucketId: string; name: string; mimeType: string; size: number },
): Promise<void> {
  const acting = actingFor(caller);
  const verdict = await askHasura(deps, acting, "insertFile", { object: row });
  // No row back is still an insert: a role may insert rows its select permission does not show it.
  if (verdict.is === "none") return;
  allowWrite(verdict, acting);
}

type FileColumns = Pick<FileRow, "bucketId" | "etag" | "mimeType" | "name" | "size"> & {
  /** Sent only when the request gave one (hasura-storage leaves the column alone otherwise). */
  metadata?: FileRow["metadata"];
};

const setOf = (columns: FileColumns) => ({
  bucketId: columns.bucketId,
  etag: columns.etag,
  isUploaded: true,
  mimeType: columns.mimeType,
  name: columns.name,
  size: columns.size,
  ...(columns.metadata === undefined ? {} : { metadata: columns.metadata }),
});

/**
 * The row of a file just stored, completed as the service (hasura-storage's `PopulateMetadata` uses the admin
 * secret): its ETag, and uploaded. The row must be there: the insert a moment ago made it.
 */
export async function hasuraCompleteUpload(deps: Deps, id: string, columns: FileColumns): Promise<void> {
  const verdict = await askHasura(deps, SERVICE, "updateFile", { id, _set: setOf(columns) });
  if (verdict.is !== "done") throw hasuraUnavailable(`updateFile: the row of ${id} could not be completed`);
}

/** replaceFile: the new columns under the caller's update permission (its filter, and its check on the new values). */
export async function hasuraReplaceFile(
  deps: Deps,
  caller: Caller,
  id: string,
  columns: FileColumns,
): Promise<void> {
  const acting = actingFor(caller);
  allowWrite(await askHasura(deps, acting, "updateFile", { id, _set: setOf(columns) }), acting);
}

/** deleteFile: the caller's delete permission. */
export async function hasuraDeleteFile(deps: Deps, caller: Caller, id: string): Promise<void> {
  const acting = actingFor(caller);
  allowWrite(await askHasura(deps, acting, "deleteFile", { id }), acting);
}

/**
 * Undoing: rows this request inserted whose file will not be kept go again, as the service (hasura-storage deletes
 * the row when the bytes could not be stored). Best effort: a Hasura that fails here is logged, and the row it keeps
 * says `isUploaded: false`, which is what hasura-storage leaves on the same failure.
 */
export async function hasuraForgetFiles(deps: Deps, ids: string[]): Promise<void> {
  for (const id of ids) {
    await askHasura(deps, SERVICE, "deleteFile", { id }).catch((error) =>
      logError(deps.requestId, "storage-hasura-undo", error, "warn"),
    );
  }
}

/**
 * After a replace lost its race (storage/replace.ts), the row it updated is set back to the record that won, as the
 * service. Best effort, logged.
 */
export async function hasuraSyncFile(deps: Deps, file: FileRow): Promise<void> {
  await askHasura(deps, SERVICE, "updateFile", { id: file.id, _set: setOf(file) }).catch((error) =>
    logError(deps.requestId, "storage-hasura-undo", error, "warn"),
  );
}
