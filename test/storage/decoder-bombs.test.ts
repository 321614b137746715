import { env } from "cloudflare:test";
import { PhotonImage } from "@cf-wasm/photon";
import { imageSize } from "image-size";
import { describe, expect, it } from "vitest";
import { MAX_PHOTON_INPUT_PIXELS } from "../../src/storage/images/limits";
import { photonInputSize } from "../../src/storage/images/photon-input";
import { signUp } from "../helpers";
import { jpeg, png, webp } from "./fixtures";
import { expectStorageError, get, svc, uploaded, uploadForm } from "./helpers";

// A frame over the photon input limit (1280 × 960), small enough to make and to decode quickly had it been let in
// (the one the tester found was 8000 × 8000: 256 MB of RGBA from a 44 KB file, twice an isolate).
const [FRAME_W, FRAME_H] = [1300, 1000];
const UNDECODABLE = "the image cannot be decoded";

async function ownImage(bytes: Uint8Array, type: string) {
  const session = await signUp(svc);
  const [file] = await uploaded(uploadForm([{ bytes, type, name: "image" }]), session.accessToken);
  return { id: file!.id, token: session.accessToken };
}

/** GIF's variable-length LZW (GIF89a appendix F) over `pixels`, codes packed least significant bit first. */
function lzw(minCode: number, pixels: Uint8Array): number[] {
  const clear = 1 << minCode;
  const out: number[] = [];
  let [size, next, acc, bits] = [minCode + 1, clear + 2, 0, 0];
  let dictionary = new Map<number, number>();
  const emit = (code: number) => {
    acc |= code << bits;
    bits += size;
    for (; bits >= 8; bits -= 8, acc >>>= 8) out.push(acc & 255);
  };
  emit(clear);
  let prefix = pixels[0]!;
  for (let i = 1; i < pixels.length; i++) {
    const key = prefix * 4096 + pixels[i]!;
    const known = dictionary.get(key);
    if (known !== undefined) {
      prefix = known;
      continue;
    }
    emit(prefix);
    if (next < 4096) {
      dictionary.set(key, next++);
      if (next > 1 << size && size < 12) size++;
    } else {
      emit(clear);
      [dictionary, size, next] = [new Map(), minCode + 1, clear + 2];
    }
    prefix = pixels[i]!;
  }
  emit(prefix);
  emit(clear + 1);
  if (bits > 0) out.push(acc & 255);
  return out;
}

/** A GIF whose logical screen is 10 × 10 around one frame of `width` × `height` (all one colour). */
function gifBomb(width: number, height: number): Uint8Array {
  const header = [..."GIF89a"].map((char) => char.charCodeAt(0));
  const u16 = (value: number) => [value & 255, value >> 8];
  const data = lzw(2, new Uint8Array(width * height));
  const blocks: number[] = [];
  for (let i = 0; i < data.length; i += 255) {
    const block = data.slice(i, i + 255);
    blocks.push(block.length, ...block);
  }
  return Uint8Array.from([
    ...header,
    ...u16(10),
    ...u16(10),
    0x81, // a global colour table of 4 colours
    0,
    0,
    ...[0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255],
    0x2c, // image descriptor
    ...u16(0),
    ...u16(0),
    ...u16(width),
    ...u16(height),
    0,
    2, // LZW minimum code size
    ...blocks,
    0,
    0x3b,
  ]);
}

const ascii = (text: string) => [...text].map((char) => char.charCodeAt(0));
const u24 = (value: number) => [value & 255, (value >> 8) & 255, (value >> 16) & 255];
const u32 = (value: number) => [...u24(value), value >>> 24];
const chunk = (id: string, body: ArrayLike<number>) => [
  ...ascii(id),
  ...u32(body.length),
  ...Array.from(body),
  ...(body.length & 1 ? [0] : []),
];
const riff = (...chunks: number[][]) => {
  const body = [...ascii("WEBP"), ...chunks.flat()];
  return Uint8Array.from([...ascii("RIFF"), ...u32(body.length), ...body]);
};
/** The VP8X chunk (RFC 9649 §2.7): `flags` 0x02 is an animation. */
const vp8x = (flags: number, width: number, height: number) =>
  chunk("VP8X", [flags, 0, 0, 0, ...u24(width - 1), ...u24(height - 1)]);
/** ANMF (RFC 9649 §2.7.1.1): a frame at (0, 0) of `width` × `height`, around `inner` chunks. */
const anmf = (width: number, height: number, inner: number[]) =>
  chunk("ANMF", [...u24(0), ...u24(0), ...u24(width - 1), ...u24(height - 1), ...u24(100), 0, ...inner]);

/** A lossless VP8L bitstream of one colour (photon's own WebP encoder writes only VP8L), as its RIFF chunk. */
function vp8lChunk(width: number, height: number): number[] {
  const image = new PhotonImage(new Uint8Array(width * height * 4).fill(200), width, height);
  try {
    const file = image.get_bytes_webp();
    expect(String.fromCharCode(...file.subarray(12, 16))).toBe("VP8L");
    return Array.from(file.subarray(12));
  } finally {
    image.free();
  }
}

