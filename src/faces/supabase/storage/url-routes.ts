import { type Context, Hono } from "hono";
import { z } from "zod";
import { findUserById } from "../../../auth";
import type { AppEnv } from "../../../http/app-env";
import type { Deps } from "../../../http/deps";
import {
  assertMayMakeUploadUrl,
  type Caller,
  findBucket,
  findObject,
  putObject,
  readableObject,
  StorageError,
  signObjectToken,
  verifyObjectToken,
} from "../../../storage";
import { callerOf } from "./caller";
import { noSuchBucket, StorageApiError } from "./errors";
import { checkBucketId, checkPath, jsonOf, type ObjectRef, objectRef, withUploadBody } from "./request";
import { serveObject, transformOf } from "./serve";

/**
 * URLs that carry their own credential (storage-js `createSignedUrl(s)`, `createSignedUploadUrl` /
 * `uploadToSignedUrl`, `getPublicUrl`) and image transformation (`render/image/…`). A signed URL's token names its
 * bucket and path, is signed by the service (storage/presign.ts) and made only for a caller who may read the object
 * (upload to it, for an upload token); the bucket being public is a public URL's credential.
 */

type Ctx = Context<AppEnv>;

/** Storage's signed upload URLs last two hours. */
const UPLOAD_URL_SECONDS = 2 * 60 * 60;
/** A signed URL lives at most a year. */
const expiresIn = z
  .number()
  .int()
  .min(1)
  .max(365 * 24 * 3600);

const transformBody = z
  .object({
    width: z.number().int().min(1).max(8000).optional(),
    height: z.number().int().min(1).max(8000).optional(),
    quality: z.number().int().min(1).max(100).optional(),
    format: z.enum(["origin", "avif", "webp", "jpeg", "png"]).optional(),
    resize: z.enum(["cover", "contain", "fill"]).optional(),
  })
  .optional();

const nowSeconds = (c: Ctx) => Math.floor(c.var.deps.now() / 1000);

/** A download URL for an object the caller may read; with a transformation, through `render/image/sign`. */
async function signedUrl(c: Ctx, ref: ObjectRef, seconds: number, transform?: Record<string, string>) {
  const found = await readableObject(c.var.deps, ref.bucketId, ref.path, callerOf(c));
  if (!found.bucket.presignedUrlsEnabled) {
    throw new StorageApiError(
      403,
      "AccessDenied",
      "Unauthorized",
      "Signed URLs are not enabled on this bucket",
    );
  }
  const url = `${ref.bucketId}/${ref.path}`;
  const token = await signObjectToken(c.var.config, {
    use: "download",
    url,
    exp: nowSeconds(c) + seconds,
    ...(transform ? { transform } : {}),
  });
  return `/${transform ? "render/image" : "object"}/sign/${url}?token=${token}`;
}

/** The seconds a download token has left, once it is checked for this object. */
async function downloadToken(c: Ctx, ref: ObjectRef) {
  const url = `${ref.bucketId}/${ref.path}`;
  const claims = await verifyObjectToken(
    c.var.config,
    c.req.query("token") ?? "",
    "download",
    url,
    c.var.deps.now(),
  );
  return { secondsLeft: claims.exp - nowSeconds(c), transform: claims.transform };
}

/** The caller an upload token's holder uploads as: its maker, who becomes the owner; none for the service role. */
const tokenCaller = (owner: string | undefined): Caller =>
  owner ? { kind: "user", id: owner, role: "user", token: "" } : { kind: "admin" };

/**
 * The holder uploads as the maker, so only while the maker may: a URL made by a user deleted or disabled (banned)
 * since uploads nothing for the rest of its two hours.
 */
async function refuseGoneMaker(deps: Deps, caller: Caller): Promise<void> {
  if (caller.kind !== "user") return;
  const maker = await findUserById(deps.shards, caller.id);
  if (!maker || maker.disabled) {
    throw new StorageError(403, "the user who made this signed upload URL can no longer upload");
  }
}

