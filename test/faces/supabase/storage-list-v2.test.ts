import { env } from "cloudflare:test";
import { PhotonImage } from "@cf-wasm/photon";
import { describe, expect, it } from "vitest";
import { STORAGE_FACE, setRules, signedInClient, storageClient, uniqueBucket } from "./storage-support";
import { SECRET_KEY, supabaseService } from "./support";

/**
 * storage-js `listV2` and `purgeCache` through the face (contract supabase.md §3), with the real storage-js, and
 * the storage-js methods the face does not serve answering Storage's error shape. Each test names its methods.
 */

const svc = supabaseService();
const admin = storageClient(svc, SECRET_KEY).storage;

const text = (body: string) => new File([body], "f.txt", { type: "text/plain" });

async function bucketWith(keys: string[], rules?: Record<string, unknown>) {
  const id = uniqueBucket("v2");
  const { error } = await admin.createBucket(id);
  if (error) throw error;
  for (const key of keys) {
    const up = await admin.from(id).upload(key, text(key));
    if (up.error) throw up.error;
  }
  if (rules) await setRules(svc, id, rules);
  return id;
}

const KEYS = ["a.txt", "b/1.txt", "b/2.txt", "b/c/3.txt", "d.txt", "e/4.txt", "photo.png", "phone.txt"];

describe("storage-js listV2 against the face", () => {
  it("listV2: flat, with_delimiter (folders), prefix, sortBy", async () => {
    const id = await bucketWith(KEYS);
    const files = admin.from(id);

    const flat = await files.listV2();
    expect(flat.error).toBeNull();
    expect(flat.data!.hasNext).toBe(false);
    expect(flat.data!.folders).toEqual([]);
    expect(flat.data!.objects.map((o) => o.name)).toEqual([...KEYS].sort());
    expect(flat.data!.objects[0]).toMatchObject({
      key: "a.txt",
      metadata: { size: 5, mimetype: "text/plain" },
    });

    const level = await files.listV2({ with_delimiter: true });
    expect(level.data!.folders).toEqual([
      { key: "b/", name: "b/" },
      { key: "e/", name: "e/" },
    ]);
    expect(level.data!.objects.map((o) => o.name)).toEqual(["a.txt", "d.txt", "phone.txt", "photo.png"]);

    const inB = await files.listV2({ prefix: "b/", with_delimiter: true });
    expect(inB.data!.folders.map((f) => f.name)).toEqual(["b/c/"]);
    expect(inB.data!.objects.map((o) => o.name)).toEqual(["b/1.txt", "b/2.txt"]);
    // A prefix is not a folder: `ph` is the start of two keys.
    const ph = await files.listV2({ prefix: "ph" });
    expect(ph.data!.objects.map((o) => o.name)).toEqual(["phone.txt", "photo.png"]);
    expect((await files.listV2({ prefix: "PH" })).data!.objects).toEqual([]);

    const desc = await files.listV2({ sortBy: { column: "name", order: "desc" } });
    expect(desc.data!.objects.map((o) => o.name)).toEqual([...KEYS].sort().reverse());
    const byCreated = await files.listV2({ sortBy: { column: "created_at", order: "desc" } });
    const times = byCreated.data!.objects.map((o) => Date.parse(o.created_at));
    expect(times).toEqual([...times].sort((x, y) => y - x));
    expect(byCreated.data!.objects.map((o) => o.name).sort()).toEqual([...KEYS].sort());
  });

  // Threat: a page that repeats or skips keys (across shards, or in a folder the delimiter folds), a listing that
  // never ends.
  it("listV2: pages of `limit` by nextCursor until hasNext is false, flat, by date and with folders", async () => {
    const id = await bucketWith(KEYS);
    const files = admin.from(id);
    const walk = async (options: Parameters<typeof files.listV2>[0]) => {
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 20; pages++) {
        const { data, error } = await files.listV2({ ...options, limit: 3, cursor });
        expect(error).toBeNull();
        expect(data!.folders.length + data!.objects.length).toBeLessThanOrEqual(3);
        // Folders and objects come in two arrays; by name they interleave (the date orders have no folders).
        const page = [...data!.folders.map((f) => f.name), ...data!.objects.map((o) => o.name)];
        seen.push(...(options?.with_delimiter ? page.sort() : page));
        if (!data!.hasNext) return seen;
        expect(data!.nextCursor).toEqual(expect.any(String));
        cursor = data!.nextCursor;
      }
      throw new Error("listV2 never ended");
    };
    expect(await walk({})).toEqual([...KEYS].sort());
    expect(await walk({ sortBy: { column: "name", order: "desc" } })).toEqual([...KEYS].sort().reverse());
    expect((await walk({ sortBy: { column: "updated_at", order: "asc" } })).sort()).toEqual([...KEYS].sort());
    expect(await walk({ with_delimiter: true })).toEqual([
      "a.txt",
      "b/",
      "d.txt",
      "e/",
      "phone.txt",
      "photo.png",
    ]);
  });

  // Threat: a forged cursor reaching the database as something else, or failing as a 500.
  it("listV2: a forged or malformed cursor is Storage's 400, a limit below 1 its 400", async () => {
    const id = await bucketWith(["a.txt"]);
    for (const cursor of [
      "not base64!",
      btoa("{}"),
      btoa('{"k":1,"c":"name","o":"asc"}'),
      btoa("\xff\xfe"),
    ]) {
      const { error } = await admin.from(id).listV2({ cursor });
      expect(error).toMatchObject({ status: 400, statusCode: "400" });
      expect(error!.message).toBe("Invalid Parameter continuation token");
    }
    expect((await admin.from(id).listV2({ limit: 0 })).error).toMatchObject({ status: 400 });
    const missing = await admin.from("no-such-bucket").listV2();
    expect(missing.error).toMatchObject({ statusCode: "404", message: "Bucket not found" });
  });

  // Threat: a client listing keys of a bucket no rule lets it read, or other users' keys in an `owner` bucket.
  it("listV2 by clients: nothing where the bucket's read rule is none, only their own under `owner`", async () => {
    const closed = await bucketWith(["a.txt", "b/1.txt"]);
    const { client: alice, userId } = await signedInClient(svc);
    const nothing = await alice.storage.from(closed).listV2({ with_delimiter: true });
    expect(nothing.data).toEqual({ hasNext: false, folders: [], objects: [] });

    const own = await bucketWith(["admin.txt"], {
      upload: "authenticated",
      read: "owner",
      update: "owner",
      delete: "owner",
    });
    expect((await alice.storage.from(own).upload(`${userId}/a.txt`, text("alice"))).error).toBeNull();
    const { client: bob } = await signedInClient(svc);
    expect((await bob.storage.from(own).upload("bob.txt", text("bob"))).error).toBeNull();
    const bobs = await bob.storage.from(own).listV2({ with_delimiter: true });
    expect(bobs.data!.folders).toEqual([]);
    expect(bobs.data!.objects.map((o) => o.name)).toEqual(["bob.txt"]);
    const alices = await alice.storage.from(own).listV2();
    expect(alices.data!.objects.map((o) => o.name)).toEqual([`${userId}/a.txt`]);
  });
});

