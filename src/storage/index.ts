/**
 * What the rest of the service may use of storage (the admin console shows and edits buckets and files). Everything
 * else in src/storage/ is internal to it (.dependency-cruiser.cjs).
 */
export { toWireBucket, updateBucket, updateBucketSchema } from "./buckets";
export { StorageError } from "./errors";
export { listBucketFiles, listBucketsWithCounts, previewUrl, removeFile } from "./file-admin";
export { findBucket, findFileWithBucket, toWireFile } from "./records";
