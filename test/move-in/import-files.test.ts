import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { expectContractError, service } from "../helpers";
import { STORAGE } from "../storage/helpers";
import { countedBody } from "../support/counted-body";
import { userD1 } from "../support/shards";
import { admin, iso } from "./support";

/**
 * The import's storage half (contract move-in §2): buckets with their limits, then each file planned and, when
 * needed, its bytes streamed in: same id, name, size, MIME type, quoted ETag, uploader and metadata; a record never
 * without its bytes; a second run moves no bytes.
 */

const svc = service();
const md5 = async (bytes: Uint8Array) =>
  `"${[...new Uint8Array(await crypto.subtle.digest("MD5", bytes))].map((b) => b.toString(16).padStart(2, "0")).join("")}"`;
const b64url = (value: unknown) =>
  btoa(String.fromCharCode(...new TextEncoder().encode(JSON.stringify(value))))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");

async function nhostFile(bucketId: string, bytes: Uint8Array, overrides: Record<string, unknown> = {}) {
  return {
    id: crypto.randomUUID(),
    bucketId,
    name: "report 2024.pdf",
    size: bytes.length,
    mimeType: "application/pdf",
    etag: await md5(bytes),
    isUploaded: true,
    uploadedByUserId: crypto.randomUUID(),
    metadata: { from: "nhost" },
    createdAt: iso(Date.now() - 86_400_000),
    updatedAt: iso(Date.now() - 86_400_000),
    ...overrides,
  };
}

const plan = async (files: unknown[]) => {
  const response = await svc.request("POST", "/admin/import/nhost/files/plan", {
    json: { files },
    headers: admin(),
  });
  expect(response.status).toBe(200);
  return (
    (await response.json()) as { results: { id: string; outcome: string; reasons?: { reason: string }[] }[] }
  ).results;
};
const put = (record: { id: string }, body: BodyInit, header = b64url(record)) =>
  svc.request("PUT", `/admin/import/nhost/files/${record.id}`, {
    body,
    headers: { ...admin(), "content-type": "application/octet-stream", "x-import-file": header },
  });

const bucketCreated = iso(Date.now());

/** The shard of a record Nhost named: its uploader's, or with none the file's own (src/storage/file-shards.ts). */
const fileD1 = (record: { id: string; uploadedByUserId: string | null }) =>
  userD1(record.uploadedByUserId ?? `file:${record.id}`);

async function importBucket(id: string) {
  const response = await svc.request("POST", "/admin/import/nhost/buckets", {
    json: {
      buckets: [
        {
          id,
          downloadExpiration: 60,
          minUploadFileSize: 1,
          maxUploadFileSize: 1_000_000,
          cacheControl: "max-age=60",
          presignedUrlsEnabled: true,
          createdAt: bucketCreated,
          updatedAt: bucketCreated,
        },
      ],
    },
    headers: admin(),
  });
  return ((await response.json()) as { results: { outcome: string }[] }).results[0]!.outcome;
}

