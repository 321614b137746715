import { describe, expect, it } from "vitest";
import { STORAGE_FACE, signedInClient, storageClient, uniqueBucket } from "./storage-support";
import { SECRET_KEY, supabaseService } from "./support";

/**
 * Storage's bucket administration through the face (contract supabase.md §3), with the real storage-js: the service
 * role's alone. Each test names the storage-js methods it proves.
 */

const svc = supabaseService();

describe("storage-js buckets against the face", () => {
  it("createBucket, getBucket, listBuckets, updateBucket, emptyBucket, deleteBucket with the secret key", async () => {
    const admin = storageClient(svc, SECRET_KEY).storage;
    const id = uniqueBucket("avatars");
    const created = await admin.createBucket(id, {
      public: true,
      fileSizeLimit: "1MB",
      allowedMimeTypes: ["image/*"],
    });
    expect(created.error).toBeNull();
    expect(created.data).toEqual({ name: id });

    const got = await admin.getBucket(id);
    expect(got.error).toBeNull();
    expect(got.data).toMatchObject({
      id,
      name: id,
      public: true,
      file_size_limit: 1_000_000,
      allowed_mime_types: ["image/*"],
    });

    const listed = await admin.listBuckets();
    expect(listed.data?.map((bucket) => bucket.id)).toEqual(expect.arrayContaining(["default", id]));

    const updated = await admin.updateBucket(id, {
      public: false,
      fileSizeLimit: 2048,
      allowedMimeTypes: [],
    });
    expect(updated.error).toBeNull();
    expect((await admin.getBucket(id)).data).toMatchObject({
      public: false,
      file_size_limit: 2048,
      allowed_mime_types: null,
    });

    // A bucket with a file cannot go (Storage's 409, in its shape); emptied, it can.
    const upload = await admin
      .from(id)
      .upload("a/b.txt", new File(["hello"], "b.txt", { type: "text/plain" }));
    expect(upload.error?.message ?? null).toBeNull();
    const refused = await admin.deleteBucket(id);
    expect(refused.error).toMatchObject({
      status: 400,
      statusCode: "409",
      message: "The bucket you tried to delete is not empty",
    });
    expect((await admin.emptyBucket(id)).data).toEqual({ message: "Successfully emptied" });
    expect((await admin.from(id).exists("a/b.txt")).data).toBe(false);
    expect((await admin.deleteBucket(id)).data).toEqual({ message: "Successfully deleted" });
    const gone = await admin.getBucket(id);
    expect(gone.error).toMatchObject({ statusCode: "404", message: "Bucket not found" });
  });

  // Threat: a client (the publishable key, a user's token) administering buckets, or reading their settings.
  it("createBucket, updateBucket, deleteBucket refused to clients; listBuckets and getBucket show them nothing", async () => {
    const id = uniqueBucket("private");
    expect((await storageClient(svc, SECRET_KEY).storage.createBucket(id)).error).toBeNull();
    for (const client of [storageClient(svc), (await signedInClient(svc)).client]) {
      const created = await client.storage.createBucket(uniqueBucket());
      expect(created.error).toMatchObject({
        status: 400,
        statusCode: "403",
        message: "new row violates row-level security policy",
      });
      expect((await client.storage.updateBucket(id, { public: true })).error).toMatchObject({
        statusCode: "403",
      });
      expect((await client.storage.deleteBucket(id)).error).toMatchObject({ statusCode: "403" });
      expect((await client.storage.emptyBucket(id)).error).toMatchObject({ statusCode: "403" });
      expect((await client.storage.listBuckets()).data).toEqual([]);
      expect((await client.storage.getBucket(id)).error).toMatchObject({ statusCode: "404" });
    }
  });

  it("createBucket: a taken id is Storage's 409 Duplicate; a name the core cannot keep is 400; no key is 401", async () => {
    const admin = storageClient(svc, SECRET_KEY).storage;
    const id = uniqueBucket();
    await admin.createBucket(id);
    expect((await admin.createBucket(id)).error).toMatchObject({
      statusCode: "409",
      message: "The resource already exists",
    });
    expect((await admin.createBucket("Not Valid!")).error).toMatchObject({
      statusCode: "400",
      message: "Bucket name invalid",
    });
    const noKey = await svc.request("GET", `${STORAGE_FACE}/bucket`);
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toMatchObject({ statusCode: "401", message: "No API key found in request" });
  });
});
