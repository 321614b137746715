// `npm run bench:import` (issue 44): the CPU time of one sign-in's verification of each imported password hash format
// (src/lib/imported-hashes/), at the costs the other systems use and at the service's bounds (src/lib/hash-bounds.ts).
//
// It bundles src/lib/password.ts with esbuild for Node (the WASM argon2id compiled from the same files the Worker
// bundles) and times the verifier `verifyPassword` (the sign-in's) dispatches to for a stored hash of each format: the
// same JS and WASM the Worker runs, so the same CPU work. WebCrypto (PBKDF2, SHA-256, AES) is Node's OpenSSL here and
// BoringSSL in workerd; PBKDF2 above the Workers runtime's ceiling falls back to JS, so it is measured both ways.
// Each hash is well formed with a random digest, so the password is wrong: every verifier computes in full and
// compares in constant time, so a right password costs the same (test/move-in/imported-hashes.test.ts proves them
// right on hashes made by other implementations). The figure is the median of the runs' process CPU time
// (`process.cpuUsage`, user + system), in milliseconds.
//
//   node bench/import-hashers.mjs [--runs 3]
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { build } from "esbuild";

const { values } = parseArgs({ options: { runs: { type: "string", default: "3" } } });
const RUNS = Number(values.runs);
if (!Number.isInteger(RUNS) || RUNS < 1) throw new Error("--runs takes a whole number ≥ 1");

// workerd has crypto.subtle.timingSafeEqual; Node has it in node:crypto.
const { timingSafeEqual } = await import("node:crypto");
crypto.subtle.timingSafeEqual ??= (a, b) => timingSafeEqual(a, b);

