// The image transformer Worker (wrangler.images.toml) as a Miniflare worker for the tests: bundled by wrangler
// exactly as `wrangler deploy -c wrangler.images.toml` bundles it, then bound to the main Worker as
// IMAGE_TRANSFORMER through the service named in wrangler.toml.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export type ImagesWorker = {
  name: string;
  modulesRoot: string;
  modules: { type: "ESModule" | "CompiledWasm"; path: string }[];
  compatibilityDate: string;
  compatibilityFlags: string[];
};

/**
 * Bundled at most once per Vitest process, on first use: Vitest evaluates vitest.config.ts once per project it
 * resolves (three times in `npm test`'s first process, once more in the compatibility files' process, which needs no
 * transformer at all), and each bundle is a wrangler start and an esbuild run, ~2.5 s of CPU. The one bundle is kept
 * on `globalThis`, which every evaluation of the config in the process shares, and removed when the process exits
 * (the bundles of every run were left in the temporary directory before).
 */
const KEY = Symbol.for("edge-auth.test.images-worker");

export function imagesWorker(): ImagesWorker {
  const shared = globalThis as { [KEY]?: ImagesWorker };
  shared[KEY] ??= bundle();
  return shared[KEY];
}

function bundle(): ImagesWorker {
  const outdir = mkdtempSync(join(tmpdir(), "edge-auth-images-"));
  process.on("exit", () => rmSync(outdir, { recursive: true, force: true }));
  execFileSync(
    process.execPath,
    [
      join("node_modules", "wrangler", "bin", "wrangler.js"),
      "deploy",
      "--dry-run",
      "-c",
      "wrangler.images.toml",
      "--outdir",
      outdir,
    ],
    { stdio: "pipe", env: { ...process.env, WRANGLER_SEND_METRICS: "false" } },
  );
  const files = readdirSync(outdir).filter((file) => file.endsWith(".js") || file.endsWith(".wasm"));
  return {
    name: "edge-auth-images",
    modulesRoot: outdir,
    // The entry module first.
    modules: files
      .sort((a) => (a === "worker.js" ? -1 : 1)) // wrangler.images.toml main: src/storage/images/worker.ts
      .map((file) => ({
        type: file.endsWith(".wasm") ? "CompiledWasm" : "ESModule",
        path: join(outdir, file),
      })),
    compatibilityDate: "2026-11-01",
    compatibilityFlags: ["nodejs_compat"],
  };
}
