// Files with several shards (src/storage/file-shards.ts): a record lives in its uploader's shard, found by the slot
// its minted id carries or, for an id a client chose, by the directory; buckets stay in the home database and are
// counted and listed across every shard. The suite runs with two shards (vitest.config.ts).
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { claim, ownerOf } from "../../src/db/directory";
import { routedUuid, slotOfRouted } from "../../src/db/routed-ids";
import { SLOTS, shardIndexOfSlot } from "../../src/db/shards";
import { getConfig } from "../../src/runtime/config";
import { runHousekeeping } from "../../src/runtime/cron";
import { listBucketFiles, listBucketsWithCounts } from "../../src/storage/file-admin";
import { fileEntry, mintFileId } from "../../src/storage/file-shards";
import { pathEntry } from "../../src/storage/object-paths";
import { signUpInEachShard, signUpInShard } from "../db/shard-users";
import { STORAGE_FACE, userBucket } from "../faces/supabase/storage-support";
import { PUBLISHABLE_KEY, supabaseService } from "../faces/supabase/support";
import type { WireSession } from "../helpers";
import { wrapD1 } from "../support/faults";
import { allD1, allInShards, testShards, userD1 } from "../support/shards";
import { jpeg } from "./fixtures";
import {
  expectStorageError,
  get,
  pausingFiles,
  STORAGE,
  svc,
  upload,
  uploaded,
  uploadForm,
  type WireFile,
} from "./helpers";

const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };
const admin = (method: string, path: string, json?: unknown) =>
  svc.request(method, `${STORAGE}${path}`, { headers: ADMIN, json });

/** The shards (by index) that hold a record under `id`. */
async function shardsHolding(id: string): Promise<number[]> {
  const found = await Promise.all(
    allD1().map((d1) => d1.prepare("SELECT 1 AS one FROM files WHERE id = ?").bind(id).first()),
  );
  return found.flatMap((row, index) => (row ? [index] : []));
}

const shardOf = (session: WireSession) => testShards().indexOfUser(session.user.id);
const duplicate = (id: string) => `a file with id ${id} already exists`;
const remove = (id: string, token: string) => svc.request("DELETE", `${STORAGE}/files/${id}`, { token });

/** A slot whose shard is `index`: ids routed there. */
const slotIn = (index: number) =>
  Array.from({ length: SLOTS }, (_, slot) => slot).find(
    (slot) => shardIndexOfSlot(slot, testShards().count) === index,
  )!;