const dir = mkdtempSync(join(tmpdir(), "import-hashers-"));
let passwords;
try {
  const outfile = join(dir, "password.mjs");
  await build({
    stdin: {
      contents: `export { verifyPassword } from "./src/lib/password.ts";
        export { parseImportedHash, verifyImportedHash } from "./src/lib/imported-hashes/index.ts";`,
      resolveDir: resolve("."),
    },
    bundle: true,
    format: "esm",
    platform: "node",
    outfile,
    logLevel: "warning",
    plugins: [
      {
        // The Worker's bundler precompiles WASM into a module; here Node compiles the same file.
        name: "wasm-module",
        setup(on) {
          on.onResolve({ filter: /\.wasm$/ }, (args) => ({
            path: args.path.startsWith(".")
              ? join(args.resolveDir, args.path)
              : resolve("node_modules", args.path),
            namespace: "wasm",
          }));
          on.onLoad({ filter: /.*/, namespace: "wasm" }, (args) => ({
            contents: `import { readFileSync } from "node:fs"; export default new WebAssembly.Module(readFileSync(${JSON.stringify(args.path)}));`,
            loader: "js",
            resolveDir: dir,
          }));
        },
      },
    ],
  });
  passwords = await import(outfile);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const { verifyPassword, parseImportedHash, verifyImportedHash } = passwords;
/**
 * The format's own verification: imported-hashes' verifier, or password.ts's for bcrypt and argon2id. (A sign-in
 * against an imported format also verifies the dummy argon2id beside it, the argon2id row's figure, so a fast format
 * costs no less than an unknown email.)
 */
const verify = async (password, stored) =>
  (await verifyImportedHash(password, stored)) ?? (await verifyPassword(password, stored)).ok;

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const ITOA64 = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const b64 = (n) => randomBytes(n).toString("base64").replace(/=+$/, "");
const ab64 = (n) => b64(n).replace(/\+/g, ".");
const pick = (alphabet, n) => Array.from(randomBytes(n), (b) => alphabet[b % 64]).join("");
const bcryptAt = (cost) => `$2b$${String(cost).padStart(2, "0")}$${pick(`./${B64.slice(0, 62)}`, 53)}`;
const hex = (n) => randomBytes(n).toString("hex");

/** [hasher, what the cost is, the hash in the import's layout]: the stored form is what the import makes of it. */
const CASES = [
  ["bcrypt", "cost 10 (Nhost's, Supabase's)", bcryptAt(10)],
  ["bcrypt", "cost 12 (the bound)", bcryptAt(12)],
  ["bcrypt_sha256", "cost 12 (Django's default)", `bcrypt_sha256$${bcryptAt(12)}`],
  ["argon2id", "m=7168,t=5,p=1 (the service's own)", `$argon2id$v=19$m=7168,t=5,p=1$${b64(16)}$${b64(32)}`],
  ["argon2id", "m=19456,t=2,p=1 (before issue 48)", `$argon2id$v=19$m=19456,t=2,p=1$${b64(16)}$${b64(32)}`],
  ["argon2id", "m=47104,t=4,p=4 (the bound)", `$argon2id$v=19$m=47104,t=4,p=4$${b64(16)}$${b64(32)}`],
  ["argon2i", "m=19456,t=2,p=1", `$argon2i$v=19$m=19456,t=2,p=1$${b64(16)}$${b64(32)}`],
  ["argon2i", "m=47104,t=4,p=4 (the bound)", `$argon2i$v=19$m=47104,t=4,p=4$${b64(16)}$${b64(32)}`],
  ["scrypt", "ln=14,r=8,p=1 (16 MiB)", `$scrypt$ln=14,r=8,p=1$${b64(16)}$${b64(32)}`],
  ["scrypt", "ln=15,r=8,p=1 (32 MiB, the bound)", `$scrypt$ln=15,r=8,p=1$${b64(16)}$${b64(32)}`],
  [
    "scrypt_firebase",
    "memCost 14, rounds 8 (Firebase's usual)",
    [b64(64), b64(16), b64(64), "Bw==", 8, 14].join("$"),
  ],
  ["pbkdf2_sha256", "100,000", `pbkdf2_sha256$100000$${pick(B64.slice(0, 62), 12)}$${b64(32)}=`],
  [
    "pbkdf2_sha256",
    "600,000 (OWASP; Django 4.2)",
    `pbkdf2_sha256$600000$${pick(B64.slice(0, 62), 12)}$${b64(32)}=`,
  ],
  ["pbkdf2_sha256", "1,200,000 (the bound; Django 6.0)", `$pbkdf2-sha256$1200000$${ab64(16)}$${ab64(32)}`],
  ["pbkdf2_sha1", "1,200,000 (the bound)", `$pbkdf2$1200000$${ab64(16)}$${ab64(20)}`],
  [
    "pbkdf2_sha512",
    "210,000 (OWASP for SHA-512)",
    `pbkdf2_sha512$210000$${pick(B64.slice(0, 62), 12)}$${b64(64)}`,
  ],
  ["pbkdf2_sha512", "1,200,000 (the bound)", `$pbkdf2-sha512$1200000$${ab64(16)}$${ab64(64)}`],
  ["sha256_salted", "one SHA-256", `sha256$${hex(8)}$${hex(32)}`],
  ["md5", "one MD5", hex(16)],
  ["phpass", "2^13 rounds (WordPress's $P$B)", `$P$B${pick(ITOA64, 8)}${pick(ITOA64, 22)}`],
  ["phpass", "2^19 rounds (the bound; passlib's default)", `$P$H${pick(ITOA64, 8)}${pick(ITOA64, 22)}`],
];

// The first argon2id call instantiates the WASM module: not part of a verification.
await verifyPassword("warm-up", null);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * The Workers runtime refuses PBKDF2 above a ceiling set by the account's CPU limit (100,000 at the smallest), as
 * workerd does: a NotSupportedError before any work. Node has none; this puts it back for the "capped" column.
 */
const nativeDeriveBits = crypto.subtle.deriveBits.bind(crypto.subtle);
function capPbkdf2(cap) {
  crypto.subtle.deriveBits = async (algorithm, key, length) => {
    if (algorithm.name === "PBKDF2" && algorithm.iterations > cap)
      throw new DOMException(
        `Pbkdf2 failed: iteration counts above ${cap} are not supported`,
        "NotSupportedError",
      );
    return nativeDeriveBits(algorithm, key, length);
  };
}

async function cpuOf(stored) {
  const times = [];
  for (let run = 0; run < RUNS; run++) {
    const start = process.cpuUsage();
    const ok = await verify("a password of the bench", stored);
    const used = process.cpuUsage(start);
    if (ok) throw new Error(`${stored}: verified a password it was not made from`);
    times.push((used.user + used.system) / 1000);
  }
  return median(times).toFixed(1);
}

console.log(
  `One verification of each imported hash format: median CPU of ${RUNS} run(s), Node ${process.version}`,
);
console.log(
  "capped: PBKDF2 where the runtime refuses WebCrypto above 100,000 iterations and the JS derivation does it",
);
console.log("");
console.log(`${"hasher".padEnd(16)}${"cost".padEnd(44)}${"CPU ms".padStart(8)}${"capped".padStart(10)}`);
for (const [hasher, cost, hash] of CASES) {
  const parsed = parseImportedHash(hasher, hash);
  if (!("stored" in parsed)) throw new Error(`${hasher} ${cost}: ${parsed.refused}`);
  const native = await cpuOf(parsed.stored);
  let capped = "";
  if (hasher.startsWith("pbkdf2") && cost !== "100,000") {
    capPbkdf2(100_000);
    capped = await cpuOf(parsed.stored);
    crypto.subtle.deriveBits = nativeDeriveBits;
  }
  console.log(`${hasher.padEnd(16)}${cost.padEnd(44)}${native.padStart(8)}${capped.padStart(10)}`);
}
