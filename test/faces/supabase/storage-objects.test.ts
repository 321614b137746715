import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { signUpInEachShard } from "../../db/shard-users";
import { SERVER } from "../../helpers";
import { allD1 } from "../../support/shards";
import { STORAGE_FACE, setRules, signedInClient, storageClient, uniqueBucket } from "./storage-support";
import { SECRET_KEY, supabaseService } from "./support";

/**
 * Storage's objects through the face (contract supabase.md §3), with the real storage-js: each test names the
 * storage-js methods it proves. Objects are the service's files, addressed by bucket and path.
 */

const svc = supabaseService();
const admin = storageClient(svc, SECRET_KEY).storage;
const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };

const text = (body: string, name = "f.txt") => new File([body], name, { type: "text/plain" });

async function bucket(rules?: Record<string, unknown>, options = { public: false }) {
  const id = uniqueBucket();
  const { error } = await admin.createBucket(id, options);
  if (error) throw error;
  if (rules) await setRules(svc, id, rules);
  return id;
}

describe("storage-js objects against the face", () => {
  it("upload (a File and raw bytes), download, info, exists, update, upsert, metadata; the file is the Nhost face's too", async () => {
    const id = await bucket();
    const files = admin.from(id);
    const up = await files.upload("docs/a.txt", text("first"), { metadata: { tag: "one" } });
    expect(up.error).toBeNull();
    expect(up.data).toMatchObject({ path: "docs/a.txt", fullPath: `${id}/docs/a.txt` });

    const raw = await files.upload("docs/raw.bin", new Uint8Array([0, 1, 2, 255]).buffer, {
      contentType: "application/x-test",
      metadata: { source: "bytes" },
    });
    expect(raw.error).toBeNull();
    const bytes = new Uint8Array(await (await files.download("docs/raw.bin")).data!.arrayBuffer());
    expect([...bytes]).toEqual([0, 1, 2, 255]);
    // Raw bytes longer than one R2 part (5 MiB) come back whole, in order.
    const long = new Uint8Array(6 * 1024 * 1024 + 7).map((_, i) => (i * 31 + (i >> 16)) & 255);
    expect((await files.upload("docs/long.bin", long.buffer)).error).toBeNull();
    const back = new Uint8Array(await (await files.download("docs/long.bin")).data!.arrayBuffer());
    expect(back.length).toBe(long.length);
    expect(Buffer.compare(back, long)).toBe(0);

    expect(await (await files.download("docs/a.txt")).data!.text()).toBe("first");
    const info = await files.info("docs/a.txt");
    expect(info.data).toMatchObject({
      id: up.data!.id,
      name: "docs/a.txt",
      bucketId: id,
      size: 5,
      contentType: "text/plain",
      metadata: { tag: "one" },
    });
    expect((await files.info("docs/raw.bin")).data).toMatchObject({
      contentType: "application/x-test",
      metadata: { source: "bytes" },
    });
    expect((await files.exists("docs/a.txt")).data).toBe(true);
    expect((await files.exists("docs/none.txt")).data).toBe(false);

    // upload onto a taken path: Storage's 409 Duplicate; upsert and update replace the bytes under the same id.
    expect((await files.upload("docs/a.txt", text("again"))).error).toMatchObject({
      statusCode: "409",
      message: "The resource already exists",
    });
    const upserted = await files.upload("docs/a.txt", text("second"), { upsert: true });
    expect(upserted.data?.id).toBe(up.data!.id);
    expect(await (await files.download("docs/a.txt")).data!.text()).toBe("second");
    expect((await files.update("docs/a.txt", text("third"))).error).toBeNull();
    expect(await (await files.download("docs/a.txt")).data!.text()).toBe("third");
    expect((await files.update("docs/none.txt", text("x"))).error).toMatchObject({ statusCode: "404" });

    // The same file through the Nhost face, by its id: same bytes, same ETag.
    const nhost = await svc.request("GET", `${SERVER}/storage/v1/files/${up.data!.id}`, { headers: ADMIN });
    expect(await nhost.text()).toBe("third");
    expect(nhost.headers.get("etag")).toBe((await files.info("docs/a.txt")).data!.etag);
  });

  it("list (prefix, folders, limit, offset, sortBy, search), move, copy, remove", async () => {
    const id = await bucket();
    const files = admin.from(id);
    for (const path of ["top.txt", "photos/b.txt", "photos/a.txt", "photos/2024/c.txt", "other/d.txt"]) {
      expect((await files.upload(path, text(path))).error).toBeNull();
    }
    const top = await files.list();
    expect(top.data?.map((entry) => [entry.name, entry.id === null])).toEqual([
      ["other", true],
      ["photos", true],
      ["top.txt", false],
    ]);
    const photos = await files.list("photos", { sortBy: { column: "name", order: "desc" } });
    expect(photos.data?.map((entry) => entry.name)).toEqual(["2024", "b.txt", "a.txt"]);
    expect(photos.data?.[1]?.metadata).toMatchObject({ size: 12, mimetype: "text/plain" });
    expect((await files.list("photos", { limit: 1, offset: 1 })).data?.map((e) => e.name)).toEqual(["a.txt"]);
    expect((await files.list("photos", { search: "B" })).data?.map((e) => e.name)).toEqual(["b.txt"]);

    expect((await files.move("photos/a.txt", "photos/moved.txt")).data).toEqual({
      message: "Successfully moved",
    });
    expect((await files.exists("photos/a.txt")).data).toBe(false);
    expect(await (await files.download("photos/moved.txt")).data!.text()).toBe("photos/a.txt");
    expect((await files.move("photos/b.txt", "photos/moved.txt")).error).toMatchObject({ statusCode: "409" });

    const copied = await files.copy("photos/b.txt", "copies/b.txt");
    expect(copied.data).toEqual({ path: `${id}/copies/b.txt` });
    expect(await (await files.download("copies/b.txt")).data!.text()).toBe("photos/b.txt");

    const removed = await files.remove(["photos/b.txt", "copies/b.txt", "never/there.txt"]);
    expect(removed.data?.map((object) => object.name).sort()).toEqual(["copies/b.txt", "photos/b.txt"]);
    expect((await files.exists("photos/b.txt")).data).toBe(false);
  });

  // Threat: a client reading or writing a bucket no rule opened (Supabase denies by default), or another user's files.
  it("upload, download, list, remove by clients: closed by default, then as the bucket's rules say (own files)", async () => {
    const closed = await bucket();
    const { client: alice, userId } = await signedInClient(svc);
    const refused = await alice.storage.from(closed).upload("x.txt", text("x"));
    expect(refused.error).toMatchObject({
      status: 400,
      statusCode: "403",
      message: "new row violates row-level security policy",
    });
    await admin.from(closed).upload("y.txt", text("y"));
    expect((await alice.storage.from(closed).download("y.txt")).error).toMatchObject({ status: 400 });
    expect((await alice.storage.from(closed).list()).data).toEqual([]);

    // Supabase's "own files" policies, as bucket rules: anyone signed in uploads, each reads and deletes their own.
    const own = await bucket({ upload: "authenticated", read: "owner", update: "owner", delete: "owner" });
    const { client: bob } = await signedInClient(svc);
    expect((await alice.storage.from(own).upload(`${userId}/a.txt`, text("alice"))).error).toBeNull();
    expect((await bob.storage.from(own).upload("bob.txt", text("bob"))).error).toBeNull();
    expect(await (await alice.storage.from(own).download(`${userId}/a.txt`)).data!.text()).toBe("alice");
    expect((await bob.storage.from(own).download(`${userId}/a.txt`)).error).toMatchObject({
      statusCode: "404",
    });
    expect((await bob.storage.from(own).list(userId)).data).toEqual([]);
    expect((await bob.storage.from(own).list()).data?.map((e) => e.name)).toEqual(["bob.txt"]);
    expect((await bob.storage.from(own).remove([`${userId}/a.txt`])).data).toEqual([]);
    expect(
      (await bob.storage.from(own).upload(`${userId}/a.txt`, text("bob"), { upsert: true })).error,
    ).toMatchObject({
      statusCode: "403",
    });
    const info = await admin.from(own).info(`${userId}/a.txt`);
    expect(info.data?.size).toBe(5);
    expect((await alice.storage.from(own).remove([`${userId}/a.txt`])).data?.length).toBe(1);
  });

  // Threat: a key that climbs out of its folder, or a control character smuggled into a key.
  it("upload: keys with `..`, `.` or control characters are Storage's 400 Invalid key; over the bucket's limit is 413", async () => {
    const id = uniqueBucket();
    await admin.createBucket(id, { public: false, fileSizeLimit: 4 });
    // In a URL, `..` and `.` segments are resolved before anyone routes it (WHATWG URL): they reach the face only in
    // bodies (move, copy), and control characters percent-encoded.
    const control = await svc.request("POST", `${STORAGE_FACE}/object/${id}/a/%01b.txt`, {
      headers: { apikey: SECRET_KEY, "content-type": "text/plain" },
      body: "x",
    });
    expect(control.status).toBe(400);
    expect(await control.json()).toMatchObject({ statusCode: "400", code: "InvalidKey" });
    await admin.from(id).upload("in.txt", text("in"));
    for (const to of ["a/../../b.txt", "./b.txt", "a//b.txt", "a/\u0000.txt"]) {
      expect((await admin.from(id).move("in.txt", to)).error).toMatchObject({
        statusCode: "400",
        message: `Invalid key: ${to}`,
      });
      expect((await admin.from(id).copy("in.txt", to)).error).toMatchObject({ statusCode: "400" });
    }
    const large = await admin.from(id).upload("big.txt", text("too large"));
    expect(large.error).toMatchObject({
      status: 400,
      statusCode: "413",
      message: "The object exceeded the maximum allowed size",
    });
    expect((await admin.from(id).upload("ok.txt", text("fine"))).error).toBeNull();
  });

  // Threat: one path created twice, in two shards (two owners whose records live apart), so that which file a path
  // names depends on where one looks. The suite runs with two shards (vitest.config.ts).
  it("upload by users of two shards onto one path: the second is 409; once removed, the path is free again", async () => {
    const id = await bucket({
      upload: "authenticated",
      read: "authenticated",
      update: "owner",
      delete: "owner",
    });
    const [first, second] = await signUpInEachShard(svc);
    const as = (token: string) =>
      storageClient(svc, undefined, { Authorization: `Bearer ${token}` }).storage.from(id);
    const up = await as(first!.accessToken).upload("same.txt", text("first"));
    expect(up.error).toBeNull();
    expect((await as(second!.accessToken).upload("same.txt", text("second"))).error).toMatchObject({
      statusCode: "409",
    });
    const holding = await Promise.all(
      allD1().map((d1) =>
        d1.prepare("SELECT id FROM files WHERE bucket_id = ? AND path = ?").bind(id, "same.txt").all(),
      ),
    );
    expect(holding.map((rows) => rows.results.length)).toEqual([1, 0]);
    expect(await (await as(second!.accessToken).download("same.txt")).data!.text()).toBe("first");

    expect((await as(first!.accessToken).remove(["same.txt"])).data?.length).toBe(1);
    expect((await as(second!.accessToken).upload("same.txt", text("second"))).error).toBeNull();
    expect(await (await as(first!.accessToken).download("same.txt")).data!.text()).toBe("second");
    // The service role's objects have no uploader: kept in the shard of `file:<id>`, found by path all the same.
    expect((await admin.from(id).upload("admin.txt", text("admin"))).error).toBeNull();
    expect((await admin.from(id).move("admin.txt", "moved/admin.txt")).error).toBeNull();
    expect(await (await as(second!.accessToken).download("moved/admin.txt")).data!.text()).toBe("admin");
  });
});
