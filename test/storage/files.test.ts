import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { PART_SIZE } from "../../src/storage/r2-writer";
import { signUp } from "../helpers";
import {
  expectStorageError,
  get,
  md5Etag,
  PNG,
  STORAGE,
  svc,
  upload,
  uploaded,
  uploadForm,
  type WireFile,
} from "./helpers";

describe("uploads", () => {
  it("stores several files with their metadata, the MD5 ETag and the uploader", async () => {
    const { accessToken, user } = await signUp(svc);
    const id = crypto.randomUUID();
    const [first, second] = await uploaded(
      uploadForm([
        {
          bytes: "hello world",
          name: "hello.txt",
          type: "text/plain",
          metadata: { id, name: "greeting.txt", metadata: { a: 1 } },
        },
        { bytes: PNG, name: "pixel.png", type: "image/png", metadata: {} },
      ]),
      accessToken,
    );
    expect(first).toMatchObject({
      id,
      name: "greeting.txt",
      size: 11,
      bucketId: "default",
      mimeType: "text/plain",
      isUploaded: true,
      uploadedByUserId: user.id,
      metadata: { a: 1 },
      etag: await md5Etag(new TextEncoder().encode("hello world")),
    });
    expect(second).toMatchObject({
      name: "pixel.png",
      mimeType: "image/png",
      size: PNG.length,
      metadata: null,
    });
    const object = await env.FILES.get(`default/${id}`);
    expect(await object!.text()).toBe("hello world");
  });

  it("accepts metadata[] as plain fields (Node clients) too, and sniffs an unnamed type from the bytes", async () => {
    const { accessToken } = await signUp(svc);
    const [file] = await uploaded(
      uploadForm(
        [{ bytes: PNG, type: "application/octet-stream", metadata: { name: "sniffed" } }],
        undefined,
        true,
      ),
      accessToken,
    );
    expect(file).toMatchObject({ name: "sniffed", mimeType: "image/png" });
  });

  // 10.5 MB through the multipart parser, MD5 and a three-part R2 upload, then downloaded and compared: ~1 s on a
  // quiet machine. The bytes are compared with Buffer.compare: toEqual walks 10.5 M elements one by one (2.5 s alone).
  it("streams a file larger than one R2 part through a multipart upload, byte for byte", async () => {
    const { accessToken } = await signUp(svc);
    const bytes = new Uint8Array(2 * PART_SIZE + 12_345);
    for (let i = 0; i < bytes.length; i += 65_536) crypto.getRandomValues(bytes.subarray(i, i + 65_536));
    const [file] = await uploaded(
      uploadForm([{ bytes, name: "big.bin", type: "application/x-test" }]),
      accessToken,
    );
    expect(file!.size).toBe(bytes.length);
    expect(file!.etag).toBe(await md5Etag(bytes));
    const response = await get(file!.id, {}, accessToken);
    expect(response.status).toBe(200);
    const downloaded = new Uint8Array(await response.arrayBuffer());
    expect(downloaded.length).toBe(bytes.length);
    expect(Buffer.compare(downloaded, bytes), "the downloaded bytes differ from the uploaded ones").toBe(0);
  }, 20_000);

  it("refuses what it must, with the contract's messages, and lists the files already stored", async () => {
    const { accessToken } = await signUp(svc);
    await expectStorageError(await upload(uploadForm([{ bytes: "x" }])), 403, "you are not authorized");
    await expectStorageError(
      await upload(uploadForm([{ bytes: "x" }], "no-such-bucket"), accessToken),
      404,
      "bucket not found",
    );
    const notMultipart = await svc.request("POST", `${STORAGE}/files`, {
      json: { file: "x" },
      token: accessToken,
    });
    await expectStorageError(notMultipart, 400, "the request must be multipart/form-data");
    await expectStorageError(
      await upload(uploadForm([{ bytes: "x", metadata: { id: "not-a-uuid" } }]), accessToken),
      400,
      "metadata[]: id must be a UUID",
    );

    const now = Date.now();
    await env.DB.prepare(
      `INSERT INTO buckets (id, min_upload_file_size, max_upload_file_size, cache_control, presigned_urls_enabled,
        download_expiration, allowed_mime_types, rules, created_at, updated_at)
       VALUES ('small-images', 2, 100, 'max-age=60', 1, 30, '["image/*"]',
        '{"upload":"authenticated","read":"public","update":"owner","delete":"owner"}', ?, ?)
       ON CONFLICT DO NOTHING`,
    )
      .bind(now, now)
      .run();
    const tooBig = await upload(
      uploadForm(
        [
          { bytes: PNG, type: "image/png" },
          { bytes: new Uint8Array(101), type: "image/png" },
        ],
        "small-images",
      ),
      accessToken,
    );
    expect(tooBig.status).toBe(400);
    const body = (await tooBig.json()) as {
      error: { message: string; data: unknown };
      processedFiles: WireFile[];
    };
    expect(body.error).toEqual({
      message: "file too large: more than 100 bytes",
      data: { maxUploadFileSize: 100 },
    });
    expect(body.processedFiles.map((f) => f.size)).toEqual([PNG.length]);
    await expectStorageError(
      await upload(uploadForm([{ bytes: "plain text", type: "text/plain" }], "small-images"), accessToken),
      400,
      "file type text/plain is not allowed in this bucket",
    );
    await expectStorageError(
      await upload(uploadForm([{ bytes: "x", type: "image/png" }], "small-images"), accessToken),
      400,
      "file too small: fewer than 2 bytes",
    );
  });
});

