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

const outOfRange = (what: string) => badRequest(`image manipulation parameters out of range: ${what}`);

/** `size` null: not known yet (a file stored before sizes were recorded); the transformer reads it from the header. */
export function checkInput(bytes: number, size: { width: number; height: number } | null): void {
  if (bytes > MAX_INPUT_BYTES) throw outOfRange(`the image is larger than ${MAX_INPUT_BYTES} bytes`);
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
