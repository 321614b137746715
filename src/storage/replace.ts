import { eq } from "drizzle-orm";
import { z } from "zod";
import { files } from "../db/schema";
import type { Deps } from "../services/deps";
import { allows, type Caller } from "./access";
import { badRequest, fileNotFound, notAuthorized } from "./errors";
import { deleteVariants } from "./images/variants";
import { multipartParts, readSmallPart } from "./multipart";
import type { StoredObject } from "./r2-writer";
import { forgetFile } from "./record-cache";
import { findFileWithBucket, objectKey, toWireFile, type WireFile } from "./records";
import { storeContent } from "./upload";

const replaceMetadata = z.object({
  name: z.string().min(1).max(1024).optional(),
  metadata: z.record(z.string(), z.unknown()).nullable().optional(),
});

function parseReplaceMetadata(text: string): z.infer<typeof replaceMetadata> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw badRequest("metadata must be JSON");
  }
  const parsed = replaceMetadata.safeParse(json);
  if (!parsed.success) throw badRequest(`metadata: ${parsed.error.issues[0]?.message ?? "invalid"}`);
  return parsed.data;
}

/**
 * replaceFile (`PUT /files/{id}`): new bytes for the same id (and optionally a new name and metadata). The bytes go
 * to the same R2 key, which R2 swaps only when the write completes: a refused or broken upload leaves the old
 * file whole. The first `file` part is used; further ones are read past and ignored (docs/decisions.md).
 */
export async function replaceFile(
  deps: Deps,
  request: Request,
  id: string,
  caller: Caller,
): Promise<WireFile> {
  const found = await findFileWithBucket(deps.db, id);
  if (!found) throw fileNotFound();
  const { file, bucket } = found;
  if (!allows(bucket.rules.update, caller, file.uploadedByUserId)) throw notAuthorized();
  let entry: z.infer<typeof replaceMetadata> = {};
  let stored: (StoredObject & { filename: string }) | undefined;
  let failure: unknown;
  try {
    for await (const part of multipartParts(request)) {
      if (part.kind === "field") {
        if (part.name === "metadata") entry = parseReplaceMetadata(part.value);
      } else if (part.name === "metadata") {
        entry = parseReplaceMetadata(await readSmallPart(part.stream, 64 * 1024));
      } else if (part.name === "file" && !stored) {
        stored = { ...(await storeContent(deps, bucket, objectKey(file), part)), filename: part.filename };
      } else {
        part.stream.resume();
      }
    }
  } catch (error) {
    // New bytes already in R2 must be recorded even if a later part is broken, or the record would lie.
    if (!stored) throw error;
    failure = error;
  }
  if (!stored) throw badRequest("a file part is required");
  const row = await deps.db
    .update(files)
    .set({
      name: entry.name ?? (stored.filename || file.name),
      size: stored.size,
      mimeType: stored.mimeType,
      etag: stored.etag,
      isUploaded: true,
      metadata: entry.metadata === undefined ? file.metadata : entry.metadata,
      updatedAt: deps.now(),
    })
    .where(eq(files.id, file.id))
    .returning()
    .get();
  forgetFile(file.id);
  // Variants of the old bytes are unreachable now (their keys carry the old MD5): remove them.
  deps.background(deleteVariants(deps.env.FILES, file.id));
  if (failure) throw failure;
  return toWireFile(row!);
}
