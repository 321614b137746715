// How `npm run deploy` calls wrangler, and reads what its commands print. The executable is the project's own
// wrangler unless `--wrangler <path>` or EDGE_AUTH_WRANGLER names another: the tests point it at a recorded wrangler
// (test/tooling/fake-wrangler.mjs) so that a deploy is proved without network. A path ending in .js/.mjs/.cjs is run
// with this Node; anything else is executed as it is.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";

export const DEFAULT_WRANGLER = join(
  import.meta.dirname,
  "..",
  "..",
  "node_modules",
  "wrangler",
  "bin",
  "wrangler.js",
);

/** A function running `wrangler <args>`: output captured (`capture`) or shown to the operator. */
export function wranglerRunner(path = process.env.EDGE_AUTH_WRANGLER || DEFAULT_WRANGLER) {
  const viaNode = /\.[cm]?js$/.test(path);
  return (args, { capture = false } = {}) => {
    const done = spawnSync(viaNode ? process.execPath : path, viaNode ? [path, ...args] : args, {
      encoding: "utf8",
      stdio: capture ? "pipe" : "inherit",
      env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
      maxBuffer: 1 << 26,
    });
    return { status: done.status ?? 1, stdout: done.stdout ?? "", stderr: done.stderr ?? "" };
  };
}

/** The JSON a `--json` (or always-JSON) list command printed; wrangler may print a banner line before it. */
export function parseJsonOutput(stdout) {
  const start = stdout.search(/^\s*[[{]/m);
  if (start < 0) throw new Error("no JSON in wrangler's output");
  return JSON.parse(stdout.slice(start));
}

/** The rows of a table `logger.table` printed (cli-table3's box drawing): one object per row, by the head's names. */
export function parseTable(stdout) {
  const rows = stdout
    .split("\n")
    .filter((line) => line.startsWith("│"))
    .map((line) =>
      line
        .slice(1, -1)
        .split("│")
        .map((cell) => cell.trim()),
    );
  const [head, ...body] = rows;
  if (!head) return [];
  return body.map((cells) => Object.fromEntries(head.map((name, i) => [name, cells[i] ?? ""])));
}

/** `name: value` blocks, as `r2 bucket list` prints them. */
export function parseLabelled(stdout, label) {
  const pattern = new RegExp(`^${label}:\\s+(\\S+)\\s*$`, "gm");
  return [...stripVTControlCharacters(stdout).matchAll(pattern)].map((match) => match[1]);
}

/** The value of `key` in the configuration snippet a create command printed (TOML `key = "v"` or JSON `"key": "v"`). */
export function snippetValue(stdout, key) {
  // Anchored so that `id` never matches inside `database_id`.
  return new RegExp(`(?:^|[\\s{,"])${key}"?\\s*[=:]\\s*"([^"]+)"`, "m").exec(stdout)?.[1] ?? null;
}
