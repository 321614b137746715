// test/README.md names every test file, so a new suite is described where people look for it.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const TEST = join(process.cwd(), "test");

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith(".test.ts") ? [relative(TEST, path)] : [];
  });
}

describe("test/README.md", () => {
  it("names every test file, and no file that is gone", () => {
    const readme = readFileSync(join(TEST, "README.md"), "utf8");
    const named = [...readme.matchAll(/^\| `([^`]+\.test\.ts)`\s*\|/gm)].map((match) => match[1]!);
    expect(named.toSorted()).toEqual(testFiles(TEST).toSorted());
  });
});
