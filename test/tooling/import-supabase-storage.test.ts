// The storage reader of `npm run admin -- import-supabase` (scripts/import-supabase/storage.mjs): its pure parts, in
// Node. Where Storage's file backend keeps an object's bytes (src/storage/backend/file.ts and TenantLocation at the
// commit test/fixtures/supabase/SOURCE.md names), the old Storage API as a source of bytes (a local server answering
// as Storage's `GET /object/authenticated/{bucket}/{name}` does), and storage.objects/buckets rows as the wire's
// records. The run against Postgres and the service is tested end to end in test/compat/supabase-import.test.ts.
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  fileBackendSource,
  storageApi,
  supabaseBucketRecord,
  supabaseObjectRecord,
  // @ts-expect-error: plain .mjs without types
} from "../../scripts/import-supabase/storage.mjs";

const VERSION = "5c3a8e4e-2a49-4bb8-9d8c-4f2b2a1f3e10";
const record = (path: string, version: string | null = VERSION, bucketId = "avatars") => ({
  id: "0b0c8f2e-1f5e-4a7a-9c53-0e3f0d1c2b3a",
  bucketId,
  path,
  version,
});

interface Source {
  open(id: string, r: ReturnType<typeof record>): Promise<{ body(): ReadableStream } | null>;
}

async function bytesOf(source: Source, r: ReturnType<typeof record>): Promise<string | null> {
  const opened = await source.open(r.id, r);
  if (!opened) return null;
  return Buffer.from(await new Response(opened.body()).arrayBuffer()).toString();
}

describe("Storage's file backend as --files-dir", () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "supabase-files-"));
    // FILE_STORAGE_BACKEND_PATH/<global bucket>/<tenant>/<bucket>/<name>/<version>, as Storage writes it.
    await mkdir(join(root, "stub", "stub", "avatars", "a b", "cat.png"), { recursive: true });
    await writeFile(join(root, "stub", "stub", "avatars", "a b", "cat.png", VERSION), "versioned");
    // TUS_USE_FILE_VERSION_SEPARATOR: `<name>-$v-<version>` beside its folder.
    await writeFile(join(root, "stub", "stub", "avatars", `dog.png-$v-${VERSION}`), "separated");
    // An object from before versions (Storage 0016): no version, the name is the file.
    await writeFile(join(root, "stub", "stub", "avatars", "old.txt"), "unversioned");
    await writeFile(join(root, "secret.txt"), "outside");
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it("finds an object under the backend's root or its tenant folder, versioned or not", async () => {
    const backend = fileBackendSource(root);
    expect(await bytesOf(backend, record("a b/cat.png"))).toBe("versioned");
    expect(await bytesOf(backend, record("dog.png"))).toBe("separated");
    expect(await bytesOf(backend, record("old.txt", null))).toBe("unversioned");
    expect(await backend.find(null, record("a b/cat.png"))).toEqual({
      path: join(root, "stub", "stub", "avatars", "a b", "cat.png", VERSION),
      size: 9,
    });
    // Given the global bucket's folder (the one holding <tenant>/…) instead, the same objects.
    expect(await bytesOf(fileBackendSource(join(root, "stub")), record("a b/cat.png"))).toBe("versioned");
  });

  it("says an object is missing when its version is not there", async () => {
    const backend = fileBackendSource(root);
    expect(await bytesOf(backend, record("a b/cat.png", "another-version"))).toBeNull();
    expect(await backend.find(null, record("nothing.png"))).toBeNull();
  });

  // Threat: a name in storage.objects written to read a file outside the backend's root.
  it("never reads outside the root, whatever the name or bucket", async () => {
    const backend = fileBackendSource(root);
    for (const r of [
      record("../../../secret.txt", null),
      record("./x/../../secret.txt", null),
      record("/secret.txt", null),
      record("secret.txt", null, ".."),
    ])
      expect(await backend.find(null, r)).toBeNull();
  });
});