function png(): Uint8Array {
  const image = new PhotonImage(new Uint8Array(40 * 20 * 4).fill(200), 40, 20);
  try {
    return image.get_bytes();
  } finally {
    image.free();
  }
}

describe("storage-js purgeCache against the face", () => {
  // Threat: a client emptying the image cache (making every later request a transformation: CPU spent), or a purge
  // that leaves stale variants behind.
  it("purgeCache with transformations by the service role removes the cached variants; by a client it is refused", async () => {
    const id = uniqueBucket("purge");
    await admin.createBucket(id, { public: true });
    const up = await admin.from(id).upload("p.png", new File([png()], "p.png", { type: "image/png" }));
    expect(up.error).toBeNull();
    const variants = () => env.FILES.list({ prefix: `_variants/${up.data!.id}/` });
    const url = admin.from(id).getPublicUrl("p.png", { transform: { width: 10, height: 10 } }).data.publicUrl;
    expect((await svc.request("GET", url)).status).toBe(200);
    expect((await variants()).objects).toHaveLength(1);

    const { client } = await signedInClient(svc);
    for (const storage of [client.storage, storageClient(svc).storage]) {
      const refused = await storage.from(id).purgeCache("p.png", { transformations: true });
      expect(refused.error).toMatchObject({
        status: 400,
        statusCode: "403",
        message: "Access denied: Invalid role",
      });
    }
    expect((await variants()).objects).toHaveLength(1);

    // Without transformations: nothing in front of the service keeps the object, nothing to remove.
    expect((await admin.from(id).purgeCache("p.png")).data).toEqual({ message: "success" });
    expect((await variants()).objects).toHaveLength(1);
    expect((await admin.from(id).purgeCache("p.png", { transformations: true })).data).toEqual({
      message: "success",
    });
    expect((await variants()).objects).toHaveLength(0);
    // The image is still served, made again.
    expect((await svc.request("GET", url)).status).toBe(200);
    expect((await admin.from(id).purgeCache("gone.png", { transformations: true })).error).toBeNull();
    expect((await admin.from("no-such-bucket").purgeCache("p.png")).error).toMatchObject({
      statusCode: "404",
    });
  });
});

describe("storage-js methods the face does not serve", () => {
  // Threat: an unserved feature answered by a 500 (or a crash) instead of Storage's own refusal.
  it("bucket lifecycle, object versions, purgeBucketCache, analytics and vector buckets: Storage's 4xx body", async () => {
    const id = await bucketWith(["a.txt"]);
    const calls = [
      admin.getBucketLifecycle(id),
      admin.deleteBucketLifecycle(id),
      admin.purgeBucketCache(id),
      admin.analytics.listBuckets(),
      admin.analytics.createBucket("analytics"),
      admin.vectors.listBuckets(),
      admin.vectors.createBucket("vectors"),
    ];
    for (const { data, error } of await Promise.all(calls)) {
      expect(data).toBeNull();
      expect(error).toMatchObject({ name: expect.stringMatching(/Storage/) });
    }
    // The raw answer: Storage's shape and a 4xx (a route Storage has and this service does not is its 404).
    const unserved: [string, string][] = [
      ["GET", `/bucket/${id}/lifecycle`],
      ["POST", "/vector/ListVectorBuckets"],
      ["GET", "/iceberg/bucket"],
      ["POST", `/object/list-versions/${id}`],
    ];
    for (const [method, path] of unserved) {
      const answer = await svc.request(method, `${STORAGE_FACE}${path}`, {
        headers: { apikey: SECRET_KEY, authorization: `Bearer ${SECRET_KEY}` },
        json: method === "POST" ? {} : undefined,
      });
      expect(answer.status, path).toBeGreaterThanOrEqual(400);
      expect(answer.status, path).toBeLessThan(500);
      expect(await answer.json()).toMatchObject({ statusCode: expect.any(String), code: expect.any(String) });
    }
  });
});
