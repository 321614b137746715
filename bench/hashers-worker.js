// The Worker of bench/hashers.mjs: each password hasher the service could use, run in workerd as the service runs it.
// `GET /hash?kind=<kind>&n=<n>` hashes n times in a row (the driver reads workerd's CPU before and after);
// `GET /one?kind=<kind>` hashes once (64 of them in flight for the peak memory). Bundled by esbuild with the
// `workerd` condition; the argon2id WASM modules are precompiled modules, as the service's bundle has them.
import { scrypt as nodeScrypt } from "node:crypto";
import { scryptAsync as nobleScrypt } from "@noble/hashes/scrypt.js";
import setupWasm from "argon2id/lib/setup.js";
import scalarModule from "./no-simd.wasm";
import simdModule from "./simd.wasm";

const password = new TextEncoder().encode("a password of the bench");

let argon2;
const openpgpArgon2id = () => {
  argon2 ??= setupWasm(
    async (imports) => ({ instance: await WebAssembly.instantiate(simdModule, imports), module: simdModule }),
    async (imports) => ({
      instance: await WebAssembly.instantiate(scalarModule, imports),
      module: scalarModule,
    }),
  );
  return argon2;
};

/** `scrypt:N:r:p[:dkLen]`, `noble-scrypt:N:r:p[:dkLen]`, `argon2id:m:t`, `hash-wasm:m:t`. */
async function hashOnce(kind) {
  const [name, ...numbers] = kind.split(":");
  const [a, b, c, d] = numbers.map(Number);
  const salt = crypto.getRandomValues(new Uint8Array(16));
  if (name === "scrypt") {
    // maxmem: node's default (32 MiB) refuses N=2^15 r=8 (its 128·N·r is exactly 32 MiB plus the p blocks).
    return new Promise((resolve, reject) =>
      nodeScrypt(
        password,
        salt,
        d || 32,
        { N: a, r: b, p: c, maxmem: 256 * a * b + 1024 * 1024 },
        (e, key) => (e ? reject(e) : resolve(key)),
      ),
    );
  }
  if (name === "noble-scrypt") return nobleScrypt(password, salt, { N: a, r: b, p: c, dkLen: d || 32 });
  if (name === "argon2id") {
    const hash = await openpgpArgon2id();
    return hash({ password, salt, memorySize: a, passes: b, parallelism: 1, tagLength: 32 });
  }
  if (name === "hash-wasm") {
    // hash-wasm compiles its WASM from bytes at run time, which the Workers runtime refuses: the error is the answer.
    const { argon2id } = await import("hash-wasm");
    return argon2id({
      password,
      salt,
      iterations: b,
      memorySize: a,
      parallelism: 1,
      hashLength: 32,
      outputType: "binary",
    });
  }
  throw new Error(`unknown hasher ${kind}`);
}

export default {
  async fetch(request) {
    const url = new URL(request.url);
    const kind = url.searchParams.get("kind") ?? "";
    const n = Number(url.searchParams.get("n") ?? 1);
    try {
      for (let i = 0; i < n; i++) await hashOnce(kind);
      return new Response("ok");
    } catch (error) {
      return new Response(String(error?.message ?? error), { status: 500 });
    }
  },
};