describe("files with several shards", () => {
  // Threat: a user's file written to, or looked for in, another shard than its uploader's: not found, or served from
  // a database its owner's deletion never reaches.
  it("a file of each shard's user lands in that shard, and downloads, transforms, presigns, replaces and deletes there", async () => {
    for (const session of await signUpInEachShard(svc)) {
      const token = session.accessToken;
      const [file] = await uploaded(
        uploadForm([{ bytes: jpeg(64, 48), type: "image/jpeg", name: "p.jpg" }]),
        token,
      );
      expect(slotOfRouted(file!.id), "a minted id carries its slot").toBeDefined();
      expect(await shardsHolding(file!.id)).toEqual([shardOf(session)]);

      expect((await get(file!.id, {}, token)).status).toBe(200);
      const small = await get(file!.id, {}, token, "?w=32");
      expect(small.status).toBe(200);
      expect(small.headers.get("content-type")).toBe("image/jpeg");

      const presign = await svc.request("GET", `${STORAGE}/files/${file!.id}/presignedurl`, { token });
      const { url } = (await presign.json()) as { url: string };
      expect((await svc.request("GET", url)).status).toBe(200);

      const form = new FormData();
      form.append("file", new Blob(["replaced"], { type: "text/plain" }), "r.txt");
      const replaced = await svc.request("PUT", `${STORAGE}/files/${file!.id}`, { body: form, token });
      expect(replaced.status).toBe(200);
      expect(await (await get(file!.id, {}, token)).text()).toBe("replaced");
      expect(await shardsHolding(file!.id)).toEqual([shardOf(session)]);

      expect((await remove(file!.id, token)).status).toBe(204);
      expect(await shardsHolding(file!.id)).toEqual([]);
      expect((await get(file!.id, {}, token)).status).toBe(404);
    }
  });

  // Threat: one id created twice, once in each shard (the reserve INSERT is unique within one database only): two
  // files answering to one id, each owner's downloads and deletions reaching a different one.
  it("a client-chosen id is created once across shards, also by two uploads at the same moment", async () => {
    const [first, second] = await signUpInEachShard(svc);
    const id = crypto.randomUUID();
    const body = () => uploadForm([{ bytes: "mine", metadata: { id } }]);
    expect((await upload(body(), first!.accessToken)).status).toBe(201);
    await expectStorageError(await upload(body(), second!.accessToken), 409, duplicate(id));
    expect(await shardsHolding(id)).toEqual([shardOf(first!)]);
    expect(await ownerOf(testShards(), fileEntry(id))).toBe(first!.user.id);

    // Deleted, the id is free again: its directory entry went with the record.
    expect((await remove(id, first!.accessToken)).status).toBe(204);
    expect(await ownerOf(testShards(), fileEntry(id))).toBeUndefined();
    expect((await upload(body(), second!.accessToken)).status).toBe(201);
    expect(await shardsHolding(id)).toEqual([shardOf(second!)]);
    expect(await (await get(id, {}, second!.accessToken)).text()).toBe("mine");

    const raced = crypto.randomUUID();
    const racing = () => uploadForm([{ bytes: "race", metadata: { id: raced } }]);
    const statuses = await Promise.all([
      upload(racing(), first!.accessToken),
      upload(racing(), second!.accessToken),
    ]);
    expect(statuses.map((response) => response.status).sort()).toEqual([201, 409]);
    expect(await shardsHolding(raced)).toHaveLength(1);
  });

  // Threat: an id that names a shard (a version-8 UUID) trusted when a client chose it: another user's file shadowed,
  // or one stored where no lookup finds it.
  it("an id that looks minted is refused where its slot's shard has it, and found where its chooser's shard has it", async () => {
    const [first, second] = await signUpInEachShard(svc);
    const [minted] = await uploaded(uploadForm([{ bytes: "minted" }]), first!.accessToken);
    await expectStorageError(
      await upload(uploadForm([{ bytes: "copy", metadata: { id: minted!.id } }]), second!.accessToken),
      409,
      duplicate(minted!.id),
    );
    expect(await shardsHolding(minted!.id)).toEqual([0]);

    const elsewhere = routedUuid(slotIn(0));
    const [chosen] = await uploaded(
      uploadForm([{ bytes: "chosen", metadata: { id: elsewhere } }]),
      second!.accessToken,
    );
    expect(chosen!.id).toBe(elsewhere);
    expect(await shardsHolding(elsewhere)).toEqual([1]);
    expect(await (await get(elsewhere, {}, second!.accessToken)).text()).toBe("chosen");
    await expectStorageError(
      await upload(uploadForm([{ bytes: "again", metadata: { id: elsewhere } }]), first!.accessToken),
      409,
      duplicate(elsewhere),
    );
    expect(await shardsHolding(elsewhere)).toEqual([1]);
  });

  // Threat: the admin secret's uploads (no uploader) lost between shards: minted ids that route nowhere, or a
  // client-chosen one stored apart from its events' subject.
  it("uploads without an uploader: minted ids share one drawn slot; a chosen id goes to its file subject's shard", async () => {
    const minted = await svc.request("POST", `${STORAGE}/files`, {
      body: uploadForm([{ bytes: "a" }, { bytes: "b" }]),
      headers: ADMIN,
    });
    expect(minted.status).toBe(201);
    const { processedFiles } = (await minted.json()) as { processedFiles: WireFile[] };
    const slots = processedFiles.map((file) => slotOfRouted(file.id));
    expect(slots[0]).toBeDefined();
    expect(slots[1]).toBe(slots[0]);
    for (const file of processedFiles) {
      expect(await shardsHolding(file.id)).toEqual([shardIndexOfSlot(slots[0]!, testShards().count)]);
    }

    const id = crypto.randomUUID();
    const chosen = await svc.request("POST", `${STORAGE}/files`, {
      body: uploadForm([{ bytes: "c", metadata: { id } }]),
      headers: ADMIN,
    });
    expect(chosen.status).toBe(201);
    expect(await shardsHolding(id)).toEqual([testShards().indexOfUser(`file:${id}`)]);
    expect(await ownerOf(testShards(), fileEntry(id))).toBe(`file:${id}`);
    expect(await (await admin("GET", `/files/${id}`)).text()).toBe("c");
    expect((await admin("DELETE", `/files/${id}`)).status).toBe(204);
    expect(await ownerOf(testShards(), fileEntry(id))).toBeUndefined();
  });

  // Threat: a claim left by a request that died blocking an id forever; or a claim young enough to be another
  // upload's in progress taken from it.
  it("a stale claim on an id is taken over; a young one is another upload's", async () => {
    const session = await signUpInShard(svc, 1);
    const stale = crypto.randomUUID();
    await claim(testShards(), crypto.randomUUID(), [fileEntry(stale)], Date.now() - 10 * 60_000);
    expect(
      (await upload(uploadForm([{ bytes: "s", metadata: { id: stale } }]), session.accessToken)).status,
    ).toBe(201);
    expect(await ownerOf(testShards(), fileEntry(stale))).toBe(session.user.id);

    const young = crypto.randomUUID();
    await claim(testShards(), crypto.randomUUID(), [fileEntry(young)], Date.now());
    await expectStorageError(
      await upload(uploadForm([{ bytes: "y", metadata: { id: young } }]), session.accessToken),
      409,
      duplicate(young),
    );
    expect(await shardsHolding(young)).toEqual([]);
  });

  // Threat: an upload refused after its id was claimed keeping the claim: the id blocked for everyone else.
  it("an upload refused after the claim gives the id back", async () => {
    const [first, second] = await signUpInEachShard(svc);
    const bucket = `text-only-${crypto.randomUUID().slice(0, 8)}`;
    expect((await admin("POST", "/buckets", { id: bucket, allowedMimeTypes: ["text/plain"] })).status).toBe(
      201,
    );
    const id = crypto.randomUUID();
    const refused = await upload(
      uploadForm([{ bytes: jpeg(8, 8), type: "image/jpeg", metadata: { id } }], bucket),
      second!.accessToken,
    );
    expect(refused.status).toBe(400);
    expect(await ownerOf(testShards(), fileEntry(id))).toBeUndefined();
    expect(
      (
        await upload(
          uploadForm([{ bytes: "t", type: "text/plain", metadata: { id } }], bucket),
          first!.accessToken,
        )
      ).status,
    ).toBe(201);
  });

  // Threat: a bucket's files in other shards not counted (a bucket with files deleted, its files left without rules),
  // or missing from the operator's lists.
  it("a bucket's files are counted and listed in every shard, and it stays while any shard has one", async () => {
    const bucket = `shared-${crypto.randomUUID().slice(0, 8)}`;
    expect(
      (
        await admin("POST", "/buckets", {
          id: bucket,
          rules: { upload: "authenticated", read: "public", update: "owner", delete: "owner" },
        })
      ).status,
    ).toBe(201);
    const sessions = await signUpInEachShard(svc);
    const ids: string[] = [];
    for (const session of sessions) {
      for (let i = 0; i < 3; i++) {
        const [file] = await uploaded(uploadForm([{ bytes: `f${i}` }], bucket), session.accessToken);
        ids.push(file!.id);
      }
    }
    const shards = testShards();
    expect((await listBucketsWithCounts(shards)).find((row) => row.id === bucket)?.files).toBe(6);

    // Keyset pages of 4, then offset pages: every file once, newest first, the same order.
    const keyset: string[] = [];
    let after: { createdAt: number; id: string } | undefined;
    for (;;) {
      const page = await listBucketFiles(shards, bucket, { limit: 4, after });
      keyset.push(...page.items.map((file) => file.id));
      if (!page.next) break;
      after = page.next;
    }
    const byOffset = [
      ...(await listBucketFiles(shards, bucket, { limit: 4, offset: 0 })).items,
      ...(await listBucketFiles(shards, bucket, { limit: 4, offset: 4 })).items,
    ].map((file) => file.id);
    expect(keyset).toEqual(byOffset);
    expect([...keyset].sort()).toEqual([...ids].sort());

    for (const session of sessions) {
      await expectStorageError(await admin("DELETE", `/buckets/${bucket}`), 400, "bucket is not empty");
      const own = await listBucketFiles(shards, bucket, { limit: 10 });
      for (const file of own.items.filter((item) => item.uploadedByUserId === session.user.id)) {
        expect((await remove(file.id, session.accessToken)).status).toBe(204);
      }
    }
    expect((await admin("DELETE", `/buckets/${bucket}`)).status).toBe(204);
    // The copies shards kept of its row for their files' foreign key went with it.
    for (const d1 of allD1()) {
      expect(await d1.prepare("SELECT id FROM buckets WHERE id = ?").bind(bucket).first()).toBeNull();
    }
  });
});

