import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { PART_SIZE } from "../../src/storage/r2-writer";
import { NO_VERIFICATION, service, signUp } from "../helpers";
import { allInShards } from "../support/shards";
import {
  expectStorageError,
  get,
  md5Etag,
  PNG,
  STORAGE,
  svc,
  type Upload,
  uploadForm,
  type WireFile,
} from "./helpers";

/**
 * Uploads whose parts come in another order than nhost-js 4.x's (bucket-id, every metadata[], every file[]):
 * nhost-js 3.x (and @nhost/react, @nhost/nextjs on it) sends each file[] before its metadata[] and bucket-id last;
 * its upload hooks send file[], bucket-id, metadata[]. Nhost Storage accepts any order, and so does the service,
 * with every file's bytes streamed to R2 as they arrive (src/storage/upload-settle.ts).
 */

const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };
const meta = (entry: Record<string, unknown>) =>
  new Blob([JSON.stringify(entry)], { type: "application/json" });
const blob = (upload: Upload) => new Blob([upload.bytes], { type: upload.type ?? "text/plain" });

/** nhost-js 3.x's `storage.upload`: each file[] followed by its metadata[] (a Blob), then bucket-id. */
function form3x(uploads: Upload[], bucketId?: string, order: "pairs" | "files-first" = "pairs"): FormData {
  const form = new FormData();
  const entries = uploads.map((upload) => upload.metadata);
  for (const [i, upload] of uploads.entries()) {
    form.append("file[]", blob(upload), upload.name ?? "file.txt");
    if (order === "pairs" && entries[i]) form.append("metadata[]", meta(entries[i]!), "");
  }
  if (order === "files-first")
    for (const entry of entries) if (entry) form.append("metadata[]", meta(entry), "");
  if (bucketId) form.append("bucket-id", bucketId);
  return form;
}

const post = (form: FormData, token?: string, headers: Record<string, string> = {}) =>
  svc.request("POST", `${STORAGE}/files`, { body: form, token, headers });

async function created(response: Response): Promise<WireFile[]> {
  const body = (await response.json()) as { processedFiles: WireFile[] };
  if (response.status !== 201) throw new Error(`upload: ${response.status} ${JSON.stringify(body)}`);
  return body.processedFiles;
}

/** What the upload left: records in every shard, objects in R2 (any key). */
async function leftovers() {
  const records = (await allInShards<{ n: number }>("SELECT count(*) AS n FROM files")).reduce(
    (s, r) => s + r.n,
    0,
  );
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await env.FILES.list({ cursor });
    keys.push(...page.objects.map((object) => object.key));
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return { records, keys: keys.sort() };
}

async function bucket(id: string, settings: Record<string, unknown>) {
  const answer = await svc.request("POST", `${STORAGE}/buckets`, {
    headers: ADMIN,
    json: { id, ...settings },
  });
  expect([201, 409]).toContain(answer.status);
}

const text = async (id: string, token?: string) => (await get(id, {}, token)).text();

beforeAll(async () => {
  await bucket("late-docs", {
    rules: { upload: "authenticated", read: "owner", update: "owner", delete: "owner" },
  });
  await bucket("late-images", { allowedMimeTypes: ["image/*"], maxUploadFileSize: 100 });
  await bucket("late-admins", {
    rules: { upload: ["admin"], read: "owner", update: "owner", delete: "owner" },
  });
});