describe("downloads", () => {
  async function storedText(text = "0123456789", name = "digits.txt", type = "text/plain") {
    const session = await signUp(svc);
    const [file] = await uploaded(uploadForm([{ bytes: text, name, type }]), session.accessToken);
    return { file: file!, token: session.accessToken };
  }

  it("answers the bytes with every header of the contract's table", async () => {
    const { file, token } = await storedText();
    const response = await get(file.id, {}, token);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("0123456789");
    const h = response.headers;
    expect(h.get("accept-ranges")).toBe("bytes");
    // An owner-only file: browsers may keep it, shared caches (a CDN honouring Surrogate-Control) may not.
    expect(h.get("cache-control")).toBe("private, max-age=3600");
    expect(h.get("surrogate-control")).toBe("no-store");
    expect(h.get("surrogate-key")).toBe(file.id);
    expect(h.get("etag")).toBe(file.etag);
    expect(h.get("last-modified")).toMatch(/GMT$/);
    expect(h.get("content-type")).toBe("text/plain");
    expect(h.get("content-disposition")).toBe('inline; filename="digits.txt"');
    expect(h.get("content-length")).toBe("10");
    expect(h.get("date")).toMatch(/GMT$/);
    expect(h.get("x-content-type-options")).toBe("nosniff");

    const head = await svc.request("HEAD", `${STORAGE}/files/${file.id}`, { token });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe("10");
    expect(await head.text()).toBe("");
  });

  it("only the owner (or the admin) reads a file of the default bucket; others get 404", async () => {
    const { file, token } = await storedText();
    const stranger = await signUp(svc);
    await expectStorageError(await get(file.id, {}, stranger.accessToken), 404, "file not found");
    await expectStorageError(await get(file.id), 404, "file not found");
    await expectStorageError(await get(crypto.randomUUID(), {}, token), 404, "file not found");
    const admin = await get(file.id, { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) });
    expect(admin.status).toBe(200);
    const head = await svc.request("HEAD", `${STORAGE}/files/${file.id}`, { token: stranger.accessToken });
    expect(head.status).toBe(404);
    expect(head.headers.get("x-error")).toBe("file not found");
  });

  it("evaluates conditions before reading the bytes: 304 and 412 with their headers", async () => {
    const { file, token } = await storedText();
    const notModified = await get(file.id, { "if-none-match": file.etag }, token);
    expect(notModified.status).toBe(304);
    expect(notModified.headers.get("etag")).toBe(file.etag);
    expect(notModified.headers.get("cache-control")).toBe("private, max-age=3600");
    expect(notModified.headers.get("content-type")).toBeNull();
    const failed = await get(file.id, { "if-match": '"other"' }, token);
    expect(failed.status).toBe(412);
    expect(failed.headers.get("content-length")).toBe("0");
    expect(failed.headers.get("etag")).toBe(file.etag);
    const future = new Date(Date.now() + 86_400_000).toUTCString();
    expect((await get(file.id, { "if-modified-since": future }, token)).status).toBe(304);
    expect(
      (await get(file.id, { "if-none-match": '"other"', "if-modified-since": future }, token)).status,
    ).toBe(200);
  });

  it("reads ranges from R2: 206, suffix ranges, 416 with the size, If-Range", async () => {
    const { file, token } = await storedText();
    const partial = await get(file.id, { range: "bytes=2-5" }, token);
    expect(partial.status).toBe(206);
    expect(partial.headers.get("content-range")).toBe("bytes 2-5/10");
    expect(partial.headers.get("content-length")).toBe("4");
    expect(await partial.text()).toBe("2345");
    expect(await (await get(file.id, { range: "bytes=-3" }, token)).text()).toBe("789");
    const whole = await get(file.id, { range: "bytes=0-" }, token);
    expect(whole.status).toBe(200);
    const unsatisfiable = await get(file.id, { range: "bytes=10-" }, token);
    await expectStorageError(unsatisfiable, 416, "range not satisfiable");
    expect(unsatisfiable.headers.get("content-range")).toBe("bytes */10");
    expect((await get(file.id, { range: "bytes=0-1", "if-range": '"stale"' }, token)).status).toBe(200);
    expect((await get(file.id, { range: "bytes=0-1", "if-range": file.etag }, token)).status).toBe(206);
  });

  it("names files safely, offers attachments, and sandboxes active content", async () => {
    const { file, token } = await storedText("<script>x</script>", 'Ünïcode "name".html', "text/html");
    const response = await get(file.id, {}, token);
    expect(response.headers.get("content-disposition")).toBe(
      `inline; filename="_n_code _name_.html"; filename*=UTF-8''${encodeURIComponent('Ünïcode "name".html')}`,
    );
    expect(response.headers.get("content-security-policy")).toBe("default-src 'none'; sandbox");
    const attachment = await get(file.id, {}, token, "?download=true");
    expect(attachment.headers.get("content-disposition")).toMatch(/^attachment; /);
  });

  it("refuses image parameters on other types with the contract's message", async () => {
    const { file, token } = await storedText();
    await expectStorageError(
      await get(file.id, {}, token, "?w=100"),
      400,
      "image manipulation features are not supported for 'text/plain'",
    );
  });
});

