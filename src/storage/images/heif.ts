// libheif (with libde265 for HEVC), built for WebAssembly by libheif-js. Its .wasm is precompiled at deploy time
// (wrangler's CompiledWasm rule): Workers cannot compile WebAssembly at run time.

import libheifFactory from "libheif-js/libheif-wasm/libheif.js";
import libheifWasm from "libheif-js/libheif-wasm/libheif.wasm";
import { badRequest, StorageError } from "../errors";
import { heifLayout } from "./heif-container";
import { checkHeifPixels, checkInput, HEIF_BUDGET_BYTES, MAX_INPUT_PIXELS } from "./limits";

/**
 * HEIC/HEIF photos decoded to RGBA. One libheif instance is kept for the next decode while its memory (which never
 * shrinks) is within `HEIF_BUDGET_BYTES`, what the limits let a decode grow it to (limits.ts); one that grew past it
 * (fragmentation over many decodes), or that failed mid-decode, is dropped and the next decode instantiates anew
 * (5–20 ms measured in Node on a busy 2-core machine, beside a decode of 100 ms or more). Kept rather than made per
 * decode: a dropped instance's memory is only returned when V8 collects it, so two decodes in a row could otherwise
 * hold two; the budget counts one.
 */

/**
 * libheif's C API as the build exports it (libheif-wasm/libheif.d.ts): pointers are numbers into `HEAPU8`, and a
 * function returning a `heif_error` by value takes where to write it as its first argument (wasm32's C ABI). The C
 * API rather than the build's JavaScript wrappers: those copy the file once more into WebAssembly memory and the
 * decoded pixels out of it, up to 16 MiB more at the limits.
 */
interface Libheif {
  HEAPU8: Uint8Array;
  _malloc(size: number): number;
  _free(pointer: number): void;
  _heif_get_global_security_limits(): number;
  _heif_context_alloc(): number;
  _heif_context_free(context: number): void;
  _heif_context_read_from_memory_without_copy(
    error: number,
    context: number,
    data: number,
    size: number,
    options: number,
  ): void;
  _heif_context_get_primary_image_handle(error: number, context: number, handle: number): void;
  _heif_image_handle_get_width(handle: number): number;
  _heif_image_handle_get_height(handle: number): number;
  _heif_image_handle_release(handle: number): void;
  _heif_decode_image(
    error: number,
    handle: number,
    image: number,
    colorspace: number,
    chroma: number,
    options: number,
  ): void;
  _heif_image_get_plane_readonly2(image: number, channel: number, stride: number): number;
  _heif_image_get_width(image: number, channel: number): number;
  _heif_image_get_height(image: number, channel: number): number;
  _heif_image_release(image: number): void;
}

/** heif.h's values: heif_colorspace_RGB, heif_chroma_interleaved_RGBA, heif_channel_interleaved. */
const COLORSPACE_RGB = 1;
const CHROMA_INTERLEAVED_RGBA = 11;
const CHANNEL_INTERLEAVED = 10;

/**
 * libheif's own limits, a second line behind the container checks: no image libheif makes (a grid, its tiles) above
 * twice the input limit (a coded HEVC frame is whole blocks: 1600 × 1250 is coded 1600 × 1256, above the limit
 * itself), and at most `MAX_TOTAL_MEMORY` of pixel planes. They bind libheif, not libde265 1.0.15 inside it, which
 * allocates what the stream codes: that is why the sequence parameter sets are read first (heif-container.ts).
 * `heif_security_limits` (heif_security.h, version 4): `max_image_size_pixels` is the uint64 at byte 8 and
 * `max_total_memory` the uint64 at byte 64 on wasm32; written only when the defaults are where that says they are.
 */
const MAX_TOTAL_MEMORY = 48 * 1024 * 1024;
function tightenLimits(heif: Libheif): void {
  const at = heif._heif_get_global_security_limits();
  const view = new DataView(heif.HEAPU8.buffer, at, 72);
  const defaults =
    view.getUint8(0) >= 2 &&
    view.getBigUint64(8, true) === 32768n * 32768n &&
    view.getBigUint64(64, true) === 4n * 1024n ** 3n;
  if (!defaults) return;
  view.setBigUint64(8, BigInt(2 * MAX_INPUT_PIXELS), true);
  view.setBigUint64(64, BigInt(MAX_TOTAL_MEMORY), true);
}

let kept: Libheif | undefined;

