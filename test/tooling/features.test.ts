// src/runtime/features.ts is THE list of features: the app, the queue handler and the cron read it as code; the lint
// (.dependency-cruiser.cjs) and drizzle-kit (drizzle.config.ts) read its imports as text (scripts/features.cjs). The
// threat is drift: a feature folder the runtime never mounts, tables drizzle-kit never sees (a migration silently not
// generated), a folder the lint does not hold to a feature's rules. Each check reads the files as they are.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import drizzleConfig from "../../drizzle.config";

const ROOT = process.cwd();
const SRC = join(ROOT, "src");
const require = createRequire(import.meta.url);
const { featureFolders, tableFiles } = require("../../scripts/features.cjs") as {
  featureFolders(): string[];
  tableFiles(): string[];
};
const lint = require("../../.dependency-cruiser.cjs") as {
  forbidden: { name: string; from: { path?: string } }[];
};

const read = (...path: string[]) => readFileSync(join(ROOT, ...path), "utf8");
/** The folders of src/, a face (src/faces/<name>/, another product's API) counted as one of its own. */
const folders = readdirSync(SRC, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .flatMap((entry) =>
    entry.name === "faces"
      ? readdirSync(join(SRC, "faces"), { withFileTypes: true })
          .filter((face) => face.isDirectory())
          .map((face) => `faces/${face.name}`)
      : [entry.name],
  )
  .toSorted();
const listed = featureFolders();
const ruleFrom = (name: string) => new RegExp(lint.forbidden.find((rule) => rule.name === name)!.from.path!);

describe("src/runtime/features.ts", () => {
  it("imports each feature's feature.ts once and lists every feature it imports", () => {
    const text = read("src/runtime/features.ts");
    const imported = [
      ...text.matchAll(/^import \{ (\w+) \} from "\.\.\/([a-z0-9-]+(?:\/[a-z0-9-]+)?)\/feature";$/gm),
    ];
    expect(imported.map((match) => match[2])).toEqual(listed);
    const list = text.slice(text.indexOf("export const FEATURES"));
    const entries = [...list.matchAll(/^ {2}(\w+),$/gm)].map((match) => match[1]);
    expect(entries.toSorted()).toEqual(imported.map((match) => match[1]!).toSorted());
    expect(new Set(listed).size).toBe(listed.length);
  });

  it("names every folder of src/ that is not plumbing nor the runtime, and each has a feature.ts of its name", () => {
    const plumbing = ruleFrom("plumbing-imports-no-feature");
    const features = folders.filter((name) => name !== "runtime" && !plumbing.test(`src/${name}/x.ts`));
    expect(features).toEqual(listed.toSorted());
    for (const name of listed) {
      const feature = read("src", name, "feature.ts");
      expect(feature, name).toContain(`name: "${name}",`);
    }
  });

  // Threat: a feature's settings slice that its feature.ts does not declare is never parsed, so its `config.<slice>`
  // is typed (the declaration merging in settings.ts) but undefined at run time.
  it("declares each feature's settings slice (its settings.ts) in its feature.ts, and nothing else does", () => {
    for (const name of listed) {
      const feature = read("src", name, "feature.ts");
      const hasSlice = existsSync(join(SRC, name, "settings.ts"));
      expect(/^ {2}settings: \w+,$/m.test(feature), name).toBe(hasSlice);
      if (hasSlice) {
        expect(feature, name).toMatch(/^import \{ \w+ \} from "\.\/settings";$/m);
        expect(read("src", name, "settings.ts"), name).toMatch(/declare module "(\.\.\/)+config"/);
      }
    }
    const augmenting = folders.filter(
      (name) =>
        existsSync(join(SRC, name, "settings.ts")) &&
        read("src", name, "settings.ts").includes("declare module"),
    );
    expect(augmenting.toSorted()).toEqual(
      listed.filter((name) => existsSync(join(SRC, name, "settings.ts"))).toSorted(),
    );
  });

  it("gives drizzle-kit exactly the features' tables and the plumbing's", () => {
    const declared = listed.filter((name) =>
      read("src", name, "feature.ts").includes(`import * as tables from "../db/tables/${name}";`),
    );
    for (const name of declared) expect(existsSync(join(SRC, "db", "tables", `${name}.ts`)), name).toBe(true);
    const expected = [...declared, "shared"].map((name) => `./src/db/tables/${name}.ts`);
    expect(drizzleConfig.schema).toEqual(expected);
    expect(tableFiles()).toEqual(expected);
    // No file of tables that no feature declares: drizzle-kit would not read it.
    const files = readdirSync(join(SRC, "db", "tables")).map((file) => `./src/db/tables/${file}`);
    expect(files.toSorted()).toEqual(expected.toSorted());
    // The code's one place to import tables from gathers the same files.
    const barrel = [...read("src/db/schema.ts").matchAll(/^export \* from "\.\/tables\/([a-z0-9-]+)";$/gm)];
    expect(barrel.map((match) => `./src/db/tables/${match[1]}.ts`).toSorted()).toEqual(expected.toSorted());
  });

  it("is the lint's list of features", () => {
    const feature = ruleFrom("feature-uses-public-surface");
    const held = folders.filter((name) => feature.test(`src/${name}/x.ts`));
    expect(held).toEqual(listed.toSorted());
    expect(ruleFrom("features-do-not-import-the-runtime").source).toBe(feature.source);
  });
});