describe("the image transformer's decoder bombs: a small header in front of a large bitstream", () => {
  // Threat: photon's decoder sniffs the format from the bytes, and the limits read the size from a header: a GIF
  // uploaded as image/png whose logical screen is 10 × 10 had its frame decoded whole (8000 × 8000 from 44 KB: the
  // isolate's 128 MiB gone). Nothing but JPEG, PNG and WebP reaches photon, whatever the declared type.
  it("a GIF declared image/png, a 10 × 10 screen around a large frame: 400, nothing decoded", async () => {
    const bomb = gifBomb(FRAME_W, FRAME_H);
    expect(imageSize(bomb)).toMatchObject({ type: "gif", width: 10, height: 10 });
    const file = await ownImage(bomb, "image/png");
    const before = await env.IMAGE_TRANSFORMER!.memory();
    await expectStorageError(await get(file.id, {}, file.token, "?w=5"), 400, UNDECODABLE);
    expect(await env.IMAGE_TRANSFORMER!.memory()).toEqual(before);
  });

  // Threat: the same within a format photon serves. A WebP's VP8X canvas says 10 × 10, its VP8L bitstream is
  // larger: the decoder decoded the whole bitstream before cropping it to the canvas (6000 × 6000 from 16 KB took
  // photon to 317 MiB, measured in Node). Its bitstream must be its canvas' size, as libwebp requires.
  it("a WebP whose canvas is smaller than its bitstream: 400, nothing decoded", async () => {
    const bitstream = vp8lChunk(FRAME_W, FRAME_H);
    const bomb = riff(vp8x(0, 10, 10), bitstream);
    expect(imageSize(bomb)).toMatchObject({ type: "webp", width: 10, height: 10 });
    const file = await ownImage(bomb, "image/webp");
    const before = await env.IMAGE_TRANSFORMER!.memory();
    await expectStorageError(await get(file.id, {}, file.token, "?w=5"), 400, UNDECODABLE);
    expect(await env.IMAGE_TRANSFORMER!.memory()).toEqual(before);

    // The bitstream on its own is the limit's business, with the limit's message.
    const plain = await ownImage(riff(bitstream), "image/webp");
    await expectStorageError(
      await get(plain.id, {}, plain.token, "?w=5"),
      400,
      `image manipulation parameters out of range: the image has more than ${MAX_PHOTON_INPUT_PIXELS} pixels`,
    );
  });

  // Threat: an animation's frame larger than its canvas made photon trap (a panic: the instance's state is lost
  // with it). What reaches photon is read the way it reads it; real files of each format still do.
  it("reads the size photon decodes: animations' frames within their canvas, real files as they are", async () => {
    const frame = vp8lChunk(40, 30);
    expect(
      photonInputSize(riff(vp8x(0x02, 40, 30), chunk("ANIM", [0, 0, 0, 0, 0, 0]), anmf(40, 30, frame))),
    ).toEqual({ width: 40, height: 30 });
    expect(
      photonInputSize(riff(vp8x(0x02, 10, 10), chunk("ANIM", [0, 0, 0, 0, 0, 0]), anmf(40, 30, frame))),
    ).toBeNull();
    // A frame declaring 10 × 10 around a 40 × 30 bitstream.
    expect(
      photonInputSize(riff(vp8x(0x02, 40, 30), chunk("ANIM", [0, 0, 0, 0, 0, 0]), anmf(10, 10, frame))),
    ).toBeNull();
    expect(photonInputSize(riff(vp8x(0, 40, 30), frame))).toEqual({ width: 40, height: 30 });
    expect(photonInputSize(await webp(64, 48))).toEqual({ width: 64, height: 48 });
    expect(photonInputSize(jpeg(64, 48))).toEqual({ width: 64, height: 48 });
    expect(photonInputSize(png(64, 48))).toEqual({ width: 64, height: 48 });
    expect(photonInputSize(gifBomb(4, 4))).toBeNull();
    // BMP: a format photon's decoder knows and the transformer does not serve.
    expect(photonInputSize(Uint8Array.from([...ascii("BM"), ...new Array(60).fill(0)]))).toBeNull();
  });
});

describe("blur of an image 1 pixel across", () => {
  async function decoded(response: Response) {
    expect(response.status).toBe(200);
    const size = imageSize(new Uint8Array(await response.arrayBuffer()));
    return { width: size.width, height: size.height };
  }

  // Threat: photon's gaussian_blur panics on a side under 2 pixels. The trap answered 500, left the image borrowed
  // (its free() threw, so it was never freed) and the instance's shadow stack lowered: ten such requests took the
  // isolate past 128 MiB, and a few thousand leave photon failing every call. A single pixel is its own blur.
  it("w=1&h=1&b=1 answers the 1 × 1 image, every time", async () => {
    const file = await ownImage(jpeg(120, 90), "image/jpeg");
    // A different blur each time: each is a transformation, not the cached variant.
    for (const blur of [1, 2, 3, 5, 8, 13, 21, 34]) {
      expect(await decoded(await get(file.id, {}, file.token, `?w=1&h=1&b=${blur}`))).toEqual({
        width: 1,
        height: 1,
      });
    }
    // And the transformer still blurs what it can.
    expect(await decoded(await get(file.id, {}, file.token, "?w=60&b=2"))).toEqual({ width: 60, height: 45 });
  });

  it("a 1 × N and an N × 1 source with b > 0 answer their own size, unblurred across", async () => {
    const column = await ownImage(png(1, 50), "image/png");
    const row = await ownImage(png(50, 1), "image/png");
    for (const blur of [0.5, 1, 4, 9]) {
      expect(await decoded(await get(column.id, {}, column.token, `?b=${blur}`))).toEqual({
        width: 1,
        height: 50,
      });
      expect(await decoded(await get(row.id, {}, row.token, `?b=${blur}&f=webp`))).toEqual({
        width: 50,
        height: 1,
      });
    }
  });
});