/** storage-js's `upload` of a user's (no upsert), through the service given these bindings. */
const faceUpload = (bucketId: string, path: string, token: string, bindings: Record<string, unknown> = {}) =>
  supabaseService(bindings).request("POST", `${STORAGE_FACE}/object/${bucketId}/${path}`, {
    headers: { apikey: PUBLISHABLE_KEY, authorization: `Bearer ${token}`, "content-type": "text/plain" },
    body: `bytes of ${path}`,
  });

/**
 * Every shard's D1 with `hook` run once, just before the first statement that writes a file's record: another
 * request's whole upload between this upload's claim of its path and its record.
 */
function beforeFirstRecord(hook: () => Promise<unknown>): Record<string, D1Database> {
  return beforeFirst(/insert into "files"/i, hook);
}

/**
 * Every shard's D1 with `hook` run once, just before the first statement whose SQL matches `match` once `ready` says
 * so (asked at each such statement).
 */
function beforeFirst(
  match: RegExp,
  hook: () => Promise<unknown>,
  ready: () => Promise<boolean> = async () => true,
): Record<string, D1Database> {
  let pending = true;
  const gate = async <T>(sql: string, work: () => Promise<T>): Promise<T> => {
    if (pending && match.test(sql) && (await ready())) {
      pending = false;
      await hook();
    }
    return work();
  };
  const names = String(env.AUTH_D1_SHARDS ?? "DB").split(",");
  const bindings = env as unknown as Record<string, D1Database>;
  return Object.fromEntries(names.map((name) => [name, wrapD1(bindings[name]!, gate)]));
}