describe("deletes, version and health", () => {
  it("the owner deletes (204, bytes gone); a stranger gets 403 (a write path), an unknown id 404", async () => {
    const session = await signUp(svc);
    const [file] = await uploaded(uploadForm([{ bytes: "bye" }]), session.accessToken);
    const stranger = await signUp(svc);
    const del = (token?: string) => svc.request("DELETE", `${STORAGE}/files/${file!.id}`, { token });
    await expectStorageError(await del(stranger.accessToken), 403, "you are not authorized");
    expect((await del(session.accessToken)).status).toBe(204);
    await expectStorageError(await del(session.accessToken), 404, "file not found");
    expect(await env.FILES.get(`default/${file!.id}`)).toBeNull();
    await expectStorageError(await get(file!.id, {}, session.accessToken), 404, "file not found");
  });

  it("answers version and health", async () => {
    expect(await (await svc.request("GET", `${STORAGE}/version`)).json()).toEqual({
      buildVersion: expect.stringMatching(/^\d+\.\d+\.\d+$/),
    });
    expect(await (await svc.request("GET", `${STORAGE}/healthz`)).json()).toBe("OK");
  });
});

describe("bad input never reaches a 500", () => {
  it("answers malformed multipart bodies, odd ids and odd methods in the contract's shape", async () => {
    const { accessToken } = await signUp(svc);
    const cases: [string, { headers: Record<string, string>; body: string }][] = [
      ["no boundary", { headers: { "content-type": "multipart/form-data" }, body: "x" }],
      [
        "broken body",
        { headers: { "content-type": "multipart/form-data; boundary=abc" }, body: "--abc\r\nnonsense" },
      ],
      ["empty body", { headers: { "content-type": "multipart/form-data; boundary=abc" }, body: "" }],
      [
        "only a field",
        {
          headers: { "content-type": "multipart/form-data; boundary=abc" },
          body: '--abc\r\nContent-Disposition: form-data; name="bucket-id"\r\n\r\ndefault\r\n--abc--\r\n',
        },
      ],
    ];
    for (const [, init] of cases) {
      const response = await svc.request("POST", `${STORAGE}/files`, {
        headers: init.headers,
        body: init.body,
        token: accessToken,
      });
      expect(response.status).toBe(400);
      expect(response.headers.get("x-error")).toBeTruthy();
    }
    for (const id of ["not-a-uuid", "%E2%82", "x".repeat(500)]) {
      expect((await get(id, {}, accessToken)).status).toBe(404);
    }
  });
});

describe("conditional HEAD", () => {
  it("answers HEAD with the same 304 and 412 as GET, headers only", async () => {
    const session = await signUp(svc);
    const [file] = await uploaded(uploadForm([{ bytes: "head", type: "text/plain" }]), session.accessToken);
    const head = (headers: Record<string, string>) =>
      svc.request("HEAD", `${STORAGE}/files/${file!.id}`, { headers, token: session.accessToken });
    const notModified = await head({ "if-none-match": `W/${file!.etag}` });
    expect(notModified.status).toBe(304);
    expect(notModified.headers.get("etag")).toBe(file!.etag);
    const failed = await head({ "if-match": '"nope"' });
    expect(failed.status).toBe(412);
    expect(await failed.text()).toBe("");
    const ok = await head({ "if-match": file!.etag, range: "bytes=0-1" });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-length")).toBe("4");
  });
});