describe("the old Storage API as --files-from", () => {
  let server: Server;
  let base: string;
  const seen: { url: string; apikey?: string; authorization?: string }[] = [];
  beforeAll(async () => {
    server = createServer((request, response) => {
      seen.push({
        url: request.url!,
        apikey: request.headers.apikey as string,
        authorization: request.headers.authorization,
      });
      if (request.headers.apikey !== "service-key") {
        response.writeHead(403, { "content-type": "application/json" });
        return response.end('{"statusCode":"403","error":"Unauthorized","message":"invalid signature"}');
      }
      if (request.url === "/storage/v1/object/authenticated/avatars/a%20b/cat.png") {
        response.writeHead(200, { "content-type": "image/png", "content-length": "4" });
        return response.end("meow");
      }
      // Storage answers a missing object with HTTP 400 and its own 404 in the body.
      response.writeHead(400, { "content-type": "application/json" });
      response.end('{"statusCode":"404","error":"not_found","message":"Object not found"}');
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/storage/v1/`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it("reads an object by bucket and name with the service key, and a missing one is missing", async () => {
    const api = storageApi(base, "service-key");
    expect(await bytesOf(api, record("a b/cat.png"))).toBe("meow");
    expect(seen.at(-1)).toEqual({
      url: "/storage/v1/object/authenticated/avatars/a%20b/cat.png",
      apikey: "service-key",
      authorization: "Bearer service-key",
    });
    expect(await bytesOf(api, record("lost.png"))).toBeNull();
  });

  it("stops the run when the key is refused, naming the variable", async () => {
    await expect(bytesOf(storageApi(base, "wrong"), record("a b/cat.png"))).rejects.toMatchObject({
      fatal: true,
      message: expect.stringMatching(/403.*SUPABASE_SERVICE_KEY/s),
    });
  });
});

describe("storage rows as the wire's records", () => {
  const row = {
    id: "0b0c8f2e-1f5e-4a7a-9c53-0e3f0d1c2b3a",
    bucket_id: "avatars",
    name: "pets/cat.png",
    owner: null,
    owner_id: "3f1e0f7a-6a3c-4c7e-8b7e-0a2b4c6d8e0f",
    metadata: { size: 4, mimetype: "image/png", eTag: '"abc"', cacheControl: "max-age=3600" },
    user_metadata: { caption: "cat" },
    version: VERSION,
    created_at: new Date("2026-01-02T03:04:05Z"),
    updated_at: new Date("2026-01-03T03:04:05Z"),
  };

  it("keeps the object's id, its bucket and name as path, the uploader and user_metadata", () => {
    expect(supabaseObjectRecord(row).record).toEqual({
      id: row.id,
      bucketId: "avatars",
      name: "cat.png",
      path: "pets/cat.png",
      size: 4,
      mimeType: "image/png",
      etag: '"abc"',
      isUploaded: true,
      uploadedByUserId: row.owner_id,
      metadata: { caption: "cat" },
      createdAt: "2026-01-02T03:04:05.000Z",
      updatedAt: "2026-01-03T03:04:05.000Z",
      version: VERSION,
    });
  });

  it("takes `owner` (uuid) from Storage before owner_id, and no uploader for a non-user owner", () => {
    const older = { ...row, owner: row.owner_id, owner_id: undefined };
    expect(supabaseObjectRecord(older).record.uploadedByUserId).toBe(row.owner_id);
    expect(supabaseObjectRecord({ ...row, owner_id: "service_role" }).record.uploadedByUserId).toBeNull();
  });

  it("an object without a size is not carried; an archived version is left out", () => {
    expect(supabaseObjectRecord({ ...row, metadata: null })).toEqual({
      reason: expect.stringMatching(/no size/),
    });
    expect(supabaseObjectRecord({ ...row, archived_at: new Date() })).toEqual({
      leftOut: expect.stringMatching(/archived/),
    });
  });

  it("a bucket's public flag, size limit and MIME types go with it; no limit is the service's default", () => {
    const bucket = {
      id: "avatars",
      public: true,
      file_size_limit: "1048576",
      allowed_mime_types: ["image/*"],
      created_at: new Date("2026-01-02T03:04:05Z"),
      updated_at: null,
    };
    expect(supabaseBucketRecord(bucket)).toMatchObject({
      id: "avatars",
      public: true,
      maxUploadFileSize: 1_048_576,
      minUploadFileSize: 0,
      allowedMimeTypes: ["image/*"],
      updatedAt: "2026-01-02T03:04:05.000Z",
    });
    expect(supabaseBucketRecord({ ...bucket, public: false, file_size_limit: null })).toMatchObject({
      public: false,
      maxUploadFileSize: null,
    });
  });
});

describe("the command's storage flags", () => {
  const run = (args: string[], env: Record<string, string> = {}) =>
    new Promise<{ code: number; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ["scripts/admin.mjs", "import-supabase", ...args],
        { env: { ...process.env, SUPABASE_DATABASE_URL: "postgres://u@127.0.0.1:1/db", ...env } },
        (error, _stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stderr }),
      );
    });

  it("refuses the service key as a flag, never repeating it, and --files-from without the variable", async () => {
    const flag = await run([
      "--files-from",
      "https://old.example/storage/v1",
      "--supabase-service-key",
      "sk-123",
    ]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/SUPABASE_SERVICE_KEY/);
    expect(flag.stderr).not.toMatch(/sk-123/);
    const missing = await run(["--files-from", "https://old.example/storage/v1"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--files-from needs SUPABASE_SERVICE_KEY/);
    const both = await run(["--files-dir", tmpdir(), "--files-from", "https://old.example/storage/v1"]);
    expect(both.stderr).toMatch(/--files-dir or --files-from, not both/);
  });
});