export const urlRoutes = new Hono<AppEnv>()
  .post("/object/sign/:bucket", async (c) => {
    const body = await jsonOf(c, z.object({ expiresIn, paths: z.array(z.string()).min(1).max(1000) }));
    const bucketId = checkBucketId(c.req.param("bucket"));
    const answers = [];
    for (const path of body.paths) {
      try {
        answers.push({
          error: null,
          path,
          signedURL: await signedUrl(c, { bucketId, path: checkPath(path) }, body.expiresIn),
        });
      } catch (error) {
        // Not there, not the caller's to read, or a key Storage refuses: that path's answer, not the request's. A
        // fault (the permissions' Hasura down: never a yes, never a no) is the request's 503, as for one path.
        if (!(error instanceof StorageApiError || error instanceof StorageError)) throw error;
        if ((error instanceof StorageError ? error.status : error.statusCode) >= 500) throw error;
        answers.push({
          error: "Either the object does not exist or you do not have access to it",
          path,
          signedURL: null,
        });
      }
    }
    return c.json(answers);
  })
  .post("/object/sign/:bucket/*", async (c) => {
    const body = await jsonOf(c, z.object({ expiresIn, transform: transformBody }));
    const transform = body.transform && Object.keys(body.transform).length > 0 ? body.transform : undefined;
    const asText = transform && Object.fromEntries(Object.entries(transform).map(([k, v]) => [k, String(v)]));
    return c.json({ signedURL: await signedUrl(c, objectRef(c, "/object/sign/"), body.expiresIn, asText) });
  })
  .on(["GET", "HEAD"], "/object/sign/:bucket/*", async (c) => {
    const ref = objectRef(c, "/object/sign/");
    const { secondsLeft, transform } = await downloadToken(c, ref);
    return serveObject(c, ref, { secondsLeft }, transform ?? null);
  })
  .on(["GET", "HEAD"], "/object/public/:bucket/*", (c) =>
    serveObject(c, objectRef(c, "/object/public/"), "public", null),
  )
  .get("/render/image/authenticated/:bucket/*", (c) =>
    serveObject(
      c,
      objectRef(c, "/render/image/authenticated/"),
      "authenticated",
      transformOf(new URL(c.req.url).searchParams),
    ),
  )
  .get("/render/image/public/:bucket/*", (c) =>
    serveObject(
      c,
      objectRef(c, "/render/image/public/"),
      "public",
      transformOf(new URL(c.req.url).searchParams),
    ),
  )
  .get("/render/image/sign/:bucket/*", async (c) => {
    const ref = objectRef(c, "/render/image/sign/");
    const { secondsLeft, transform } = await downloadToken(c, ref);
    return serveObject(c, ref, { secondsLeft }, transformOf(new URL(c.req.url).searchParams, transform));
  })
  .post("/object/upload/sign/:bucket/*", async (c) => {
    const ref = objectRef(c, "/object/upload/sign/");
    const { deps } = c.var;
    const caller = callerOf(c);
    const bucket = await findBucket(deps.shards.home, ref.bucketId);
    if (!bucket) throw noSuchBucket();
    const upsert = c.req.header("x-upsert") === "true";
    const existing = upsert ? await findObject(deps.shards, ref.bucketId, ref.path) : undefined;
    assertMayMakeUploadUrl(deps, bucket, caller, existing?.file);
    const url = `${ref.bucketId}/${ref.path}`;
    const token = await signObjectToken(c.var.config, {
      use: "upload",
      url,
      exp: nowSeconds(c) + UPLOAD_URL_SECONDS,
      upsert,
      ...(caller.kind === "user" ? { owner: caller.id } : {}),
    });
    return c.json({ url: `/object/upload/sign/${url}?token=${token}`, token });
  })
  .put("/object/upload/sign/:bucket/*", async (c) => {
    const ref = objectRef(c, "/object/upload/sign/");
    const url = `${ref.bucketId}/${ref.path}`;
    const claims = await verifyObjectToken(
      c.var.config,
      c.req.query("token") ?? "",
      "upload",
      url,
      c.var.deps.now(),
    );
    const caller = tokenCaller(claims.owner);
    await refuseGoneMaker(c.var.deps, caller);
    const file = await withUploadBody(c, ref.path.slice(ref.path.lastIndexOf("/") + 1), (body, metadata) =>
      putObject(c.var.deps, {
        ...ref,
        caller,
        mode: claims.upsert ? "upsert" : "upload",
        body,
        metadata,
        preauthorized: true,
      }),
    );
    return c.json({ Id: file.id, Key: url });
  });
