// Wrangler and the Vitest plugin load `.wasm` imports as precompiled modules (Workers refuse runtime compilation).
declare module "*.wasm" {
  const module: WebAssembly.Module;
  export default module;
}
