import type { Readable } from "node:stream";
import type { BucketRow } from "../db/schema";
import { buckets } from "../db/schema";
import type { Deps } from "../http/deps";
import { randomUuid } from "../lib/crypto";
import { allows, type Caller } from "./access";
import { badRequest, bucketNotFound, notAuthorized, StorageError } from "./errors";
import { mintFileId, type PlacedFile, randomSlot, reservedOrForgotten } from "./file-shards";
import { decidedByHasura } from "./hasura-permissions";
import { MalformedUpload, multipartParts, readSmallPart } from "./multipart";
import { findBucket, type WireFile } from "./records";
import { type ContentRules, loosestRules } from "./store-content";
import { stageBytes } from "./upload-hasura";
import {
  discard,
  discardLostPublish,
  type Held,
  type MetadataEntry,
  parseMetadata,
  publish,
  storeFile,
} from "./upload-records";
import { type FormFile, recordedOrForgotten, settleAll } from "./upload-settle";

/** Which ids an upload gives the files the client names none for: its uploader's slot, or one drawn for it. */
function idsFor(caller: Caller): () => string {
  const uploaderId = caller.kind === "user" ? caller.id : null;
  const slot = randomSlot();
  return () => mintFileId(uploaderId, slot);
}

async function uploadBucket(deps: Deps, bucketId: string, caller: Caller): Promise<BucketRow> {
  const bucket = await findBucket(deps.shards.home, bucketId);
  if (!bucket) throw bucketNotFound();
  // Under Hasura, its insert permission decides, file by file (upload-hasura.ts).
  if (!decidedByHasura(deps.config) && !allows(bucket.rules.upload, caller)) throw notAuthorized();
  return bucket;
}

/** Where the files of an upload are stored as they arrive, and under which size and type rules. */
interface Target {
  bucket: BucketRow;
  rules: ContentRules;
  /** `rules` are the bucket's own (else they are looser, and the bucket's apply at the end: upload-settle.ts). */
  exact: boolean;
}

/**
 * A `bucket-id` before the first file names the bucket (nhost-js 4.x sends it first). Without one, the files go to
 * `default` unless a `bucket-id` comes after them (nhost-js 3.x sends it last): they stream under what at least one
 * bucket the caller may upload to accepts, and a caller no bucket lets upload is refused at once (403), before a
 * byte is stored. With one such bucket (the usual case) its rules are applied as the bytes stream, as before.
 */
async function uploadTarget(deps: Deps, named: string | undefined, caller: Caller): Promise<Target> {
  if (named !== undefined) {
    const bucket = await uploadBucket(deps, named, caller);
    return { bucket, rules: bucket, exact: true };
  }
  const all = await deps.shards.home.select().from(buckets).all();
  const bucket = all.find(({ id }) => id === "default");
  if (!bucket) throw bucketNotFound();
  const open = decidedByHasura(deps.config) ? all : all.filter((b) => allows(b.rules.upload, caller));
  if (open.length === 0) throw notAuthorized();
  return { bucket, rules: loosestRules(open), exact: open.length === 1 && open[0] === bucket };
}

/**
 * One file part, stored as it arrives with what the form said before it: a record reserved under its id (the one
 * its metadata[] names, else a new one) and its bytes under that record's key; under Hasura, the bytes alone until
 * the form is read, unless its metadata[] and bucket are known already (then as before: upload-hasura.ts).
 */
async function storePart(
  deps: Deps,
  target: Target,
  part: { filename: string; mimeType: string; stream: Readable },
  entry: MetadataEntry | undefined,
  caller: Caller,
  newId: () => string,
  index: number,
): Promise<FormFile> {
  const file = { index, filename: part.filename, entry, bucket: target.bucket, exact: target.exact };
  const { bucket, rules } = target;
  if (!decidedByHasura(deps.config)) {
    const placed = await reservedOrUndone(deps, entry?.id, caller, newId, (ids, attempt) =>
      storeFile(deps, bucket, rules, part, entry, caller, ids, attempt),
    );
    return { ...file, placed };
  }
  if (entry && target.exact) {
    // storeFileUnderHasura's two steps: the record's undo knows it by the staged bytes' key (upload-settle.ts).
    const id = entry.id ?? newId();
    const staged = await stageBytes(deps, bucket, bucket.id, id, part);
    const placed = await recordedOrForgotten(
      deps,
      bucket,
      staged,
      { ...entry, id, minted: !entry.id },
      caller,
    );
    return { ...file, placed };
  }
  return { ...file, staged: await stageBytes(deps, rules, bucket.id, entry?.id ?? newId(), part) };
}

/**
 * One file's record reserved and its bytes stored by `store`, under the id the client chose or one drawn from
 * `newId`. When that fails other than by a refusal, the reservation D1 may have made although its answer was lost
 * goes (file-shards.ts `forgetLostReservation`): the 503's retry can reserve the same id again.
 */