function instantiate(): Libheif {
  const heif = (libheifFactory as unknown as (options: object) => Libheif)({
    // The precompiled module, instantiated synchronously: the build's own loader would read or fetch the .wasm file.
    instantiateWasm(
      imports: WebAssembly.Imports,
      receive: (instance: WebAssembly.Instance) => WebAssembly.Exports,
    ) {
      return receive(new WebAssembly.Instance(libheifWasm, imports));
    },
    print: () => {},
    printErr: () => {},
  });
  tightenLimits(heif);
  return heif;
}

/**
 * The primary image of a HEIF file as RGBA, handed to `use` while it is still in libheif's memory (`use` may
 * change it in place, and copies it out: photon takes it into its own), transformations (`irot`, `imir`, `clap`)
 * applied as libheif does by default.
 * Files declaring more pixels than the input limit are refused from their boxes before libheif is even instantiated;
 * a file libheif cannot read or decode is a 400 too. Decodes are synchronous: no two share the kept instance.
 */
export function decodeHeif<T>(
  bytes: Uint8Array,
  use: (rgba: Uint8Array, width: number, height: number) => T,
): { result: T; wasmBytes: number } {
  const layout = heifLayout(bytes);
  if (!layout) throw badRequest("the image cannot be read");
  checkInput(bytes.length, layout.primary, true);
  checkHeifPixels(layout.primary.width * layout.primary.height, layout.bytesPerPixel);
  checkHeifPixels(layout.largestPixels, layout.bytesPerPixel);
  // What libde265 will allocate, whatever the `ispe` says. A coded frame is whole blocks (1600 × 1250 is coded
  // 1600 × 1256): 5 % over the declared size is padding.
  checkHeifPixels(Math.floor(layout.largestCodedPixels / 1.05), layout.bytesPerPixel);
  const heif = kept ?? instantiate();
  // Given back only after a decode that went through and released everything it took.
  kept = undefined;
  const cannotDecode = () => badRequest("the image cannot be decoded");
  try {
    // heif_error (code, subcode, message: 12 bytes) and one out-pointer (handle, image, stride), reused.
    const error = heif._malloc(16);
    const out = error + 12;
    const word = (at: number) => new DataView(heif.HEAPU8.buffer).getUint32(at, true);
    const failed = () => word(error) !== 0;
    const data = heif._malloc(bytes.length);
    heif.HEAPU8.set(bytes, data);
    const context = heif._heif_context_alloc();
    heif._heif_context_read_from_memory_without_copy(error, context, data, bytes.length, 0);
    if (failed()) throw cannotDecode();
    heif._heif_context_get_primary_image_handle(error, context, out);
    if (failed()) throw cannotDecode();
    const handle = word(out);
    // libheif's own view of the size, which is what it will allocate: checked again before decoding.
    checkHeifPixels(
      heif._heif_image_handle_get_width(handle) * heif._heif_image_handle_get_height(handle),
      layout.bytesPerPixel,
    );
    heif._heif_decode_image(error, handle, out, COLORSPACE_RGB, CHROMA_INTERLEAVED_RGBA, 0);
    if (failed()) throw cannotDecode();
    const image = word(out);
    const plane = heif._heif_image_get_plane_readonly2(image, CHANNEL_INTERLEAVED, out);
    const width = heif._heif_image_get_width(image, CHANNEL_INTERLEAVED);
    const height = heif._heif_image_get_height(image, CHANNEL_INTERLEAVED);
    if (!plane || width <= 0 || height <= 0) throw cannotDecode();
    const stride = word(out);
    const row = width * 4;
    // Rows padded to a stride are packed in place (each moves down, never over one not yet moved).
    if (stride !== row) {
      for (let y = 1; y < height; y++)
        heif.HEAPU8.copyWithin(plane + y * row, plane + y * stride, plane + y * stride + row);
    }
    // What `use` refuses (an output above the limits) leaves the instance as clean as a decode that went through.
    let result: T;
    try {
      result = use(heif.HEAPU8.subarray(plane, plane + row * height), width, height);
    } finally {
      heif._heif_image_release(image);
      heif._heif_image_handle_release(handle);
      heif._heif_context_free(context);
      heif._free(data);
      heif._free(error);
      if (heif.HEAPU8.byteLength <= HEIF_BUDGET_BYTES) kept = heif;
    }
    return { result, wasmBytes: heif.HEAPU8.byteLength };
  } catch (error) {
    // The instance is dropped with whatever the failed decode left allocated in it.
    if (error instanceof StorageError) throw error;
    // libheif aborts (an Emscripten exception) on what it cannot allocate or parse: the image's fault, not ours.
    throw cannotDecode();
  }
}
