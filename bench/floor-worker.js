// The platform floor for `npm run bench`: what a Worker with no logic costs on this machine, and what one D1 query
// and one Durable Object call or one Rate Limiting binding call add, what a refresh cannot go below (a DO write, a D1
// read, a signature of each algorithm), what a sign-in cannot go below (one argon2id hash), and what a plain R2 read
// costs. The auth scenarios cannot be faster than the floor of the storage they touch.
import { DurableObject } from "cloudflare:workers";
import setupArgon2 from "./argon2/setup.js";
import argon2Simd from "./argon2/simd.wasm";

export class Probe extends DurableObject {
  ping() {
    return 1;
  }

  /** What a rotation does to its object: one small write. */
  write(value) {
    this.ctx.storage.kv.put("state", value);
    return 1;
  }
}

/** WebCrypto's names for the JWT algorithms the service signs with (src/lib/key-algorithms.ts). */
const ALGORITHMS = {
  RS256: {
    generate: {
      name: "RSASSA-PKCS1-v1_5",
      modulusLength: 2048,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: "SHA-256",
    },
    sign: { name: "RSASSA-PKCS1-v1_5" },
  },
  ES256: { generate: { name: "ECDSA", namedCurve: "P-256" }, sign: { name: "ECDSA", hash: "SHA-256" } },
  EdDSA: { generate: { name: "Ed25519" }, sign: { name: "Ed25519" } },
};
const keyPairs = {};
const keyPairOf = (alg) =>
  (keyPairs[alg] ??= crypto.subtle.generateKey(ALGORITHMS[alg].generate, false, ["sign", "verify"]));
const signingInput = new TextEncoder().encode("eyJhbGciOi.eyJzdWIiOiJ1MSJ9");

async function sign(alg) {
  return crypto.subtle.sign(ALGORITHMS[alg].sign, (await keyPairOf(alg)).privateKey, signingInput);
}

/** The refresh floor: one Durable Object call that writes, one D1 read, one signature (an access token). */
async function refreshFloor(env, alg) {
  const object = env.PROBE.get(env.PROBE.idFromName(`family-${Math.floor(Math.random() * 32)}`));
  await object.write(Date.now());
  await env.DB.prepare("SELECT 1").first();
  await sign(alg);
}

/**
 * CPU per signature and per verification of each algorithm, in this workerd: `n` of each in a loop, timed by the
 * clock (local workerd's clock runs during a request; deployed Workers' does not, so this is a local measure).
 */
async function cryptoCost(n) {
  const costs = {};
  for (const alg of Object.keys(ALGORITHMS)) {
    const { privateKey, publicKey } = await keyPairOf(alg);
    const signature = await sign(alg);
    let start = performance.now();
    for (let i = 0; i < n; i++) await crypto.subtle.sign(ALGORITHMS[alg].sign, privateKey, signingInput);
    const signMs = (performance.now() - start) / n;
    start = performance.now();
    for (let i = 0; i < n; i++)
      await crypto.subtle.verify(ALGORITHMS[alg].sign, publicKey, signature, signingInput);
    costs[alg] = { signMs, verifyMs: (performance.now() - start) / n };
  }
  return costs;
}

/** The sign-in floor: one argon2id hash with the service's parameters (src/lib/password.ts ARGON2_PARAMS). */
let argon2;
async function argon2Floor() {
  argon2 ??= setupArgon2(
    async (imports) => ({ instance: await WebAssembly.instantiate(argon2Simd, imports), module: argon2Simd }),
    () => {
      throw new Error("no SIMD");
    },
  );
  const hash = await argon2;
  hash({
    password: signingInput,
    salt: crypto.getRandomValues(new Uint8Array(16)),
    memorySize: 7_168,
    passes: 5,
    parallelism: 1,
    tagLength: 32,
  });
}

export default {
  async fetch(request, env) {
    const { pathname } = new URL(request.url);
    const alg = new URL(request.url).searchParams.get("alg") ?? "RS256";
    if (pathname === "/d1") await env.DB.prepare("SELECT 1").first();
    else if (pathname === "/refresh-floor") await refreshFloor(env, alg);
    else if (pathname === "/argon2id") await argon2Floor();
    else if (pathname === "/crypto-cost") return Response.json(await cryptoCost(200));
    else if (pathname === "/do") await env.PROBE.get(env.PROBE.idFromName("probe")).ping();
    else if (pathname === "/ratelimit") await env.LIMITER.limit({ key: "ip:127.0.0.1" });
    else if (pathname.startsWith("/r2/")) {
      // A plain R2 read, whole or ranged: the floor of any download.
      const range = request.headers.get("range")?.match(/^bytes=(\d+)-(\d+)$/);
      const object = await env.FILES.get(
        pathname.slice(4),
        range ? { range: { offset: Number(range[1]), length: Number(range[2]) - Number(range[1]) + 1 } } : {},
      );
      return new Response(object.body, { status: range ? 206 : 200 });
    }
    return new Response("ok");
  },
};
