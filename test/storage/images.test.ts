import { env } from "cloudflare:test";
import { fileTypeFromBuffer } from "file-type";
import { imageSize } from "image-size";
import { describe, expect, it } from "vitest";
import { signUp } from "../helpers";
import { jpeg, png } from "./fixtures";
import { expectStorageError, get, STORAGE, svc, uploaded, uploadForm, type WireFile } from "./helpers";

async function ownImage(bytes: Uint8Array, type: string, name = "photo.jpg") {
  const session = await signUp(svc);
  const [file] = await uploaded(uploadForm([{ bytes, name, type }]), session.accessToken);
  return { file: file!, token: session.accessToken };
}

async function decoded(response: Response) {
  const bytes = new Uint8Array(await response.arrayBuffer());
  const size = imageSize(bytes);
  return { width: size.width, height: size.height, mime: (await fileTypeFromBuffer(bytes))?.mime, bytes };
}

describe("image transformation over HTTP", () => {
  it("resizes to fit, with its own ETag, and serves the cached variant the second time", async () => {
    const { file, token } = await ownImage(jpeg(400, 300), "image/jpeg");
    const first = await get(file.id, {}, token, "?w=100");
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toBe("image/jpeg");
    const etag = first.headers.get("etag")!;
    expect(etag).not.toBe(file.etag);
    expect(first.headers.get("accept-ranges")).toBeNull();
    const image = await decoded(first);
    expect(image).toMatchObject({ width: 100, height: 75, mime: "image/jpeg" });
    expect(first.headers.get("content-length")).toBe(String(image.bytes.length));

    const cached = await env.FILES.list({ prefix: `_variants/${file.id}/` });
    expect(cached.objects).toHaveLength(1);
    const second = await get(file.id, {}, token, "?w=100");
    expect(second.headers.get("etag")).toBe(etag);
    expect(new Uint8Array(await second.arrayBuffer())).toEqual(image.bytes);
    // Conditions are checked against the variant's ETag, before anything is decoded.
    expect((await get(file.id, { "if-none-match": etag }, token, "?w=100")).status).toBe(304);
    expect((await get(file.id, { "if-none-match": file.etag }, token, "?w=100")).status).toBe(200);
  });

  it("encodes to the asked format and quality; f=auto negotiates from Accept with q-values", async () => {
    const { file, token } = await ownImage(png(300, 200), "image/png", "pic.png");
    expect(await decoded(await get(file.id, {}, token, "?f=webp&w=150"))).toMatchObject({
      width: 150,
      height: 100,
      mime: "image/webp",
    });
    expect((await decoded(await get(file.id, {}, token, "?f=jpeg"))).mime).toBe("image/jpeg");
    const small = await decoded(await get(file.id, {}, token, "?f=webp&q=10"));
    const large = await decoded(await get(file.id, {}, token, "?f=webp&q=95"));
    expect(small.bytes.length).toBeLessThan(large.bytes.length);

    const auto = (accept: string) => get(file.id, { accept }, token, "?f=auto&w=50");
    const avif = await auto("image/avif,image/webp;q=0.9,*/*;q=0.5");
    expect(avif.headers.get("content-type")).toBe("image/avif");
    expect(avif.headers.get("vary")).toMatch(/\bAccept\b/);
    expect((await decoded(avif)).mime).toBe("image/avif");
    expect((await auto("image/avif;q=0, image/webp")).headers.get("content-type")).toBe("image/webp");
    expect((await auto("image/png,image/*;q=0.8")).headers.get("content-type")).toBe("image/avif");
    expect((await auto("image/webp;q=0, image/png")).headers.get("content-type")).toBe("image/png");
    expect((await auto("text/html")).headers.get("content-type")).toBe("image/png");
  });

  it("applies to presigned URLs too (parameters appended, not signed), and ignores ranges", async () => {
    const { file, token } = await ownImage(jpeg(400, 300), "image/jpeg");
    const { url } = (await (
      await svc.request("GET", `${STORAGE}/files/${file.id}/presignedurl`, { token })
    ).json()) as {
      url: string;
    };
    expect(await decoded(await svc.request("GET", `${url}&w=40`))).toMatchObject({ width: 40, height: 30 });
    const ranged = await get(file.id, { range: "bytes=0-9" }, token, "?w=40");
    expect(ranged.status).toBe(200);
  });

  it("encodes AVIF; refuses parameters out of range and oversized images with 400", async () => {
    const { file, token } = await ownImage(jpeg(64, 48), "image/jpeg");
    for (const query of ["?w=0", "?w=9000", "?h=abc", "?q=101", "?b=-1", "?b=251", "?f=gif"]) {
      const response = await get(file.id, {}, token, query);
      expect(response.status).toBe(400);
      expect(response.headers.get("x-error")).toMatch(/^image manipulation parameters out of range: /);
    }
    expect(await decoded(await get(file.id, {}, token, "?f=avif&w=32"))).toMatchObject({
      width: 32,
      height: 24,
      mime: "image/avif",
    });
    // A PNG whose header claims 10000 × 10000 pixels: refused from the header, nothing decoded.
    const huge = png(8, 8);
    new DataView(huge.buffer, huge.byteOffset).setUint32(16, 10_000);
    new DataView(huge.buffer, huge.byteOffset).setUint32(20, 10_000);
    const { file: bomb, token: owner } = await ownImage(huge, "image/png", "bomb.png");
    await expectStorageError(
      await get(bomb.id, {}, owner, "?w=10"),
      400,
      "image manipulation parameters out of range: the image has more than 1228800 pixels",
    );
  });

  it("deleting or replacing a file removes its cached variants", async () => {
    const { file, token } = await ownImage(jpeg(100, 100), "image/jpeg");
    await get(file.id, {}, token, "?w=10");
    expect((await env.FILES.list({ prefix: `_variants/${file.id}/` })).objects).toHaveLength(1);
    const form = new FormData();
    form.append("file", new Blob([jpeg(50, 50)], { type: "image/jpeg" }), "new.jpg");
    const replaced = (await (
      await svc.request("PUT", `${STORAGE}/files/${file.id}`, { body: form, token })
    ).json()) as WireFile;
    expect(replaced.size).toBeGreaterThan(0);
    expect((await env.FILES.list({ prefix: `_variants/${file.id}/` })).objects).toHaveLength(0);
    expect(await decoded(await get(file.id, {}, token, "?w=10"))).toMatchObject({ width: 10, height: 10 });
    expect((await svc.request("DELETE", `${STORAGE}/files/${file.id}`, { token })).status).toBe(204);
    expect((await env.FILES.list({ prefix: `_variants/${file.id}/` })).objects).toHaveLength(0);
  });
});
