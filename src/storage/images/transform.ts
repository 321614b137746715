import {
  crop,
  fliph,
  flipv,
  gaussian_blur,
  initPhoton,
  PhotonImage,
  resize,
  rotate,
  SamplingFilter,
} from "@cf-wasm/photon";
// Precompiled at deploy time (wrangler's CompiledWasm rule): Workers cannot compile WebAssembly at run time.
import avifEncoderWasm from "@jsquash/avif/codec/enc/avif_enc.wasm";
import encodeAvif, { init as initAvifEncoder } from "@jsquash/avif/encode";
import webpEncoderWasm from "@jsquash/webp/codec/enc/webp_enc_simd.wasm";
import encodeWebp, { init as initWebpEncoder } from "@jsquash/webp/encode";
import exifr from "exifr/dist/lite.esm.mjs";
import { badRequest } from "../errors";
import { cropInPlace, downscaleInPlace } from "./downscale";
import { fitInside, type Geometry, geometryOf } from "./fit";
import { decodeHeif } from "./heif";
import { isHeif } from "./heif-container";
import { checkInput, checkOutput } from "./limits";
import {
  clampedView,
  oneAtATime,
  type PhotonExports,
  reservePhotonArena,
  webpMemoryOptions,
} from "./memory-budget";
import { DEFAULT_QUALITY, type ImageParams, type OutputFormat } from "./params";
import { photonInputSize } from "./photon-input";

export { fitInside };

/** libaom speed 0 (slowest) – 10: 8 keeps a 300-px image within the resize budget at a small size cost. */
const AVIF_SPEED = 8;

/**
 * The codecs' Emscripten modules, once initialised; their `HEAPU8` is their WebAssembly memory. Shared while pending,
 * like argon2's instance (src/lib/argon2.ts): initialising involves no I/O, and two at once would double the memory.
 */
type CodecModule = { HEAPU8?: Uint8Array };
let webpReady: Promise<CodecModule> | undefined;
let avifReady: Promise<CodecModule> | undefined;

/**
 * Width and height of the bitstream photon will decode, from its header alone, so an oversized image is refused
 * without decoding it. Bytes that are not JPEG, PNG or WebP whatever their declared type (a GIF stored as
 * `image/png`), or whose header is not the size of what would be decoded, are refused as undecodable
 * (photon-input.ts): photon's decoder would otherwise pick their real format and decode past the limits.
 */
function checkLimits(bytes: Uint8Array): void {
  const size = photonInputSize(bytes);
  if (!size) throw badRequest("the image cannot be decoded");
  checkInput(bytes.length, size);
}

/**
 * photon's gaussian_blur panics on an image under 2 pixels on a side (any radius; measured on 0.4.0) and leaves one
 * under 4 unchanged. A panic traps the instance with the image still borrowed: it is never freed, and the instance's
 * shadow stack is left where the trap found it (about 5,000 traps and photon fails every call: measured). So a
 * 1-pixel strip, or a `w=1&h=1` output, comes back unblurred, as a 2- or 3-pixel one already does: a single pixel is
 * its own blur, and across a strip that thin there is nothing to blur.
 */
const BLUR_MIN_SIDE = 2;

function blur(image: PhotonImage, amount: number): void {
  if (Math.min(image.get_width(), image.get_height()) < BLUR_MIN_SIDE) return;
  gaussian_blur(image, Math.max(1, Math.round(amount * 2)));
}

/**
 * Frees an image, unless a call that trapped still holds it (wasm-bindgen then throws "attempted to take ownership
 * of Rust value while it was borrowed"): the trap is what the caller must see, not that. Its memory is lost either
 * way; the instance cannot be replaced (@cf-wasm/photon instantiates once per isolate and keeps it private).
 */
function release(image: PhotonImage, trapped: boolean): void {
  try {
    image.free();
  } catch (error) {
    if (!trapped) throw error;
  }
}

/** EXIF orientation (1–8) applied, so the output is upright whatever the camera wrote (EXIF 2.32, tag 0x0112). */
async function upright(image: PhotonImage, bytes: Uint8Array): Promise<PhotonImage> {
  const orientation = await exifr.orientation(bytes).catch(() => undefined);
  if (!orientation || orientation === 1) return image;
  const turned = (angle: number) => {
    const next = rotate(image, angle);
    image.free();
    return next;
  };
  switch (orientation) {
    case 2:
      fliph(image);
      return image;
    case 3:
      return turned(180);
    case 4:
      flipv(image);
      return image;
    case 5: {
      const next = turned(90);
      fliph(next);
      return next;
    }
    case 6:
      return turned(90);
    case 7: {
      const next = turned(270);
      fliph(next);
      return next;
    }
    case 8:
      return turned(270);
    default:
      return image;
  }
}

/**
 * Lossy WebP from RGBA pixels. photon's own WebP encoder is lossless only (several times the size of a lossy
 * one), so libwebp through jsquash, initialised once per isolate with the precompiled module.
 */
export async function encodeLossyWebp(
  rgba: Uint8Array,
  width: number,
  height: number,
  quality: number,
): Promise<Uint8Array> {
  webpReady ??= initWebpEncoder(webpEncoderWasm) as Promise<CodecModule>;
  await webpReady;
  // jsquash takes a DOM ImageData; these fields are what it reads.
  const pixels = { data: clampedView(rgba), width, height, colorSpace: "srgb" } as Parameters<
    typeof encodeWebp
  >[0];
  return new Uint8Array(await encodeWebp(pixels, { quality, ...webpMemoryOptions(rgba, width * height) }));
}

