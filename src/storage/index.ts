/**
 * What the rest of the service may use of storage (the admin console shows and edits buckets and files). Everything
 * else in src/storage/ is internal to it (.dependency-cruiser.cjs).
 */
export { BUCKET_DEFAULTS, deleteBucket, toWireBucket, updateBucket, updateBucketSchema } from "./buckets";
export { StorageError } from "./errors";
export { listBucketFiles, listBucketsWithCounts, previewUrl, removeFile } from "./file-admin";
// Where a file's record lives with several shards (the Nhost import writes records too).
export {
  bucketAnchor,
  fileEntry,
  fileOwner,
  inFileShard,
  placeNewFile,
  releaseDeleted,
  releaseUnused,
} from "./file-shards";
export { storeStream } from "./r2-writer";
export { forgetBucket, forgetFile } from "./record-cache";
export { findBucket, findFileWithBucket, initialObjectKey, toWireFile } from "./records";
