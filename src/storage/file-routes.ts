import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../http/app-env";
import { operation } from "../http/documented";
import { allows, identifyCaller } from "./access";
import { deliverFile } from "./download";
import { fileNotFound, notAuthorized, StorageError } from "./errors";
import { removeFile } from "./file-admin";
import { decidedByHasura, hasuraDeleteFile, hasuraMayRead, readPolicyFor } from "./hasura-permissions";
import { presignedUrl, verifyPresigned } from "./presign";
import { findFileWithBucket, wireFileSchema } from "./records";
import { replaceFile } from "./replace";
import { uploadFiles } from "./upload";

const presignedDisabled = () =>
  new StorageError(403, "presigned URLs are not enabled on the bucket where this file is located in");

/** What the descriptions add for `STORAGE_PERMISSIONS=hasura` (contract move-in §5.1b). */
const underHasura = (permission: string) =>
  ` Under \`STORAGE_PERMISSIONS=hasura\`, the app's Hasura decides instead (its ${permission} permission on ` +
  "`storage.files`, asked with the caller's token); 503 when it does not answer.";

const fileBinary = (description: string) => ({ description, media: "binary" as const });
const DOWNLOAD_ANSWERS = {
  200: fileBinary(
    "The bytes, with `ETag`, `Last-Modified`, `Cache-Control` and `Content-Disposition`; an image transformed when asked.",
  ),
  206: fileBinary("The requested byte range (`Range: bytes=…`)."),
  304: { description: "Not modified (`If-None-Match`, `If-Modified-Since`).", media: "empty" as const },
  412: { description: "A precondition failed (`If-Match`, `If-Unmodified-Since`).", media: "empty" as const },
  416: { description: "The range cannot be served.", media: "empty" as const },
};
const transformQuery = z.object({
  w: z.string().optional().describe("Width in pixels"),
  h: z.string().optional().describe("Height in pixels"),
  q: z.string().optional().describe("Quality 1-100"),
  b: z.string().optional().describe("Blur"),
  f: z.string().optional().describe("Format: auto, jpeg, png, webp, avif"),
});

