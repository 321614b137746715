import { ERRORS } from "../errors";
import type { Deps } from "../http/deps";
import { GraphqlUnavailable, postGraphql } from "../lib/graphql-request";
import type { Caller } from "./access";
import { StorageError } from "./errors";

/**
 * The app's `storage.files` rows through its Hasura (contract move-in §5.1b), by the root fields Nhost's Hasura
 * metadata gives the table and Nhost Storage (hasura-storage) asks: `file`, `insertFile`, `updateFile`, `deleteFile`;
 * and `files`, which the Supabase face's `list` asks (a Nhost app lists its files through Hasura the same way).
 * A request runs under someone's permissions: the caller's, as hasura-storage forwards them (the access token as
 * `Authorization`, the role it acts as as `x-hasura-role`; without a token no header, so Hasura applies its
 * unauthorized role), or the service's own (`x-hasura-admin-secret`), for what hasura-storage also does as the admin.
 * Each selects `id` only: the row's other columns are the service's to serve, Hasura only says yes or no.
 */

/** As short as the claims query's: a storage request waits on it. */
export const HASURA_FILES_TIMEOUT_MS = 2_000;
const MAX_ANSWER_BYTES = 64 * 1024;

const DOCUMENTS = {
  file: "query GetFile($id: uuid!) { file(id: $id) { id } }",
  insertFile: "mutation InsertFile($object: files_insert_input!) { insertFile(object: $object) { id } }",
  updateFile:
    "mutation UpdateFile($id: uuid!, $_set: files_set_input!) { updateFile(pk_columns: {id: $id}, _set: $_set) { id } }",
  deleteFile: "mutation DeleteFile($id: uuid!) { deleteFile(id: $id) { id } }",
} as const;
export type FileField = keyof typeof DOCUMENTS;

/** Whose permissions a request runs under: a caller's, or the service's (the admin secret). */
export type Acting = Caller | { kind: "service" };

/**
 * What Hasura said: `done` (the field answered a row), `none` (null: no row the permission's filter lets through,
 * or none at all), `refused` (the role may not: a failed check, a field or column the role lacks, a role it may not
 * take), or `rejected` (the app's database refused the values: a constraint, a malformed value), with its message.
 */
export type Verdict =
  | { is: "done" }
  | { is: "none" }
  | { is: "refused" }
  | { is: "rejected"; message: string };

/** Hasura's codes for "this role may not" (hasura-storage answers them 403 too). */
const REFUSED = new Set(["access-denied", "validation-failed", "permission-error"]);
/** Hasura's codes for "the database refused these values" (hasura-storage answers them 400 too). */
const REJECTED = new Set(["constraint-violation", "data-exception"]);

/**
 * 503 in the storage error shape, with `Retry-After`, when Hasura gives no usable answer: unreachable, too slow, not
 * a 200, not GraphQL, or an error that says nothing about permissions (a token it does not accept: its JWT settings
 * do not list the service's keys; an internal error). Never taken as a yes, and never as a no either.
 */
export const hasuraUnavailable = (reason: string) =>
  new StorageError(503, ERRORS["service-unavailable"][1], {
    headers: { "Retry-After": "5" },
    reason: `storage permissions from Hasura: ${reason}`,
  });

function headersFor(deps: Deps, acting: Acting): Record<string, string> {
  if (acting.kind === "admin" || acting.kind === "service") {
    // Required with STORAGE_PERMISSIONS=hasura (config.ts).
    return { "x-hasura-admin-secret": deps.config.hasura.adminSecret ?? "" };
  }
  if (acting.kind === "public") return {};
  return {
    authorization: `Bearer ${acting.token}`,
    ...(acting.role ? { "x-hasura-role": acting.role } : {}),
  };
}

/** What one question came back with: the answer's data, or Hasura's word on why it gave none. */
type Answer =
  | { data: Record<string, unknown> | null }
  | { is: "refused" }
  | { is: "rejected"; message: string };

/**
 * Sends `query` under `acting`'s permissions. A user whose token carries no Hasura claims (a Supabase-face session
 * still owing its second factor, docs/supabase.md "MFA") acts as no role Hasura takes: Hasura would answer an error
 * about the token, which reads as an outage here, so it is refused without asking, as Hasura refuses it.
 */
async function ask(
  deps: Deps,
  acting: Acting,
  what: string,
  request: { query: string; variables: Record<string, unknown>; maxBytes: number },
): Promise<Answer> {
  if (acting.kind === "user" && acting.role === "") return { is: "refused" };
  let answer: Awaited<ReturnType<typeof postGraphql>>;
  try {
    answer = await postGraphql(
      deps,
      { query: request.query, variables: request.variables, headers: headersFor(deps, acting) },
      { timeoutMs: HASURA_FILES_TIMEOUT_MS, maxBytes: request.maxBytes },
    );
  } catch (error) {
    if (error instanceof GraphqlUnavailable) throw hasuraUnavailable(`${what}: ${error.reason}`);
    throw error;
  }
  const [first] = answer.errors;
  if (first) {
    if (first.code && REFUSED.has(first.code)) return { is: "refused" };
    if (first.code && REJECTED.has(first.code)) return { is: "rejected", message: first.message };
    throw hasuraUnavailable(`${what}: ${first.code ?? "error"}: ${first.message}`);
  }
  return { data: answer.data };
}

/** Sends `field`'s document under `acting`'s permissions. Throws the 503 when there is no verdict to be had. */
export async function askHasura(
  deps: Deps,
  acting: Acting,
  field: FileField,
  variables: Record<string, unknown>,
): Promise<Verdict> {
  const answer = await ask(deps, acting, field, {
    query: DOCUMENTS[field],
    variables,
    maxBytes: MAX_ANSWER_BYTES,
  });
  if ("is" in answer) return answer;
  const row = answer.data?.[field];
  if (row === null) return { is: "none" };
  if (typeof row === "object" && row !== undefined && typeof (row as { id?: unknown }).id === "string") {
    return { is: "done" };
  }
  throw hasuraUnavailable(`${field}: the answer has no data.${field} row`);
}

/** The most file ids one `files` question reads: a bucket's ids as Hasura answers them, about 45 bytes each. */
export const MAX_LISTED_IDS = 10_000;
const LIST_DOCUMENT =
  "query ListFiles($where: files_bool_exp!, $limit: Int!) { files(where: $where, limit: $limit) { id } }";

/**
 * The ids of `bucketId`'s rows `acting` may select (Nhost's root field `files`, with a `where` on the bucket), at
 * most `MAX_LISTED_IDS + 1` of them so that the caller can tell there were more. Null when the role may not select
 * (no `files` field, or no `bucketId` column, for it).
 */
export async function askHasuraIds(deps: Deps, acting: Acting, bucketId: string): Promise<string[] | null> {
  const answer = await ask(deps, acting, "files", {
    query: LIST_DOCUMENT,
    variables: { where: { bucketId: { _eq: bucketId } }, limit: MAX_LISTED_IDS + 1 },
    maxBytes: (MAX_LISTED_IDS + 1) * 64 + 1024,
  });
  if ("is" in answer) {
    if (answer.is === "refused") return null;
    throw hasuraUnavailable(`files: ${answer.message}`);
  }
  const rows = answer.data?.files;
  if (!Array.isArray(rows)) throw hasuraUnavailable("files: the answer has no data.files list");
  return rows.flatMap((row: { id?: unknown } | null) => (typeof row?.id === "string" ? [row.id] : []));
}
