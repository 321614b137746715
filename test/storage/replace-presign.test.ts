import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { signUp } from "../helpers";
import {
  expectStorageError,
  get,
  md5Etag,
  STORAGE,
  svc,
  uploaded,
  uploadForm,
  type WireFile,
} from "./helpers";

async function ownFile(text = "first version") {
  const session = await signUp(svc);
  const [file] = await uploaded(
    uploadForm([{ bytes: text, name: "doc.txt", type: "text/plain" }]),
    session.accessToken,
  );
  return { file: file!, token: session.accessToken };
}

/** A replace body as nhost-js builds it: `metadata` (a JSON Blob) then `file`. */
function replaceForm(bytes: string, metadata?: Record<string, unknown>, type = "text/plain"): FormData {
  const form = new FormData();
  if (metadata)
    form.append("metadata", new Blob([JSON.stringify(metadata)], { type: "application/json" }), "");
  form.append("file", new Blob([bytes], { type }), "new.txt");
  return form;
}

const replace = (id: string, form: FormData, token?: string) =>
  svc.request("PUT", `${STORAGE}/files/${id}`, { body: form, token });

describe("replaceFile", () => {
  it("replaces the bytes, the ETag and optionally the name and metadata; the id stays", async () => {
    const { file, token } = await ownFile();
    const response = await replace(
      file.id,
      replaceForm("second version!", { name: "v2.txt", metadata: { v: 2 } }),
      token,
    );
    expect(response.status).toBe(200);
    const replaced = (await response.json()) as WireFile;
    expect(replaced).toMatchObject({
      id: file.id,
      name: "v2.txt",
      size: 15,
      metadata: { v: 2 },
      etag: await md5Etag(new TextEncoder().encode("second version!")),
    });
    const download = await get(file.id, {}, token);
    expect(await download.text()).toBe("second version!");
    // The old ETag no longer matches: a cache revalidating with it gets the new bytes.
    expect((await get(file.id, { "if-none-match": file.etag }, token)).status).toBe(200);
  });

  it("a refused replacement leaves the old file whole", async () => {
    const { file, token } = await ownFile();
    const now = Date.now();
    await env.DB.prepare("UPDATE buckets SET max_upload_file_size = 20, updated_at = ? WHERE id = 'default'")
      .bind(now)
      .run();
    try {
      const tooBig = await replace(file.id, replaceForm("this is longer than twenty bytes"), token);
      await expectStorageError(tooBig, 400, "file too large: more than 20 bytes");
    } finally {
      await env.DB.prepare("UPDATE buckets SET max_upload_file_size = 50000000 WHERE id = 'default'").run();
    }
    expect(await (await get(file.id, {}, token)).text()).toBe("first version");
    await expectStorageError(await replace(file.id, new FormData(), token), 400, "a file part is required");
  });

  it("only the owner replaces: a stranger gets 403, an unknown id 404", async () => {
    const { file } = await ownFile();
    const stranger = await signUp(svc);
    await expectStorageError(
      await replace(file.id, replaceForm("x"), stranger.accessToken),
      403,
      "you are not authorized",
    );
    await expectStorageError(
      await replace(crypto.randomUUID(), replaceForm("x"), stranger.accessToken),
      404,
      "file not found",
    );
  });
});

describe("presigned URLs", () => {
  async function presigned(file: WireFile, token: string): Promise<{ url: string; expiration: number }> {
    const response = await svc.request("GET", `${STORAGE}/files/${file.id}/presignedurl`, { token });
    expect(response.status).toBe(200);
    return (await response.json()) as { url: string; expiration: number };
  }

  it("carries the nine parameters and fetches the file without Authorization, cacheable for the time left", async () => {
    const { file, token } = await ownFile("presigned bytes");
    const asked = Date.now();
    const { url, expiration } = await presigned(file, token);
    expect(expiration).toBe(30);
    const parsed = new URL(url);
    expect(parsed.pathname).toBe(`/storage/v1/files/${file.id}/presignedurl/contents`);
    expect([...parsed.searchParams.keys()].sort()).toEqual(
      [
        "X-Amz-Algorithm",
        "X-Amz-Checksum-Mode",
        "X-Amz-Credential",
        "X-Amz-Date",
        "X-Amz-Expires",
        "X-Amz-Signature",
        "X-Amz-SignedHeaders",
        "x-id",
      ].sort(),
    );
    const response = await svc.request("GET", url);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("presigned bytes");
    // The time left, whatever this machine's pace: at most the 30 s, less what has passed since the signing (the
    // URL's date is whole seconds, hence the one more).
    const maxAge = Number(/^max-age=(\d+)$/.exec(response.headers.get("cache-control") ?? "")?.[1]);
    expect(maxAge).toBeLessThanOrEqual(30);
    expect(maxAge).toBeGreaterThanOrEqual(30 - Math.ceil((Date.now() - asked) / 1000) - 1);
    const ranged = await svc.request("GET", url, { headers: { range: "bytes=0-8" } });
    expect(ranged.status).toBe(206);
    expect(await ranged.text()).toBe("presigned");
  });

  it("a tampered or missing signature is 403, an expired one 400", async () => {
    const { file, token } = await ownFile();
    const { url } = await presigned(file, token);
    const tampered = new URL(url);
    tampered.searchParams.set("X-Amz-Expires", "604800");
    await expectStorageError(await svc.request("GET", tampered.toString()), 403, "invalid signature");
    const otherFile = url.replace(file.id, crypto.randomUUID());
    await expectStorageError(await svc.request("GET", otherFile), 403, "invalid signature");
    const bare = `${STORAGE}/files/${file.id}/presignedurl/contents`;
    await expectStorageError(await svc.request("GET", bare), 403, "invalid signature");

    // Signed with a date long past: still a valid signature, so the answer is "expired".
    const { presignedUrl } = await import("../../src/storage/presign");
    const { getConfig } = await import("../../src/runtime/config");
    const old = await presignedUrl(getConfig(svc.env), file.id, 30, Date.now() - 3_600_000);
    await expectStorageError(await svc.request("GET", old.url), 400, "signature already expired");
  });

  it("needs read access to issue one, and the bucket's consent", async () => {
    const { file, token } = await ownFile();
    const stranger = await signUp(svc);
    await expectStorageError(
      await svc.request("GET", `${STORAGE}/files/${file.id}/presignedurl`, { token: stranger.accessToken }),
      404,
      "file not found",
    );
    const { url } = await presigned(file, token);
    // Through the admin API, which forgets the bucket's settings in this isolate at once; other isolates follow within
    // the record cache's few seconds (src/storage/record-cache.ts): with several shards a bucket is remembered on
    // its own, so a direct change of D1 would be that other isolate's.
    const presignedUrls = (enabled: boolean) =>
      svc.request("PATCH", `${STORAGE}/buckets/default`, {
        json: { presignedUrlsEnabled: enabled },
        headers: { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) },
      });
    expect((await presignedUrls(false)).status).toBe(200);
    try {
      const message = "presigned URLs are not enabled on the bucket where this file is located in";
      await expectStorageError(
        await svc.request("GET", `${STORAGE}/files/${file.id}/presignedurl`, { token }),
        403,
        message,
      );
      await expectStorageError(await svc.request("GET", url), 403, message);
    } finally {
      expect((await presignedUrls(true)).status).toBe(200);
    }
  });
});