describe("parts in either order", () => {
  it("one file, its metadata[] after it and bucket-id last (nhost-js 3.x): the id, name, metadata and bucket apply", async () => {
    const { accessToken, user } = await signUp(svc);
    const id = crypto.randomUUID();
    const [file] = await created(
      await post(
        form3x(
          [{ bytes: "late", name: "a.txt", metadata: { id, name: "named.txt", metadata: { k: 1 } } }],
          "late-docs",
        ),
        accessToken,
      ),
    );
    expect(file).toMatchObject({
      id,
      name: "named.txt",
      bucketId: "late-docs",
      metadata: { k: 1 },
      size: 4,
      isUploaded: true,
      uploadedByUserId: user.id,
    });
    expect(await text(id, accessToken)).toBe("late");
    // One record, one object: the provisional record went when the id came.
    const [record] = await allInShards<{ object_key: string }>(
      "SELECT object_key FROM files WHERE id = ?",
      id,
    );
    expect((await env.FILES.head(record!.object_key))?.size).toBe(4);
  });

  it("several files, paired or all files first, as fields or Blobs, with and without ids", async () => {
    const { accessToken } = await signUp(svc);
    const ids = [crypto.randomUUID(), crypto.randomUUID()];
    const uploads: Upload[] = [
      { bytes: "first", name: "1.txt", metadata: { id: ids[0], name: "one.txt" } },
      { bytes: "second", name: "2.txt", metadata: { name: "two.txt", metadata: { n: 2 } } },
      { bytes: "third", name: "3.txt", metadata: { id: ids[1] } },
    ];
    for (const order of ["pairs", "files-first"] as const) {
      const fresh = uploads.map((u, i) => ({
        ...u,
        metadata: { ...u.metadata, id: i === 1 ? undefined : crypto.randomUUID() },
      }));
      const files = await created(await post(form3x(fresh, undefined, order), accessToken));
      expect(files.map((f) => [f.id, f.name, f.bucketId, f.metadata])).toEqual([
        [fresh[0]!.metadata!.id, "one.txt", "default", null],
        [expect.any(String), "two.txt", "default", { n: 2 }],
        [fresh[2]!.metadata!.id, "3.txt", "default", null],
      ]);
      expect(await Promise.all(files.map((f) => text(f.id, accessToken)))).toEqual([
        "first",
        "second",
        "third",
      ]);
    }
    // Node clients send metadata[] as plain fields; nhost-js 3.x's upload hooks send bucket-id between.
    const fields = new FormData();
    fields.append("file[]", new Blob(["hook"], { type: "text/plain" }), "hook.txt");
    fields.append("bucket-id", "late-docs");
    fields.append("metadata[]", JSON.stringify({ id: ids[0], name: "hook.txt" }));
    const [hook] = await created(await post(fields, accessToken));
    expect(hook).toMatchObject({ id: ids[0], name: "hook.txt", bucketId: "late-docs" });
    // The 4.x order still stores each file under its id from the start.
    const [inOrder] = await created(
      await post(uploadForm([{ bytes: "ordered", metadata: { id: ids[1], name: "o.txt" } }]), accessToken),
    );
    expect(inOrder).toMatchObject({ id: ids[1], name: "o.txt" });
  });

  it("a metadata[] after its file, and one before the next: mixed orders pair by position", async () => {
    const { accessToken } = await signUp(svc);
    const form = new FormData();
    form.append("metadata[]", meta({ name: "before.txt" }), "");
    form.append("file[]", new Blob(["1"], { type: "text/plain" }), "x.txt");
    form.append("file[]", new Blob(["22"], { type: "text/plain" }), "y.txt");
    form.append("metadata[]", meta({ name: "after.txt" }), "");
    const files = await created(await post(form, accessToken));
    expect(files.map((f) => [f.name, f.size])).toEqual([
      ["before.txt", 1],
      ["after.txt", 2],
    ]);
  });

  it("a file larger than one R2 part, before its metadata[]: streamed, then named", async () => {
    const { accessToken } = await signUp(svc);
    const bytes = new Uint8Array(PART_SIZE + 12_345);
    for (let i = 0; i < bytes.length; i += 65_536) crypto.getRandomValues(bytes.subarray(i, i + 65_536));
    const id = crypto.randomUUID();
    const [file] = await created(
      await post(
        form3x([{ bytes, type: "application/x-test", metadata: { id, name: "big.bin" } }]),
        accessToken,
      ),
    );
    expect(file).toMatchObject({ id, name: "big.bin", size: bytes.length, etag: await md5Etag(bytes) });
    const downloaded = new Uint8Array(await (await get(id, {}, accessToken)).arrayBuffer());
    expect(Buffer.compare(downloaded, bytes), "the downloaded bytes differ from the uploaded ones").toBe(0);
  }, 20_000);
});

