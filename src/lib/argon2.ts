import scalarModule from "argon2id/dist/no-simd.wasm";
import simdModule from "argon2id/dist/simd.wasm";
import setupWasm, { type Argon2idParams, type computeHash } from "argon2id/lib/setup.js";

/**
 * Argon2id (RFC 9106) from OpenPGP.js's `argon2id`: WASM with SIMD, instantiated from modules the bundler
 * precompiles (Workers refuse to compile WASM at run time). Its SIMD build measured ~1.6× faster than the
 * alternatives in workerd (docs/decisions.md). One instance per isolate, created on first use.
 */

/**
 * The one exception to src/lib/settled.ts: this promise is shared while pending. It involves no I/O (V8 instantiates a
 * precompiled module in the turn that asks for it), so it cannot carry one request's context into another; and each
 * instance reserves 65 MB of WASM memory, so a crowd arriving at a cold isolate must not create one apiece.
 */
let instance: Promise<computeHash> | undefined;

export function argon2id(params: Argon2idParams): Promise<Uint8Array> {
  instance ??= setupWasm(
    async (imports) => ({ instance: await WebAssembly.instantiate(simdModule, imports), module: simdModule }),
    async (imports) => ({
      instance: await WebAssembly.instantiate(scalarModule, imports),
      module: scalarModule,
    }),
  );
  return instance.then((hash) => hash(params));
}
