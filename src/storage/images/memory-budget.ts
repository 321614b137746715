import { MAX_WEBP_ALPHA_PIXELS, PHOTON_ARENA_BYTES } from "./limits";

/**
 * How the transformer keeps its isolate within `WASM_BUDGET_BYTES` (limits.ts; docs/decisions.md, "Issue 43: the
 * image Worker's memory budget"). Every codec's WebAssembly memory only grows, and a dropped instance is not
 * reclaimed until V8 runs a full collection, which in workerd did not come within 3 s and 232 MB of allocations
 * (measured): so instances are kept for the isolate's life, and what bounds the isolate is what each may grow to.
 */

let queue: Promise<unknown> = Promise.resolve();

/**
 * One transformation at a time in this isolate. A Worker isolate serves concurrent requests, and a transformation
 * awaits between its decode and its encode (the EXIF read, a codec's first initialisation): two interleaved would
 * hold two decoded images in photon at once, and its memory would keep the sum. The work is all CPU on one thread,
 * so waiting costs no throughput.
 */
export function oneAtATime<T>(work: () => Promise<T>): Promise<T> {
  const run = queue.then(work);
  queue = run.then(
    () => {},
    () => {},
  );
  return run;
}

/** The part of photon's exports this reads: its memory and the allocator wasm-bindgen exposes. */
export interface PhotonExports {
  memory: WebAssembly.Memory;
  __wbindgen_malloc(size: number, align: number): number;
  __wbindgen_free(pointer: number, size: number, align: number): void;
}

/**
 * photon's heap made `PHOTON_ARENA_BYTES` before its first image, as one free block. Its allocator (Rust's
 * dlmalloc) grows the memory by a whole large allocation when the free space is not in one piece: a 2 MP PNG of
 * 76 KB and then an 8 MiB JPEG, each 47 and 56 MiB on their own, took it to 68 MiB. With every image freed after
 * each transformation (transform.ts), the heap is that one block again, each transformation is laid out in it as
 * in a fresh instance, and the limits keep the largest fresh one within it: photon stays at the arena in every
 * order measured. Reserved once per instance; the first call grows the memory, later ones find it large enough.
 */
export function reservePhotonArena(photon: PhotonExports): void {
  const held = photon.memory.buffer.byteLength;
  if (held >= PHOTON_ARENA_BYTES) return;
  const size = PHOTON_ARENA_BYTES - held;
  photon.__wbindgen_free(photon.__wbindgen_malloc(size, 1), size, 1);
}

/**
 * libwebp's options for these pixels, so that its memory stays where an opaque image leaves it (23.1 MiB at the
 * output limit, from 16 at first). An image with transparency has its alpha plane compressed losslessly besides,
 * which at jsquash's default effort (`method` 4) took libwebp to 48 MiB for a 1 MP noisy alpha. At `method` 0 an
 * alpha of up to `MAX_WEBP_ALPHA_PIXELS` stays within the opaque case (measured); above it, the alpha plane is
 * stored as it is (`alpha_compression` 0: about a byte per pixel more in the file) rather than compressed.
 */
export function webpMemoryOptions(
  rgba: Uint8Array,
  pixels: number,
): { method?: number; alpha_compression?: number } {
  let opaque = true;
  for (let i = 3; i < rgba.length && opaque; i += 4) opaque = rgba[i] === 255;
  if (opaque) return {};
  return pixels <= MAX_WEBP_ALPHA_PIXELS ? { method: 0 } : { method: 0, alpha_compression: 0 };
}

/** The pixels as jsquash takes them: a view of the same bytes, not a second copy in the isolate's memory. */
export const clampedView = (rgba: Uint8Array) =>
  new Uint8ClampedArray(rgba.buffer, rgba.byteOffset, rgba.byteLength);