describe("out-of-order uploads that fail keep nothing", () => {
  // Threat: a metadata[] after its file naming another user's file id, to take over its record or its bytes. The id
  // is reserved as if named first: any record holding it refuses the upload (409), the victim's record and bytes
  // stay, and the attacker's bytes and provisional record go.
  it("a late metadata[] naming another user's file: 409, the victim's file unchanged, nothing left", async () => {
    const victim = await signUp(svc);
    const attacker = await signUp(svc);
    const [owned] = await created(
      await post(
        uploadForm([{ bytes: "victim's", name: "mine.txt", metadata: { name: "mine.txt" } }]),
        victim.accessToken,
      ),
    );
    const before = await leftovers();
    const response = await post(
      form3x([
        { bytes: "innocent", metadata: { name: "fine.txt" } },
        { bytes: "attacker's", metadata: { id: owned!.id, name: "taken.txt" } },
      ]),
      attacker.accessToken,
    );
    await expectStorageError(response.clone(), 409, `a file with id ${owned!.id} already exists`);
    expect(((await response.json()) as { processedFiles: unknown[] }).processedFiles).toEqual([]);
    expect(await leftovers()).toEqual(before);
    const download = await get(owned!.id, {}, victim.accessToken);
    expect(await download.text()).toBe("victim's");
    expect(download.headers.get("content-disposition")).toContain("mine.txt");
  });

  it("two late metadata[] naming one id: 409, and the first file is not kept either", async () => {
    const { accessToken } = await signUp(svc);
    const id = crypto.randomUUID();
    const before = await leftovers();
    await expectStorageError(
      await post(
        form3x([
          { bytes: "a", metadata: { id } },
          { bytes: "b", metadata: { id } },
        ]),
        accessToken,
      ),
      409,
      `a file with id ${id} already exists`,
    );
    expect(await leftovers()).toEqual(before);
    expect((await get(id, {}, accessToken)).status).toBe(404);
  });

  it("parts that do not pair, a late bucket-id that is unknown, refuses the file or the caller: 4xx, nothing left", async () => {
    const { accessToken } = await signUp(svc);
    const before = await leftovers();
    const twoForOne = form3x([{ bytes: "a", metadata: { name: "a" } }, { bytes: "b" }]);
    await expectStorageError(
      await post(twoForOne, accessToken),
      400,
      "malformed multipart/form-data: file[] part 2 has no metadata[] part (1 sent)",
    );
    const oneForTwo = form3x([{ bytes: "a", metadata: { name: "a" } }]);
    oneForTwo.append("metadata[]", meta({ name: "extra" }), "");
    await expectStorageError(
      await post(oneForTwo, accessToken),
      400,
      "malformed multipart/form-data: metadata[] part 2 has no file[] part (1 sent)",
    );
    const badJson = new FormData();
    badJson.append("file[]", new Blob(["a"]), "a.txt");
    badJson.append("metadata[]", "{not json");
    await expectStorageError(await post(badJson, accessToken), 400, "metadata[] must be JSON");
    await expectStorageError(
      await post(form3x([{ bytes: "a", metadata: { name: "a" } }], "no-such-bucket"), accessToken),
      404,
      "bucket not found",
    );
    // The bucket's own rules apply once it is known: a type and a size it refuses (the default accepts both).
    const refused = await post(
      form3x([{ bytes: "text", type: "text/plain", metadata: { name: "a" } }], "late-images"),
      accessToken,
    );
    await expectStorageError(refused.clone(), 400, "file type text/plain is not allowed in this bucket");
    expect(((await refused.json()) as { processedFiles: unknown[] }).processedFiles).toEqual([]);
    await expectStorageError(
      await post(form3x([{ bytes: new Uint8Array(101), type: "image/png" }], "late-images"), accessToken),
      400,
      "file too large: more than 100 bytes",
    );
    await expectStorageError(
      await post(form3x([{ bytes: "a" }], "late-admins"), accessToken),
      403,
      "you are not authorized",
    );
    expect(await leftovers()).toEqual(before);
  });

  // Threat: a form of many file parts whose metadata[] never pairs: every provisional record and its bytes go.
  it("thirty files and one metadata[] after them: 400, and none of the thirty is left", async () => {
    const { accessToken } = await signUp(svc);
    const before = await leftovers();
    const form = form3x(Array.from({ length: 30 }, (_, i) => ({ bytes: `file ${i}` })));
    form.append("metadata[]", meta({ name: "only one" }), "");
    await expectStorageError(
      await post(form, accessToken),
      400,
      "malformed multipart/form-data: file[] part 2 has no metadata[] part (1 sent)",
    );
    expect(await leftovers()).toEqual(before);
  });

  it("a rule broken midway: the earlier files of an out-of-order form go too (the in-order form keeps them)", async () => {
    const { accessToken } = await signUp(svc);
    const before = await leftovers();
    const form = new FormData();
    form.append("bucket-id", "late-images");
    form.append("file[]", new Blob([new Uint8Array(10)], { type: "image/png" }), "ok.png");
    form.append("metadata[]", meta({ name: "ok.png" }), "");
    form.append("file[]", new Blob([new Uint8Array(101)], { type: "image/png" }), "big.png");
    form.append("metadata[]", meta({ name: "big.png" }), "");
    const response = await post(form, accessToken);
    await expectStorageError(response.clone(), 400, "file too large: more than 100 bytes");
    expect(((await response.json()) as { processedFiles: unknown[] }).processedFiles).toEqual([]);
    expect(await leftovers()).toEqual(before);
  });

  it("a body cut off after an out-of-order file: 400, no record, no object", async () => {
    const { accessToken } = await signUp(svc);
    const before = await leftovers();
    const whole = new Response(
      form3x([{ bytes: "whole", metadata: { name: "w" } }, { bytes: "x".repeat(5000) }]),
    );
    const wire = new Uint8Array(await whole.arrayBuffer());
    const response = await service(NO_VERIFICATION).request("POST", `${STORAGE}/files`, {
      body: wire.subarray(0, wire.length - 2000),
      token: accessToken,
      headers: { "content-type": whole.headers.get("content-type")! },
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { processedFiles: unknown[] }).processedFiles).toEqual([]);
    expect(await leftovers()).toEqual(before);
  });
});

