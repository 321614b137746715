// What the bench's better-auth peer is, read from what was built and served, not from what was meant (issue 48: two
// rigs disagreed by up to 2×, and a bundle taking another hasher path would be one cause): its version, how it was
// bundled, its compatibility flags, the password hasher its bundle holds and that hasher's parameters. Printed with
// the results by bench/better-auth.mjs, beside ours.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { experimental_readRawConfig } from "wrangler";
import { EQUAL_SCRYPT } from "./equal-hasher.mjs";

const versionOf = (pkg) =>
  JSON.parse(readFileSync(join("node_modules", pkg, "package.json"), "utf8")).version;

/**
 * The hasher in a bundle of better-auth: `@better-auth/utils/password` exports `password.node.mjs` (node:crypto's
 * scrypt) under the `workerd` and `node` conditions and `password.mjs` (@noble/hashes' scrypt in JavaScript)
 * otherwise. wrangler bundles with the conditions `workerd, worker, browser` (WRANGLER_BUILD_CONDITIONS unset).
 */
export function hasherOfBundle(source) {
  // esbuild marks each module it inlines with its path: which of the two password modules the bundle holds.
  const native = /@better-auth\/utils\/dist\/password\.node\.mjs/.test(source);
  const noble = /@better-auth\/utils\/dist\/password\.mjs/.test(source);
  const configs = [...source.matchAll(/\{\s*N:\s*(\d+),\s*r:\s*(\d+),\s*p:\s*(\d+),\s*dkLen:\s*(\d+)\s*\}/g)]
    .map((match) => match.slice(1).map(Number))
    .filter(([n, r, p]) => !(n === EQUAL_SCRYPT.N && r === EQUAL_SCRYPT.r && p === EQUAL_SCRYPT.p));
  const [N, r, p, dkLen] = configs[0] ?? [];
  return {
    hasher: native
      ? "scrypt in node:crypto (workerd's native BoringSSL, nodejs_compat)"
      : noble
        ? "scrypt in JavaScript (@noble/hashes)"
        : "not found in the bundle",
    N,
    r,
    p,
    dkLen,
  };
}

/** Lines describing the peer bundled into `outdir` from bench/peers/better-auth/wrangler.toml. */
export function describeBetterAuthPeer(outdir) {
  const { rawConfig } = experimental_readRawConfig({
    config: join("bench", "peers", "better-auth", "wrangler.toml"),
  });
  const bundle = readFileSync(join(outdir, "worker.js"), "utf8");
  const { hasher, N, r, p, dkLen } = hasherOfBundle(bundle);
  const memoryMiB = N && r ? (128 * N * r) / 2 ** 20 : Number.NaN;
  return [
    `better-auth ${versionOf("better-auth")} (@better-auth/utils ${versionOf("@better-auth/utils")}), bundled by \`wrangler deploy --dry-run\` (wrangler ${versionOf("wrangler")}, conditions ${process.env.WRANGLER_BUILD_CONDITIONS ?? "workerd,worker,browser"}), compatibility_date ${rawConfig.compatibility_date}, flags ${(rawConfig.compatibility_flags ?? []).join(",") || "none"}, served by Miniflare ${versionOf("miniflare")}`,
    `  its password hasher (its own default): ${hasher}, N=${N} r=${r} p=${p} dkLen=${dkLen} (${memoryMiB} MiB; N·r·p = 2^${Math.log2(N * r * p).toFixed(1)}, below every scrypt row OWASP lists as its minimum, the least of which is N=2^13 r=8 p=10 = 2^19.3)`,
    `  the rows at equal strength: a second instance hashing with the same node:crypto scrypt at N=2^${Math.log2(EQUAL_SCRYPT.N)} r=${EQUAL_SCRYPT.r} p=${EQUAL_SCRYPT.p} (OWASP equal; bench/peers/better-auth/equal-hasher.mjs)`,
  ];
}

/** Our hasher as src/lib/password.ts sets it (the bench's instance hashes at the production cost). */
export function describeOurHasher() {
  const source = readFileSync(join("src", "lib", "password.ts"), "utf8");
  const cost = /ARGON2_PARAMS: Argon2Cost = \{ memorySize: ([\d_]+), passes: (\d+), parallelism: (\d+)/.exec(
    source,
  );
  const [m, t, p] = cost ? cost.slice(1).map((x) => Number(x.replace(/_/g, ""))) : [];
  return `ours: argon2id m=${m} KiB t=${t} p=${p} (OpenPGP.js argon2id, SIMD WASM), one of OWASP's equal argon2id rows`;
}