/**
 * The owner's first file in the bucket (which anchors it in their shard), then what a crash two days ago left of an
 * upload of theirs to `path`: its path claimed, its record not uploaded, its bytes.
 */
async function deadUpload(bucketId: string, owner: WireSession, path: string) {
  expect((await faceUpload(bucketId, "first.txt", owner.accessToken)).status).toBe(200);
  const old = Date.now() - 2 * 24 * 3600 * 1000;
  const id = mintFileId(owner.user.id, 0);
  const key = `${bucketId}/${id}`;
  await claim(testShards(), owner.user.id, [pathEntry(bucketId, path)], old);
  await userD1(owner.user.id)
    .prepare(
      "INSERT INTO files (id, bucket_id, name, size, mime_type, etag, object_key, is_uploaded, uploaded_by_user_id, path, created_at, updated_at) VALUES (?, ?, ?, 0, 'text/plain', '\"\"', ?, 0, ?, ?, ?, ?)",
    )
    .bind(id, bucketId, path, key, owner.user.id, path, old, old)
    .run();
  await env.FILES.put(key, "partial");
  return { id, key };
}

describe("the daily sweep of the uploads a crash left, with several shards", () => {
  // Threat: the sweep removed a dead upload's record, bytes and id claim but kept its path's claim, old, for ever. Its
  // owner's next upload to the path went on under that old claim, which any other user's claim takes over as stale
  // while the owner's record is not written yet: both uploads were stored, one path held in two shards, and the
  // owner's file no longer found by its path (the claim names the other's shard).
  it("gives the dead upload's path back: the owner's next upload there claims it anew, and another user's is refused", async () => {
    const [other, owner] = await signUpInEachShard(svc);
    const bucketId = await userBucket("swept");
    const { id, key } = await deadUpload(bucketId, owner!, "left.txt");
    await runHousekeeping({ ...env }, getConfig(env));
    expect(await shardsHolding(id)).toEqual([]);
    expect(await env.FILES.head(key)).toBeNull();
    expect(await ownerOf(testShards(), pathEntry(bucketId, "left.txt"))).toBeUndefined();
    // The first file's claim is not the dead upload's: it stays.
    expect(await ownerOf(testShards(), pathEntry(bucketId, "first.txt"))).toBe(owner!.user.id);

    let others: Response | undefined;
    const racing = beforeFirstRecord(async () => {
      others = await faceUpload(bucketId, "left.txt", other!.accessToken);
    });
    const owners = await faceUpload(bucketId, "left.txt", owner!.accessToken, racing);
    expect(owners.status, await owners.clone().text()).toBe(200);
    expect(others?.status).toBe(400);
    expect(await others!.json()).toMatchObject({ statusCode: "409", error: "Duplicate" });
    const records = await allInShards<{ uploaded_by_user_id: string }>(
      "SELECT uploaded_by_user_id FROM files WHERE bucket_id = ? AND path = 'left.txt'",
      bucketId,
    );
    expect(records).toEqual([{ uploaded_by_user_id: owner!.user.id }]);
    expect(await ownerOf(testShards(), pathEntry(bucketId, "left.txt"))).toBe(owner!.user.id);
  });

  // Threat: the sweep giving back a path its owner's newer upload holds (stored after the dead record went, before
  // its claim was released): that file no longer found by its path, and the path free for another user's file.
  it("keeps the claim of a path the owner's newer upload took meanwhile", async () => {
    const [other, owner] = await signUpInEachShard(svc);
    const bucketId = await userBucket("swept");
    const { id } = await deadUpload(bucketId, owner!, "again.txt");
    let newer: Response | undefined;
    // Once the dead record is gone, the owner's upload is stored before the sweep gives back what it held.
    const sweeping = beforeFirst(
      /delete from "directory"/i,
      async () => {
        newer = await faceUpload(bucketId, "again.txt", owner!.accessToken);
      },
      async () => (await shardsHolding(id)).length === 0,
    );
    await runHousekeeping({ ...env, ...sweeping }, getConfig(env));
    expect(newer?.status).toBe(200);
    expect(await shardsHolding(id)).toEqual([]);
    expect(await ownerOf(testShards(), pathEntry(bucketId, "again.txt"))).toBe(owner!.user.id);
    const refused = await faceUpload(bucketId, "again.txt", other!.accessToken);
    expect(refused.status).toBe(400);
    const read = await supabaseService().request("GET", `${STORAGE_FACE}/object/${bucketId}/again.txt`, {
      headers: { apikey: PUBLISHABLE_KEY, authorization: `Bearer ${owner!.accessToken}` },
    });
    expect(await read.text()).toBe("bytes of again.txt");
  });

  // Threat: the sweep deleted a dead reservation's row and gave its client-chosen id back before deleting its bytes,
  // under the key every upload of the id writes (`default/<id>`): an upload of the id in between was answered 201, and
  // then lost its bytes to the sweep — a file that 404s. The bytes now go first, while the row still holds the id.
  it("an upload of a dead reservation's chosen id while the sweep removes it: never a 201 whose bytes it deletes", async () => {
    const owner = await signUpInShard(svc, 1);
    const token = owner.accessToken;
    // Their first file anchors the bucket in their shard.
    await uploaded(uploadForm([{ bytes: "first", type: "text/plain" }]), token);
    const id = crypto.randomUUID();
    const old = Date.now() - 2 * 24 * 3600 * 1000;
    await claim(testShards(), owner.user.id, [fileEntry(id)], old);
    await userD1(owner.user.id)
      .prepare(
        "INSERT INTO files (id, bucket_id, name, size, mime_type, etag, object_key, is_uploaded, uploaded_by_user_id, created_at, updated_at) VALUES (?, 'default', 'dead.txt', 0, 'text/plain', '\"\"', ?, 0, ?, ?, ?)",
      )
      .bind(id, `default/${id}`, owner.user.id, old, old)
      .run();
    await env.FILES.put(`default/${id}`, "partial");
    const gated = pausingFiles((key) => key === `default/${id}`, "delete");
    const sweeping = runHousekeeping({ ...env, FILES: gated.files }, getConfig(env));
    await gated.arrived;
    const upload = () =>
      svc.request("POST", `${STORAGE}/files`, {
        body: uploadForm([{ bytes: "the new bytes", type: "text/plain", metadata: { id } }]),
        token,
      });
    const during = await upload();
    const answered = during.status;
    const text = await during.text();
    gated.release();
    await sweeping;
    const served = (await svc.request("GET", `${STORAGE}/files/${id}`, { token })).status;
    expect({ answered, served }, text).toEqual({ answered: 409, served: 404 });
    expect(await shardsHolding(id)).toEqual([]);
    expect((await upload()).status).toBe(201);
    const download = await svc.request("GET", `${STORAGE}/files/${id}`, { token });
    expect(await download.text()).toBe("the new bytes");
  });
});
