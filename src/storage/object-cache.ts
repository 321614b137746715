import type { Deps } from "../http/deps";
import { StorageError } from "./errors";
import { deleteVariants } from "./images/variants";
import { findObject } from "./object-paths";
import { findBucket } from "./records";

/**
 * Storage's cache purge (storage-js `purgeCache`) for an object addressed by path. Nothing stands in front of the
 * service that keeps copies of an object, so the object itself needs no purge; what is kept are its transformed
 * images (R2 `_variants/<fileId>/…`), which `transformations` removes: the next request makes them again. An object
 * that is not there has nothing cached: that is done too, as Storage's purge of any path succeeds.
 */
export async function purgeObjectCache(
  deps: Deps,
  bucketId: string,
  path: string,
  transformations: boolean,
): Promise<void> {
  if (!(await findBucket(deps.shards.home, bucketId))) throw new StorageError(404, "bucket not found");
  if (!transformations) return;
  const found = await findObject(deps.shards, bucketId, path);
  if (found) await deleteVariants(deps.env.FILES, found.file.id);
}
