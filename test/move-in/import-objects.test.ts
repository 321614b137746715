import { describe, expect, it } from "vitest";
import { storageClient, uniqueBucket } from "../faces/supabase/storage-support";
import { SECRET_KEY, supabaseService } from "../faces/supabase/support";
import { firstInAnyShard } from "../support/shards";
import { admin, iso } from "./support";

/**
 * Supabase Storage's buckets and objects through the import API (import-supabase's storage reader, contract
 * supabase.md §5): a bucket's `public` decides its rules as the face's bucket creation does, and an object keeps its
 * bucket and name as its path (`files.path`), so the Supabase face finds it where Storage served it. The whole
 * command, with storage-js and the Nhost API reading the bytes, is test/compat/supabase-import.test.ts.
 */

const svc = supabaseService();
const faceAdmin = storageClient(svc, SECRET_KEY).storage;
const b64url = (value: unknown) =>
  btoa(String.fromCharCode(...new TextEncoder().encode(JSON.stringify(value))))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
const md5 = async (bytes: Uint8Array) =>
  `"${[...new Uint8Array(await crypto.subtle.digest("MD5", bytes))].map((b) => b.toString(16).padStart(2, "0")).join("")}"`;
const created = iso(Date.now() - 86_400_000);

async function importBuckets(buckets: Record<string, unknown>[]) {
  const response = await svc.request("POST", "/admin/import/nhost/buckets", {
    json: { buckets },
    headers: admin(),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { results: { id: string; outcome: string }[] }).results;
}

const supabaseBucket = (id: string, overrides: Record<string, unknown> = {}) => ({
  id,
  downloadExpiration: 30,
  minUploadFileSize: 0,
  maxUploadFileSize: null,
  cacheControl: null,
  presignedUrlsEnabled: true,
  public: false,
  allowedMimeTypes: null,
  createdAt: created,
  updatedAt: created,
  ...overrides,
});

async function object(bucketId: string, path: string, bytes: Uint8Array, id = crypto.randomUUID()) {
  return {
    id,
    bucketId,
    name: path.slice(path.lastIndexOf("/") + 1),
    path,
    size: bytes.length,
    mimeType: "text/plain",
    etag: await md5(bytes),
    isUploaded: true,
    uploadedByUserId: null,
    metadata: { caption: path },
    createdAt: created,
    updatedAt: iso(Date.now()),
  };
}

async function plan(record: Record<string, unknown>) {
  const response = await svc.request("POST", "/admin/import/nhost/files/plan", {
    json: { files: [record] },
    headers: admin(),
  });
  return ((await response.json()) as { results: { outcome: string; reasons?: { reason: string }[] }[] })
    .results[0]!;
}

const put = (record: { id: string }, bytes: Uint8Array) =>
  svc.request("PUT", `/admin/import/nhost/files/${record.id}`, {
    body: bytes,
    headers: { ...admin(), "content-type": "application/octet-stream", "x-import-file": b64url(record) },
  });

const text = (s: string) => new TextEncoder().encode(s);

describe("Supabase Storage moved in through the import API", () => {
  it("a public bucket is readable by anyone and closed otherwise; a private one is closed to every client", async () => {
    const [open, closed] = [uniqueBucket("pub"), uniqueBucket("priv")];
    const results = await importBuckets([
      supabaseBucket(open, { public: true, allowedMimeTypes: ["image/*"] }),
      supabaseBucket(closed, { maxUploadFileSize: 1_000_000 }),
    ]);
    expect(results.map((r) => r.outcome)).toEqual(["imported", "imported"]);
    const row = (id: string) =>
      firstInAnyShard<{ rules: string; allowed_mime_types: string; max_upload_file_size: number }>(
        "SELECT rules, allowed_mime_types, max_upload_file_size, min_upload_file_size FROM buckets WHERE id = ?",
        id,
      );
    expect(await row(open)).toMatchObject({ min_upload_file_size: 0, max_upload_file_size: 50_000_000 });
    expect(JSON.parse((await row(open))!.rules)).toEqual({
      upload: "none",
      read: "public",
      update: "none",
      delete: "none",
    });
    expect(JSON.parse((await row(open))!.allowed_mime_types)).toEqual(["image/*"]);
    expect(JSON.parse((await row(closed))!.rules)).toEqual({
      upload: "none",
      read: "none",
      update: "none",
      delete: "none",
    });
    expect((await row(closed))!.max_upload_file_size).toBe(1_000_000);
  });

  it("an object keeps its bucket and name as its path; renamed in Supabase, it moves and frees the old path", async () => {
    const bucketId = uniqueBucket("moved");
    await importBuckets([supabaseBucket(bucketId)]);
    const bytes = text("the first report");
    const record = await object(bucketId, "2026/report.txt", bytes);
    expect((await plan(record)).outcome).toBe("needs-bytes");
    expect(await (await put(record, bytes)).json()).toEqual({ id: record.id, outcome: "imported" });
    const found = await faceAdmin.from(bucketId).download("2026/report.txt");
    expect(new Uint8Array(await found.data!.arrayBuffer())).toEqual(bytes);

    // storage-js `move` in Supabase keeps the object's id and changes its name: the next run follows it.
    const moved = {
      ...record,
      path: "archive/report.txt",
      name: "report.txt",
      updatedAt: iso(Date.now() + 1),
    };
    expect((await plan(moved)).outcome).toBe("needs-bytes");
    expect(await (await put(moved, bytes)).json()).toEqual({ id: record.id, outcome: "updated" });
    const there = await faceAdmin.from(bucketId).download("archive/report.txt");
    expect(new Uint8Array(await there.data!.arrayBuffer())).toEqual(bytes);
    expect((await faceAdmin.from(bucketId).download("2026/report.txt")).data).toBeNull();
    const again = await faceAdmin.from(bucketId).upload("2026/report.txt", new Blob(["new"]));
    expect(again.error).toBeNull();
  });

  // Threat: an import overwriting, or doubling, an object this service's own users wrote at the same path.
  it("a path held here by a file the import did not write is a report line, and nothing is written", async () => {
    const bucketId = uniqueBucket("taken");
    await importBuckets([supabaseBucket(bucketId)]);
    const mine = await faceAdmin.from(bucketId).upload("a.txt", new Blob(["written here"]));
    expect(mine.error).toBeNull();
    const bytes = text("from supabase");
    const record = await object(bucketId, "a.txt", bytes);
    expect(await plan(record)).toMatchObject({
      outcome: "skipped",
      reasons: [{ reason: expect.stringMatching(/another file here has this bucket and path/) }],
    });
    expect((await put(record, bytes)).status).toBe(400);
    expect(await firstInAnyShard("SELECT id FROM files WHERE id = ?", record.id)).toBeNull();
    const still = await faceAdmin.from(bucketId).download("a.txt");
    expect(await still.data!.text()).toBe("written here");
  });

  // Threat: an object deleted in Supabase leaving its path claimed here, so nobody could write that path again.
  it("an object deleted in Supabase goes by the next run's removals, and its path is free again", async () => {
    const bucketId = uniqueBucket("gone");
    await importBuckets([supabaseBucket(bucketId)]);
    const bytes = text("soon gone");
    const record = {
      ...(await object(bucketId, "a/gone.txt", bytes)),
      uploadedByUserId: crypto.randomUUID(),
    };
    expect((await (await put(record, bytes)).json()) as unknown).toEqual({
      id: record.id,
      outcome: "imported",
    });
    const removal = await svc.request("POST", "/admin/import/nhost/removals", {
      json: { kind: "file", ids: [record.id] },
      headers: admin(),
    });
    expect(await removal.json()).toMatchObject({ results: [{ id: record.id, outcome: "deleted" }] });
    expect((await faceAdmin.from(bucketId).download("a/gone.txt")).data).toBeNull();
    const reused = await faceAdmin.from(bucketId).upload("a/gone.txt", new Blob(["written here"]));
    expect(reused.error).toBeNull();
  });

  // Threat: lost data. Buckets and files of one system's run recorded as another's: a later Nhost run's removal pass
  // would take Supabase's objects for files deleted at Nhost, and a Nhost bucket of the same id would overwrite it.
  it("buckets and files carry their run's system: Nhost's ledger page and removals leave Supabase's alone", async () => {
    const bucketId = uniqueBucket("sys");
    const asSupabase = (path: string, body: Record<string, unknown>) =>
      svc.request("POST", `/admin/import/nhost${path}`, {
        json: { ...body, system: "supabase" },
        headers: admin(),
      });
    const bucket = await asSupabase("/buckets", { buckets: [supabaseBucket(bucketId)] });
    expect(((await bucket.json()) as { results: { outcome: string }[] }).results[0]!.outcome).toBe(
      "imported",
    );
    const bytes = text("kept by its system");
    const record = await object(bucketId, "a/kept.txt", bytes);
    const planned = await asSupabase("/files/plan", { files: [record] });
    expect(((await planned.json()) as { results: { outcome: string }[] }).results[0]!.outcome).toBe(
      "needs-bytes",
    );
    const stored = await svc.request("PUT", `/admin/import/nhost/files/${record.id}?system=supabase`, {
      body: bytes,
      headers: { ...admin(), "content-type": "application/octet-stream", "x-import-file": b64url(record) },
    });
    expect(await stored.json()).toEqual({ id: record.id, outcome: "imported" });

    const page = async (system: string, kind: string) => {
      const answer = await svc.request(
        "GET",
        `/admin/import/nhost/ledger?system=${system}&kind=${kind}&limit=1000`,
        {
          headers: admin(),
        },
      );
      return JSON.stringify(await answer.json());
    };
    expect(await page("nhost", "file")).not.toContain(record.id);
    expect(await page("supabase", "file")).toContain(record.id);
    expect(await page("nhost", "bucket")).not.toContain(bucketId);
    expect(await page("supabase", "bucket")).toContain(bucketId);

    // Nhost's run: its removal of the object leaves it; its bucket of the same id is refused, its file record too.
    const removal = await svc.request("POST", "/admin/import/nhost/removals", {
      json: { kind: "file", ids: [record.id] },
      headers: admin(),
    });
    expect(JSON.stringify(await removal.json())).toContain("absent");
    expect((await importBuckets([supabaseBucket(bucketId)]))[0]).toMatchObject({ outcome: "skipped" });
    expect((await plan(record)).reasons?.[0]?.reason).toBe(
      "already imported from supabase: not imported from nhost",
    );
    const found = await faceAdmin.from(bucketId).download("a/kept.txt");
    expect(new Uint8Array(await found.data!.arrayBuffer())).toEqual(bytes);
  });
});