describe("the bucket named after the files", () => {
  it("streams under what some bucket accepts and applies the named bucket's rules: a type the default refuses", async () => {
    // The default bucket takes images only here; late-docs takes anything. A PDF whose bucket-id comes last is
    // accepted into late-docs, and refused when it names no bucket.
    const patched = await svc.request("PATCH", `${STORAGE}/buckets/default`, {
      headers: ADMIN,
      json: { allowedMimeTypes: ["image/*"] },
    });
    expect(patched.status).toBe(200);
    try {
      const { accessToken } = await signUp(svc);
      const pdf: Upload = { bytes: "%PDF-1.4", type: "application/pdf", metadata: { name: "doc.pdf" } };
      const [file] = await created(await post(form3x([pdf], "late-docs"), accessToken));
      expect(file).toMatchObject({ bucketId: "late-docs", mimeType: "application/pdf", name: "doc.pdf" });
      const before = await leftovers();
      await expectStorageError(
        await post(form3x([pdf]), accessToken),
        400,
        "file type application/pdf is not allowed in this bucket",
      );
      expect(await leftovers()).toEqual(before);
      // In 4.x's order the files before the refused one are kept and listed, as before, though the default's rules
      // apply only once the form is read (another bucket takes what it refuses).
      const inOrder = await post(
        uploadForm([
          { bytes: PNG, type: "image/png", metadata: { name: "ok.png" } },
          { bytes: "text", type: "text/plain", metadata: { name: "no.txt" } },
        ]),
        accessToken,
      );
      await expectStorageError(inOrder.clone(), 400, "file type text/plain is not allowed in this bucket");
      const { processedFiles } = (await inOrder.json()) as { processedFiles: WireFile[] };
      expect(processedFiles.map((f) => [f.name, f.bucketId])).toEqual([["ok.png", "default"]]);
      expect(await text(processedFiles[0]!.id, accessToken)).not.toBe("");
    } finally {
      await svc.request("PATCH", `${STORAGE}/buckets/default`, {
        headers: ADMIN,
        json: { allowedMimeTypes: [] },
      });
    }
  });

  // Threat: an anonymous caller streaming files no bucket would take from them. With no bucket-id yet, the caller is
  // refused at the first file when no bucket lets them upload, before a byte is stored.
  it("a caller no bucket lets upload is refused at the first file", async () => {
    const before = await leftovers();
    await expectStorageError(
      await post(form3x([{ bytes: "anon" }], "late-docs")),
      403,
      "you are not authorized",
    );
    expect(await leftovers()).toEqual(before);
  });
});

describe("out of order with several shards", () => {
  // The provisional record is in the shard of the id drawn for the upload; the id named later may belong to another
  // (an upload with the admin secret keeps a chosen id in its file subject's shard: src/storage/file-shards.ts).
  it("an admin upload naming ids after the files: one record per file, in the shard each id says, none provisional", async () => {
    const ids = Array.from({ length: 4 }, () => crypto.randomUUID());
    const before = await leftovers();
    const files = await created(
      await post(form3x(ids.map((id, i) => ({ bytes: `admin ${i}`, metadata: { id } }))), undefined, ADMIN),
    );
    expect(files.map((file) => file.id)).toEqual(ids);
    const after = await leftovers();
    expect(after.records).toBe(before.records + ids.length);
    expect(after.keys.length).toBe(before.keys.length + ids.length);
    for (const id of ids) {
      expect(await allInShards("SELECT id FROM files WHERE id = ? AND is_uploaded = 1", id)).toHaveLength(1);
      expect(await (await get(id, ADMIN)).text()).toBe(`admin ${ids.indexOf(id)}`);
    }
  });
});