/** The file operations of storage contract §2. */
export const fileRoutes = new Hono<AppEnv>()
  .post(
    "/files",
    operation({
      summary: "Upload files",
      description:
        "*multipart*: `file[]` parts, an optional `bucket-id` part and, if any, one `metadata[]` JSON part (`id`, " +
        "`name`, `metadata`) per file, paired by order, the parts in any order (nhost-js 4.x sends `bucket-id` and " +
        "every `metadata[]` first, 3.x each `metadata[]` after its file and `bucket-id` last). The bucket's rules " +
        "decide who may (403), its sizes and MIME types what (400); the MIME type is sniffed from the bytes. Streamed " +
        "into R2. A form whose parts came in order keeps the files before one a rule refuses; one out of order keeps " +
        "nothing when it fails." +
        underHasura("insert"),
      security: "optional-bearer",
      request: {
        target: "multipart",
        schema: z.object({
          "bucket-id": z.string().optional(),
          "metadata[]": z.array(z.string()).optional(),
          "file[]": z.array(z.string().meta({ format: "binary", description: "A file's bytes" })),
        }),
      },
      answers: {
        201: {
          description: "The files as stored.",
          schema: z.object({ processedFiles: z.array(wireFileSchema) }),
        },
      },
    }),
    async (c) => {
      const processedFiles = await uploadFiles(c.var.deps, c.req.raw, await identifyCaller(c));
      return c.json({ processedFiles }, 201);
    },
  )
  .on(
    ["GET", "HEAD"],
    "/files/:id",
    operation({
      summary: "Download a file",
      description:
        "The file's bytes if the bucket's read rule lets the caller (else 404, also for a file that exists: a 403 " +
        "would confirm it). Conditional requests and byte ranges; images transform with `w`, `h`, `q`, `b` and `f` " +
        "(`f=auto` follows `Accept`)." +
        underHasura("select"),
      security: "optional-bearer",
      request: { target: "query", schema: transformQuery },
      answers: DOWNLOAD_ANSWERS,
    }),
    async (c) => {
      const { deps } = c.var;
      const [id, caller] = [c.req.param("id"), await identifyCaller(c)];
      return deliverFile(deps, c.req.raw, id, await readPolicyFor(deps, caller, id));
    },
  )
  .put(
    "/files/:id",
    operation({
      summary: "Replace a file's contents",
      description:
        "*multipart*, one `file[]` (and an optional `metadata[]`): new bytes under the same id. The update rule applies (403)." +
        underHasura("update"),
      security: "optional-bearer",
      answers: { 200: { description: "The file as it is now.", schema: wireFileSchema } },
    }),
    async (c) => c.json(await replaceFile(c.var.deps, c.req.raw, c.req.param("id"), await identifyCaller(c))),
  )
  .delete(
    "/files/:id",
    operation({
      summary: "Delete a file",
      description:
        "The record, its bytes and its cached image variants. The delete rule applies (403)." +
        underHasura("delete"),
      security: "optional-bearer",
      answers: { 204: { description: "Deleted.", media: "empty" } },
    }),
    async (c) => {
      const { deps } = c.var;
      const found = await findFileWithBucket(deps.shards, c.req.param("id"));
      if (!found) throw fileNotFound();
      const caller = await identifyCaller(c);
      // A write path: the contract answers 403 here, where read paths hide the file behind a 404. Under Hasura, its
      // delete permission decides, and the record and bytes go only once the app's row went.
      if (decidedByHasura(deps.config)) await hasuraDeleteFile(deps, caller, found.file.id);
      else if (!allows(found.bucket.rules.delete, caller, found.file.uploadedByUserId)) throw notAuthorized();
      await removeFile(deps, found.file.id, found.db);
      return c.body(null, 204);
    },
  )
  .get(
    "/files/:id/presignedurl",
    operation({
      summary: "A presigned URL",
      description:
        "A URL that downloads the file without a token until it expires (the bucket's `downloadExpiration`, seconds). " +
        "403 when the bucket has presigned URLs off; 404 when the read rule does not let the caller." +
        underHasura("select"),
      security: "optional-bearer",
      answers: {
        200: {
          description: "The URL and its lifetime.",
          schema: z.object({ url: z.string(), expiration: z.number().int() }),
        },
      },
    }),
    async (c) => {
      const { deps } = c.var;
      const [id, caller] = [c.req.param("id"), await identifyCaller(c)];
      const hasura = decidedByHasura(deps.config);
      // Under Hasura, asked before the record is read: what the caller cannot see is not found, existing or not.
      if (hasura) await hasuraMayRead(deps, caller, id);
      const found = await findFileWithBucket(deps.shards, id);
      if (!found || (!hasura && !allows(found.bucket.rules.read, caller, found.file.uploadedByUserId))) {
        throw fileNotFound();
      }
      if (!found.bucket.presignedUrlsEnabled) throw presignedDisabled();
      return c.json(
        await presignedUrl(deps.config, found.file.id, found.bucket.downloadExpiration, deps.now()),
      );
    },
  )
  .on(
    ["GET", "HEAD"],
    "/files/:id/presignedurl/contents",
    operation({
      summary: "Download through a presigned URL",
      description:
        "The URL's signature is the credential (a wrong or expired one: 400 before anything is revealed).",
      answers: DOWNLOAD_ANSWERS,
    }),
    async (c) => {
      const { deps } = c.var;
      const id = c.req.param("id");
      // The signature is checked first: without a valid one, nothing about the file is revealed.
      const secondsLeft = await verifyPresigned(deps.config, id, new URL(c.req.url).searchParams, deps.now());
      return deliverFile(deps, c.req.raw, id, ({ bucket }) => {
        if (!bucket.presignedUrlsEnabled) throw presignedDisabled();
        // The URL is the credential (and the cache key): its answer is the same for whoever holds it.
        return { cacheControl: `max-age=${secondsLeft}`, shared: true };
      });
    },
  );
