// The storage API driven by the real @nhost/nhost-js client against `wrangler dev` (local R2 and D1): upload,
// download byte for byte, a range, a 304, a presigned URL, replace, delete, and an image as a 300-px WebP.
import type { FetchError } from "@nhost/nhost-js/fetch";
import { encode as encodePng } from "fast-png";
import { imageSize } from "image-size";
import { describe, expect, it } from "vitest";
import { client, followLink, mailedLink, REDIRECT, uniqueEmail } from "./client";

const PASSWORD = "a long enough password";

async function signedInClient() {
  const nhost = client();
  const email = uniqueEmail("storage");
  await nhost.auth.signUpEmailPassword({ email, password: PASSWORD, options: { redirectTo: REDIRECT } });
  const verified = await followLink(await mailedLink(email));
  await nhost.auth.refreshToken({ refreshToken: verified.searchParams.get("refreshToken")! });
  return nhost;
}

describe("@nhost/nhost-js storage", () => {
  it("uploads, downloads, serves a range, a 304 and a presigned URL, replaces and deletes", async () => {
    const nhost = await signedInClient();
    const bytes = new Uint8Array(300_000).map((_, i) => (i * 7) % 251);
    const uploaded = await nhost.storage.uploadFiles({
      "file[]": [new File([bytes], "data.bin", { type: "application/octet-stream" })],
      "metadata[]": [{ name: "data.bin", metadata: { kind: "test" } }],
    });
    expect(uploaded.status).toBe(201);
    const file = uploaded.body.processedFiles![0]!;
    expect(file).toMatchObject({
      name: "data.bin",
      size: bytes.length,
      bucketId: "default",
      metadata: { kind: "test" },
    });

    const download = await nhost.storage.getFile(file.id);
    expect(new Uint8Array(await download.body.arrayBuffer())).toEqual(bytes);

    const range = await nhost.storage.getFile(file.id, {}, { headers: { Range: "bytes=100-199" } });
    expect(range.status).toBe(206);
    expect(new Uint8Array(await range.body.arrayBuffer())).toEqual(bytes.slice(100, 200));

    // The client treats every status ≥ 300 as an error, 304 included (client.md §3).
    const notModified = await nhost.storage
      .getFile(file.id, {}, { headers: { "If-None-Match": file.etag! } })
      .catch((e: unknown) => e);
    expect((notModified as FetchError).status).toBe(304);

    const { body: presigned } = await nhost.storage.getFilePresignedURL(file.id);
    const viaUrl = await fetch(presigned.url);
    expect(viaUrl.status).toBe(200);
    expect(new Uint8Array(await viaUrl.arrayBuffer())).toEqual(bytes);

    const replaced = await nhost.storage.replaceFile(file.id, {
      file: new File(["replaced"], "data.txt", { type: "text/plain" }),
      metadata: { name: "data.txt" },
    });
    expect(replaced.body).toMatchObject({ id: file.id, name: "data.txt", size: 8, mimeType: "text/plain" });
    expect(await (await nhost.storage.getFile(file.id)).body.text()).toBe("replaced");

    expect((await nhost.storage.deleteFile(file.id)).status).toBe(204);
    const gone = await nhost.storage.getFile(file.id).catch((e: unknown) => e);
    expect((gone as FetchError<{ error: { message: string } }>).status).toBe(404);
    expect((gone as FetchError<{ error: { message: string } }>).body.error.message).toBe("file not found");
  });

  it("serves an uploaded image as a 300-px WebP", async () => {
    const nhost = await signedInClient();
    // A 400 × 300 gradient PNG made here with fast-png.
    const pixels = new Uint8Array(400 * 300 * 3).map((_, i) => (i * 13) % 256);
    const png = encodePng({ width: 400, height: 300, data: pixels, channels: 3, depth: 8 });
    const { body } = await nhost.storage.uploadFiles({
      "file[]": [new File([png], "gradient.png", { type: "image/png" })],
    });
    const image = body.processedFiles![0]!;
    const webp = await nhost.storage.getFile(image.id, { w: 300, f: "webp" });
    expect(webp.headers.get("content-type")).toBe("image/webp");
    const bytes = new Uint8Array(await webp.body.arrayBuffer());
    expect(imageSize(bytes)).toMatchObject({ width: 300, height: 225, type: "webp" });
  });
});
