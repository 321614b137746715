import { badRequest } from "../errors";

/**
 * What one transformation may take, set by measurement (docs/decisions.md, "Issue 43: the image Worker's memory
 * budget"). An isolate has 128 MiB, WebAssembly included; WebAssembly memory never shrinks, and an instance dropped
 * is not returned until V8 collects it, which in workerd did not happen within seconds: every codec's instance is
 * kept for the isolate's life, so what each may grow to is the bound (memory-budget.ts). The transformer Worker
 * (worker.ts) holds four, measured in workerd (test/storage/transform-memory.test.ts asserts it in the worst orders):
 *
 * - photon (decodes JPEG, PNG, WebP; resizes; encodes JPEG, PNG): its heap is made `PHOTON_ARENA_BYTES` before the
 *   first image and stays there, because the largest transformation the limits allow fits in it from a fresh
 *   layout (a 1280 × 960 RGBA PNG of 16 bits per channel: 38.2 MiB; the JPEG padded to `MAX_INPUT_BYTES`: 37.8).
 *   It holds 15–25 bytes per input pixel (the source's bytes, the decoded image, the resize's float rows), so its
 *   inputs are capped at `MAX_PHOTON_INPUT_PIXELS` and `MAX_INPUT_BYTES`: at 2 MP and 8 MiB it took 56–68 MiB.
 * - libwebp: 16 MiB at first, 23.1 at 1 MP of opaque output; transparency is encoded so that it stays there
 *   (memory-budget.ts, `MAX_WEBP_ALPHA_PIXELS`; 48 MiB before).
 * - libaom (AVIF): 23.1 MiB at `MAX_AVIF_PIXELS` of output (40 at 1 MP).
 * - libheif: within `HEIF_BUDGET_BYTES` (below). A HEIF photo reaches photon at the output's size (downscale.ts),
 *   so HEIF keeps `MAX_INPUT_PIXELS`.
 *
 * Together: 42.1 + 23.1 + 23.1 + 24 = 112.3 MiB at most, within `WASM_BUDGET_BYTES`, which leaves 14 MiB of the
 * isolate for its JavaScript: the source (at most 4 MiB), one RGBA copy of the output for libwebp or libaom (4 MiB
 * at 1 MP), the encoded output and the bundle's own heap.
 */
export const MAX_INPUT_PIXELS = 2_000_000;
export const MAX_PHOTON_INPUT_PIXELS = 1280 * 960;
export const MAX_INPUT_BYTES = 4 * 1024 * 1024;
export const MAX_OUTPUT_PIXELS = 1_000_000;
export const MAX_AVIF_PIXELS = 500_000;
export const MAX_WEBP_ALPHA_PIXELS = 500_000;
export const PHOTON_ARENA_BYTES = 42 * 1024 * 1024;
export const WASM_BUDGET_BYTES = 114 * 1024 * 1024;

/**
 * HEIC/HEIF (heif.ts). libheif's instance is kept while its memory is within `HEIF_BUDGET_BYTES`, on top of the
 * codecs' above: its initial memory is 16.3 MiB, and what a decode grows it to follows the file's bytes (copied in)
 * and its decoded planes and RGBA. Measured in workerd on noise (the worst case): 2 MP at 8-bit 4:2:0 from a 2.0 MB
 * file 22.2 MiB (3.1 MB: 25.2 MiB), 1 MP at 10-bit 4:4:4 from 2.1 MB 23.4 MiB, 2 MP at 10-bit 4:4:4 40.5 MiB. So a
 * HEIF file may have `MAX_HEIF_INPUT_BYTES`, and as many pixels as `MAX_HEIF_DECODED_BYTES` allows at its bytes per
 * pixel (heif-container.ts): the input limit at 8-bit 4:2:0, what phones write; about half of it at 10-bit 4:4:4.
 * A HEIF photo is made the output's size in libheif's memory (downscale.ts), so photon holds at most the output of
 * one, within its arena (docs/decisions.md, "Issue 43: HEIC/HEIF input to the image transformation" and "Issue 43:
 * image memory after HEIC").
 */
export const MAX_HEIF_INPUT_BYTES = 2 * 1024 * 1024;
export const MAX_HEIF_DECODED_BYTES = MAX_INPUT_PIXELS * 5.5;
/** libheif's memory at those limits (24 MiB measured at most), which the isolate must have left beside the codecs'. */
export const HEIF_BUDGET_BYTES = 24 * 1024 * 1024;

const outOfRange = (what: string) => badRequest(`image manipulation parameters out of range: ${what}`);

/**
 * `size` null: not known yet (a file stored before sizes were recorded); the transformer reads it from the header.
 * `heif`: the file is HEIC/HEIF, whose bytes and pixels have limits of their own (libheif decodes it, not photon).
 */
export function checkInput(
  bytes: number,
  size: { width: number; height: number } | null,
  heif = false,
): void {
  const maxBytes = heif ? MAX_HEIF_INPUT_BYTES : MAX_INPUT_BYTES;
  if (bytes > maxBytes) throw outOfRange(`the image is larger than ${maxBytes} bytes`);
  const maxPixels = heif ? MAX_INPUT_PIXELS : MAX_PHOTON_INPUT_PIXELS;
  if (size && size.width * size.height > maxPixels) {
    throw outOfRange(`the image has more than ${maxPixels} pixels`);
  }
}

export function checkOutput(size: { width: number; height: number }, avif: boolean): void {
  const pixels = size.width * size.height;
  if (pixels > MAX_OUTPUT_PIXELS) {
    throw outOfRange(`the output would have more than ${MAX_OUTPUT_PIXELS} pixels: ask for a smaller w or h`);
  }
  if (avif && pixels > MAX_AVIF_PIXELS) {
    throw outOfRange(`AVIF output is limited to ${MAX_AVIF_PIXELS} pixels: ask for a smaller w or h`);
  }
}

/** A HEIF image's pixels, given what libheif holds for each while decoding it (heif-container.ts). */
export function checkHeifPixels(pixels: number, bytesPerPixel: number): void {
  const allowed = Math.min(MAX_INPUT_PIXELS, Math.floor(MAX_HEIF_DECODED_BYTES / bytesPerPixel));
  if (pixels > allowed) throw outOfRange(`the image has more than ${allowed} pixels`);
}
