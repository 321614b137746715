// Wrangler and the Vitest plugin load `.wasm` imports as precompiled modules (Workers refuse runtime compilation).
declare module "*.wasm" {
  const module: WebAssembly.Module;
  export default module;
}

// exifr's "lite" build (orientation and the common tags, no file-system readers) ships its types on the package root.
declare module "exifr/dist/lite.esm.mjs" {
  import exifr from "exifr";
  export default exifr;
}