describe("files moved from Nhost Storage", () => {
  it("download with the same id, bytes, name, type and ETag; a second run moves no bytes", async () => {
    const bucket = `moved-${crypto.randomUUID().slice(0, 8)}`;
    expect(await importBucket(bucket)).toBe("imported");
    expect(await importBucket(bucket)).toBe("unchanged");
    const bytes = new Uint8Array(70_000).map((_, i) => (i * 7919) % 251);
    const record = await nhostFile(bucket, bytes);
    expect(await plan([record])).toEqual([{ id: record.id, outcome: "needs-bytes" }]);
    const answer = await put(record, bytes);
    expect(await answer.json()).toEqual({ id: record.id, outcome: "imported" });

    const download = await svc.request("GET", `${STORAGE}/files/${record.id}`, { headers: admin() });
    expect(download.status).toBe(200);
    expect(download.headers.get("etag")).toBe(record.etag);
    expect(download.headers.get("content-type")).toBe("application/pdf");
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(bytes);
    const meta = await svc.request("GET", `${STORAGE}/files/${record.id}/presignedurl`, {
      headers: admin(),
    });
    expect(meta.status).toBe(200);
    const row = await fileD1(record)
      .prepare("SELECT * FROM files WHERE id = ?")
      .bind(record.id)
      .first<Record<string, unknown>>();
    expect(row).toMatchObject({
      name: "report 2024.pdf",
      bucket_id: bucket,
      uploaded_by_user_id: record.uploadedByUserId,
    });

    expect(await plan([record])).toEqual([{ id: record.id, outcome: "unchanged" }]);
  });

  it("bytes that are not the record's (size or MD5) are refused and nothing is written", async () => {
    const bytes = crypto.getRandomValues(new Uint8Array(1000));
    const record = await nhostFile("default", bytes);
    await expectContractError(await put(record, bytes.slice(0, 999)), "short");
    await expectContractError(await put(record, new Uint8Array(1001)), "long");
    await expectContractError(await put(record, new Uint8Array(1000)), "other bytes, same size");
    await expectContractError(await put(record, bytes, "not base64 json!"), "bad header");
    await expectContractError(
      await put({ id: crypto.randomUUID() }, bytes, b64url(record)),
      "header for another id",
    );
    expect(
      await fileD1(record).prepare("SELECT id FROM files WHERE id = ?").bind(record.id).first(),
    ).toBeNull();
    expect(await env.FILES.get(`default/${record.id}`)).toBeNull();
  });

  it("records that can't be imported are reported, not written: no bucket, never uploaded, malformed", async () => {
    const bytes = new Uint8Array([1, 2, 3]);
    const noBucket = await nhostFile("no-such-bucket", bytes);
    const notUploaded = await nhostFile("default", bytes, { isUploaded: false });
    const results = await plan([noBucket, notUploaded, { id: 5 }]);
    expect(results.map((r) => r.outcome)).toEqual(["skipped", "skipped", "skipped"]);
    expect(results[0]!.reasons![0]!.reason).toMatch(/bucket no-such-bucket/);
    expect(results[1]!.reasons![0]!.reason).toMatch(/is_uploaded/);
  });
});

// Threat: the import answers without reading a file's bytes (its record unchanged: a second run sends every file
// again) or stops reading them (more bytes than the record's). A body cancelled while the client is still sending it is
// a lost connection (lib/refused-body.ts): the import script saw a reset or a 500 instead of the answer, retried,
// and stopped the run. The rest is read past, up to the bound.
describe("a file import answered before its bytes are read", () => {
  const THREE_MB = new Uint8Array(3 * 1024 * 1024).map((_, i) => (i * 7919) % 251);

  it("a second run's unchanged file, and bytes longer than the record's, are read to their end", async () => {
    const record = await nhostFile("default", THREE_MB);
    expect(await (await put(record, THREE_MB)).json()).toEqual({ id: record.id, outcome: "imported" });
    const again = countedBody(THREE_MB);
    expect(await (await put(record, again.body)).json()).toEqual({ id: record.id, outcome: "unchanged" });
    expect(again.seen).toEqual({ read: THREE_MB.length, cancelled: false });

    const small = await nhostFile("default", THREE_MB.slice(0, 1000));
    const long = countedBody(THREE_MB);
    await expectContractError(await put(small, long.body), "more bytes than the record's");
    expect(long.seen).toEqual({ read: THREE_MB.length, cancelled: false });
    expect(await env.FILES.get(`default/${small.id}`)).toBeNull();
  });
});

describe("the file import under faults", () => {
  it("R2 failing the write: 503, no record; the next try imports it", async () => {
    const failing = new Proxy(env.FILES, {
      get(target, property) {
        if (property === "put" || property === "createMultipartUpload")
          return () => Promise.reject(new Error("R2 internal error"));
        const value = Reflect.get(target, property);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const faulty = service({ FILES: failing });
    const bytes = new TextEncoder().encode("bytes R2 refused once");
    const record = await nhostFile("default", bytes);
    const response = await faulty.request("PUT", `/admin/import/nhost/files/${record.id}`, {
      body: bytes,
      headers: { ...admin(), "content-type": "application/octet-stream", "x-import-file": b64url(record) },
    });
    expect(response.status).toBe(503);
    expect(
      await fileD1(record).prepare("SELECT id FROM files WHERE id = ?").bind(record.id).first(),
    ).toBeNull();
    expect(await (await put(record, bytes)).json()).toEqual({ id: record.id, outcome: "imported" });
  });
});