async function reservedOrUndone(
  deps: Deps,
  chosenId: string | undefined,
  caller: Caller,
  newId: () => string,
  store: (newId: () => string, attempt: string) => Promise<PlacedFile>,
): Promise<PlacedFile> {
  const since = deps.now();
  const attempt = randomUuid();
  let drawn: string | undefined;
  const reserving = () => {
    const id = chosenId ?? drawn;
    const uploaderId = caller.kind === "user" ? caller.id : null;
    return id === undefined ? undefined : { id, uploaderId, minted: chosenId === undefined, since, attempt };
  };
  return reservedOrForgotten(deps.shards, reserving, () =>
    store(() => {
      drawn = newId();
      return drawn;
    }, attempt),
  );
}

/**
 * Makes the files of the upload visible. If D1 fails at that they go, made visible or not (its answer may have been
 * lost after it did), with their claims and bytes (upload-records.ts `discardLostPublish`): no file is left without
 * the answer that it was uploaded, nor without its bytes, and the 503's retry uploads them again under the same ids.
 */
async function publishedOrDiscarded(deps: Deps, kept: PlacedFile[]): Promise<WireFile[]> {
  try {
    return await publish(deps, kept);
  } catch (error) {
    await discardLostPublish(deps, kept);
    throw error;
  }
}

/**
 * With any metadata[] sent there must be exactly one per file, wherever each comes in the form. The message names
 * the part that is extra.
 */
function pairingFailure(entries: number, filesSeen: number): MalformedUpload | undefined {
  if (entries === 0 || entries === filesSeen) return undefined;
  if (filesSeen > entries)
    return new MalformedUpload(`file[] part ${entries + 1} has no metadata[] part (${entries} sent)`);
  return new MalformedUpload(`metadata[] part ${filesSeen + 1} has no file[] part (${filesSeen} sent)`);
}

/**
 * The answer to a failed upload, after what it held is kept or removed. A file refused by a rule (size, type, a
 * taken id) keeps the files before it, listed in `processedFiles`, when the form came in order (every part before
 * the file it applies to). A form that came out of order keeps nothing: the parts that would have settled the files
 * before the failure may not have been read. A malformed form (cut short, parts that do not pair) keeps nothing.
 */
async function failed(deps: Deps, error: unknown, kept: PlacedFile[], rest: Held[], inOrder: boolean) {
  if (inOrder && error instanceof StorageError && !(error instanceof MalformedUpload)) {
    await discard(deps, rest);
    return new StorageError(error.status, error.message, {
      data: error.data,
      extra: { processedFiles: await publishedOrDiscarded(deps, kept) },
      // A 503's Retry-After, and the cause for the log.
      headers: error.headers,
      reason: error.reason,
    });
  }
  await discard(deps, [...kept.map((placed) => ({ placed })), ...rest]);
  if (!(error instanceof StorageError)) return error;
  if (error instanceof MalformedUpload)
    return new StorageError(400, error.message, { extra: { processedFiles: [] } });
  return new StorageError(error.status, error.message, {
    data: error.data,
    extra: { processedFiles: [] },
    headers: error.headers,
    reason: error.reason,
  });
}

/**
 * uploadFiles (`POST /files`): the parts in any order (upload-settle.ts). Each file is stored as it arrives, then
 * all are settled in order once the form is read, and become visible together.
 */
export async function uploadFiles(deps: Deps, request: Request, caller: Caller): Promise<WireFile[]> {
  const form: FormFile[] = [];
  const newId = idsFor(caller);
  const entries: MetadataEntry[] = [];
  let bucketId = "default";
  let named: string | undefined;
  let inOrder = true;
  let target: Target | undefined;
  try {
    for await (const part of multipartParts(request)) {
      if (part.name === "metadata[]") {
        // Its file came first: the form is out of order (before parsing it, which may fail).
        if (entries.length < form.length) inOrder = false;
        // Node clients send each metadata[] as a field, browsers as a Blob with an empty file name (client.md §11).
        const text = part.kind === "field" ? part.value : await readSmallPart(part.stream, 64 * 1024);
        entries.push(parseMetadata(text));
      } else if (part.kind === "field") {
        if (part.name !== "bucket-id") continue;
        bucketId = part.value;
        if (form.length > 0) inOrder = false;
        else named = bucketId;
      } else if (part.name === "file[]") {
        target ??= await uploadTarget(deps, named, caller);
        form.push(await storePart(deps, target, part, entries[form.length], caller, newId, form.length + 1));
      } else {
        part.stream.resume(); // not ours: let the parser move past it
      }
    }
  } catch (error) {
    // Files stored before the failure are settled with what the form said so far (when it came in order).
    const settled =
      inOrder && target ? await settleAll(deps, form, entries, target.bucket, caller) : undefined;
    throw await failed(deps, settled?.failure ?? error, settled?.kept ?? [], settled?.rest ?? form, inOrder);
  }
  const malformed = pairingFailure(entries.length, form.length);
  if (malformed) throw await failed(deps, malformed, [], form, false);
  if (!target) throw badRequest("no file[] part in the upload");
  let bucket = target.bucket;
  if (bucketId !== bucket.id) {
    try {
      bucket = await uploadBucket(deps, bucketId, caller);
    } catch (error) {
      throw await failed(deps, error, [], form, inOrder);
    }
  }
  const { kept, rest, failure } = await settleAll(deps, form, entries, bucket, caller);
  if (failure) throw await failed(deps, failure, kept, rest, inOrder);
  return publishedOrDiscarded(deps, kept);
}
