// The features of src/runtime/features.ts, THE list, for the tools that read it before any TypeScript runs: the lint
// (.dependency-cruiser.cjs) and drizzle-kit (drizzle.config.ts). They read its imports, one per feature
// (`import { … } from "../<folder>/feature"`); test/tooling/features.test.ts proves the list and its imports agree.
const { existsSync, readFileSync } = require("node:fs");
const { join } = require("node:path");

const ROOT = join(__dirname, "..");

/** The features' folders under src/, in the list's order of imports (alphabetical: biome sorts them). */
function featureFolders() {
  const text = readFileSync(join(ROOT, "src", "runtime", "features.ts"), "utf8");
  return [...text.matchAll(/^import \{ \w+ \} from "\.\.\/([a-z0-9-]+(?:\/[a-z0-9-]+)?)\/feature";$/gm)].map(
    (match) => match[1],
  );
}

/**
 * The files that declare tables, as drizzle-kit reads them: each feature's src/db/tables/<folder>.ts, where it has
 * tables, and the plumbing's own (shared.ts).
 */
function tableFiles() {
  return [...featureFolders(), "shared"]
    .map((name) => `./src/db/tables/${name}.ts`)
    .filter((path) => existsSync(join(ROOT, path)));
}

module.exports = { featureFolders, tableFiles };
