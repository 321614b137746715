/**
 * What the rest of the service may use of storage (the admin console shows and edits buckets and files). Everything
 * else in src/storage/ is internal to it (.dependency-cruiser.cjs).
 */

// The Supabase face's storage (src/faces/supabase/storage/): objects addressed by path over the same files.
export { allows, type Caller, identifyCaller, userCaller } from "./access";
export {
  BUCKET_DEFAULTS,
  createBucket,
  createBucketSchema,
  deleteBucket,
  toWireBucket,
  updateBucket,
  updateBucketSchema,
} from "./buckets";
export { deliverFile } from "./download";
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
export { publicReadPolicy, readPolicyFor } from "./hasura-permissions";
export { FITS, type Fit } from "./images/fit";
export { multipartParts } from "./multipart";
export { purgeObjectCache } from "./object-cache";
export { entryKey, type ListV2Entry, listObjectsV2 } from "./object-list-v2";
export {
  claimPath,
  findObject,
  type ListEntry,
  type ListQuery,
  listObjects,
  listScope,
  MAX_LIST_WINDOW,
  releasePath,
} from "./object-paths";
export {
  assertMayMakeUploadUrl,
  copyObject,
  emptyBucket,
  moveObject,
  type ObjectBody,
  putObject,
  readableObject,
  removeObjects,
} from "./object-writes";
export { type ObjectTokenClaims, signObjectToken, verifyObjectToken } from "./presign";
export { storeStream } from "./r2-writer";
export { forgetBucket, forgetFile } from "./record-cache";
export { findBucket, findFileWithBucket, initialObjectKey, toWireFile } from "./records";
export { appendResumable, cancelResumable, findResumable, MAX_CHUNK, startResumable } from "./resumable";
