// The image transformer Worker (wrangler.images.toml) as a Miniflare worker for the tests: bundled by wrangler
// exactly as `wrangler deploy -c wrangler.images.toml` bundles it, then bound to the main Worker as
// IMAGE_TRANSFORMER through the service named in wrangler.toml.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export function imagesWorker(): {
  name: string;
  modulesRoot: string;
  modules: { type: "ESModule" | "CompiledWasm"; path: string }[];
  compatibilityDate: string;
  compatibilityFlags: string[];
} {
  const outdir = mkdtempSync(join(tmpdir(), "edge-auth-images-"));
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
