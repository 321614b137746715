import { badRequest } from "../errors";

/**
 * What one transformation may take, set by measurement (docs/decisions.md, "Image transformation memory"). An
 * isolate has 128 MiB, WebAssembly included, and WebAssembly memory never shrinks: every codec keeps the peak of
 * every image it ever handled. Measured in workerd (test/storage/transform-memory.test.ts reads it): photon holds
 * 15–25 bytes per input pixel after a decode and resize (a 3 MP gradient JPEG: 45 MiB; 12 MP: 162 MiB; a 2 MP
 * noise PNG: 51 MiB), libwebp 16 MiB at first and 23 MiB at 1 MP of output, libaom (AVIF) 23 MiB at 0.5 MP and
 * 40 MiB at 1 MP. Transformations run in their own Worker (src/storage/images/worker.ts), away from argon2id's 65 MiB, and
 * these caps keep photon + libwebp + libaom under `CODEC_BUDGET_BYTES` (97 MiB measured at the caps), which leaves
 * 28 MiB of the isolate for the source bytes (at most `MAX_INPUT_BYTES`) and the transformer's JavaScript.
 */
export const MAX_INPUT_PIXELS = 2_000_000;
export const MAX_INPUT_BYTES = 8 * 1024 * 1024;
export const MAX_OUTPUT_PIXELS = 1_000_000;
export const MAX_AVIF_PIXELS = 500_000;
export const CODEC_BUDGET_BYTES = 100 * 1024 * 1024;

/**
 * HEIC/HEIF (heif.ts). libheif's instance is kept while its memory is within `HEIF_BUDGET_BYTES`, on top of the
 * codecs' above: its initial memory is 16.3 MiB, and what a decode grows it to follows the file's bytes (copied in)
 * and its decoded planes and RGBA. Measured in workerd on noise (the worst case): 2 MP at 8-bit 4:2:0 from a 2.0 MB
 * file 22.2 MiB (3.1 MB: 25.2 MiB), 1 MP at 10-bit 4:4:4 from 2.1 MB 23.4 MiB, 2 MP at 10-bit 4:4:4 40.5 MiB. So a
 * HEIF file may have `MAX_HEIF_INPUT_BYTES`, and as many pixels as `MAX_HEIF_DECODED_BYTES` allows at its bytes per
 * pixel (heif-container.ts): the input limit at 8-bit 4:2:0, what phones write; about half of it at 10-bit 4:4:4.
 * A HEIF photo is made the output's size in libheif's memory (downscale.ts), so photon holds at most the output of
 * one (12.6 MiB measured), and a HEIC coming first no longer moves photon's peak: resized in photon, a HEIC at
 * the input limit first left its heap so that the largest JPEG and PNG took it to 63.2 MiB, all four codecs to
 * 125.7 MiB. Now, in every order measured (HEIC first, last, between; noise HEIC of 2.0 MB), all four codecs
 * peak at 119.4–120.1 MiB (photon 51.2–51.8, libwebp 23.1, libaom 23.1, libheif 22.0): within
 * `CODEC_BUDGET_BYTES + HEIF_BUDGET_BYTES` (124 MiB), which with 2 MiB of HEIF source is 2 MiB under the isolate's
 * 128 (docs/decisions.md, "Issue 43: HEIC/HEIF input to the image transformation" and "Issue 43: image memory
 * after HEIC"; test/storage/transform-memory.test.ts asserts it in the worst order).
 */
export const MAX_HEIF_INPUT_BYTES = 2 * 1024 * 1024;
export const MAX_HEIF_DECODED_BYTES = MAX_INPUT_PIXELS * 5.5;
/** libheif's memory at those limits (24 MiB measured at most), which the isolate must have left beside the codecs'. */
export const HEIF_BUDGET_BYTES = 24 * 1024 * 1024;

const outOfRange = (what: string) => badRequest(`image manipulation parameters out of range: ${what}`);

/**
 * `size` null: not known yet (a file stored before sizes were recorded); the transformer reads it from the header.
 * `heif`: the file is HEIC/HEIF, whose bytes have a limit of their own.
 */
export function checkInput(
  bytes: number,
  size: { width: number; height: number } | null,
  heif = false,
): void {
  const maxBytes = heif ? MAX_HEIF_INPUT_BYTES : MAX_INPUT_BYTES;
  if (bytes > maxBytes) throw outOfRange(`the image is larger than ${maxBytes} bytes`);
  if (size && size.width * size.height > MAX_INPUT_PIXELS) {
    throw outOfRange(`the image has more than ${MAX_INPUT_PIXELS} pixels`);
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