async function encode(image: PhotonImage, format: OutputFormat, quality: number): Promise<Uint8Array> {
  switch (format) {
    case "jpeg":
      return image.get_bytes_jpeg(quality);
    case "png":
      return image.get_bytes();
    case "webp":
      return encodeLossyWebp(image.get_raw_pixels(), image.get_width(), image.get_height(), quality);
    case "avif": {
      // libavif/libaom through jsquash, single-threaded (Workers have no threads), initialised once per isolate.
      avifReady ??= initAvifEncoder(avifEncoderWasm) as Promise<CodecModule>;
      await avifReady;
      const pixels = {
        data: clampedView(image.get_raw_pixels()),
        width: image.get_width(),
        height: image.get_height(),
        colorSpace: "srgb",
      } as unknown as Parameters<typeof encodeAvif>[0];
      return new Uint8Array(await encodeAvif(pixels, { quality, speed: AVIF_SPEED }));
    }
  }
}

/** libheif's WebAssembly memory after the last HEIF decode (heif.ts: kept for the next one within its budget). */
let lastHeifWasmBytes = 0;

const isWhole = (geometry: Geometry, width: number, height: number) =>
  geometry.region.width === width && geometry.region.height === height;

/**
 * Decoded and upright. HEIF comes out of libheif already turned (its `irot`/`imir` boxes are the orientation that
 * counts; the EXIF orientation a phone also writes describes the same turn and must not be applied twice), is
 * cropped and made the output's size while still in libheif's memory (downscale.ts: photon then never holds more
 * than the output limit of a HEIF photo), and goes into photon as raw pixels; libheif checks its own limits
 * (heif.ts), the others are checked from their header here.
 */
async function decode(bytes: Uint8Array, params: ImageParams, format: OutputFormat): Promise<PhotonImage> {
  const photon = (await initPhoton.ensure()) as unknown as PhotonExports;
  if (isHeif(bytes)) {
    const decoded = decodeHeif(bytes, (rgba, width, height) => {
      const geometry = geometryOf({ width, height }, params);
      const target = { width: geometry.width, height: geometry.height };
      checkOutput(target, format === "avif");
      reservePhotonArena(photon);
      const kept = isWhole(geometry, width, height) ? rgba : cropInPlace(rgba, width, geometry.region);
      return new PhotonImage(downscaleInPlace(kept, geometry.region, target), target.width, target.height);
    });
    lastHeifWasmBytes = decoded.wasmBytes;
    return decoded.result;
  }
  checkLimits(bytes);
  reservePhotonArena(photon);
  let image: PhotonImage;
  try {
    image = PhotonImage.new_from_byteslice(bytes);
  } catch {
    throw badRequest("the image cannot be decoded");
  }
  return upright(image, bytes);
}

/**
 * Decode (JPEG, PNG, WebP, HEIC/HEIF), orient, crop and resize to the fit (fit.ts), blur, encode. CatmullRom
 * resampling: sharper than bilinear, much cheaper than Lanczos3 on large downscales. One at a time per isolate
 * (memory-budget.ts).
 */
export function transformImage(
  bytes: Uint8Array,
  params: ImageParams,
  format: OutputFormat,
): Promise<Uint8Array> {
  return oneAtATime(() => transformNow(bytes, params, format));
}

async function transformNow(
  bytes: Uint8Array,
  params: ImageParams,
  format: OutputFormat,
): Promise<Uint8Array> {
  let image = await decode(bytes, params, format);
  let trapped = false;
  try {
    const geometry = geometryOf({ width: image.get_width(), height: image.get_height() }, params);
    const target = { width: geometry.width, height: geometry.height };
    checkOutput(target, format === "avif");
    if (params.width || params.height) {
      if (!isWhole(geometry, image.get_width(), image.get_height())) {
        // Cropped before it is scaled: the resize then reads only the region. photon's crop holds the image, a copy
        // of it and the region at once, less than the decode and the resize already take (docs/decisions.md,
        // "Issue 43: resize cover and fill": a `cover` peaks where a `contain` of the same image does).
        const { left, top, width, height } = geometry.region;
        const region = crop(image, left, top, left + width, top + height);
        image.free();
        image = region;
      }
      if (target.width !== image.get_width() || target.height !== image.get_height()) {
        const resized = resize(image, target.width, target.height, SamplingFilter.CatmullRom);
        image.free();
        image = resized;
      }
    }
    if (params.blur) blur(image, params.blur);
    return await encode(image, format, params.quality ?? DEFAULT_QUALITY);
  } catch (error) {
    trapped = error instanceof WebAssembly.RuntimeError;
    throw error;
  } finally {
    release(image, trapped);
  }
}

/**
 * Bytes of WebAssembly memory the image codecs hold in this isolate. WebAssembly memory grows and never shrinks, so
 * this is the peak of every transformation so far: what the limits above are measured against (docs/decisions.md).
 * `heif` is libheif's after the last HEIF decode (heif.ts keeps its instance while that is within its budget).
 */
export async function codecMemoryBytes(): Promise<{
  photon: number;
  webp: number;
  avif: number;
  heif: number;
}> {
  const photon = (await initPhoton.ensure()) as unknown as { memory: WebAssembly.Memory };
  const heap = async (ready: Promise<CodecModule> | undefined) => (await ready)?.HEAPU8?.byteLength ?? 0;
  return {
    photon: photon.memory.buffer.byteLength,
    webp: await heap(webpReady),
    avif: await heap(avifReady),
    heif: lastHeifWasmBytes,
  };
}
