// `npm run lint`'s lockfile check (scripts/check-lockfile.mjs): package-lock.json must keep the platform packages of
// every platform people develop on, or `npm ci` stops on a Mac or on Windows ("Missing: … from lock file").
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "edge-auth-lockfile-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const check = (lockfile: string) =>
  run(process.execPath, ["scripts/check-lockfile.mjs", lockfile]).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );

describe("the lockfile check", () => {
  it("passes the repository's package-lock.json", async () => {
    const passed = await check("package-lock.json");
    expect(passed.stderr).toBe("");
    expect(passed.code).toBe(0);
  });

  it("fails a lockfile that lost one macOS package, naming it as npm ci would", async () => {
    const lock = JSON.parse(readFileSync("package-lock.json", "utf8")) as {
      packages: Record<string, { optionalDependencies?: Record<string, string> }>;
    };
    delete lock.packages["node_modules/@cloudflare/workerd-darwin-arm64"];
    const broken = join(dir, "package-lock.json");
    writeFileSync(broken, JSON.stringify(lock));
    const failed = await check(broken);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(
      /Missing: @cloudflare\/workerd-darwin-arm64@\S+ from lock file \(an optional dependency of node_modules\/workerd\)/,
    );
    // …and one that lost it from its parent's list too: workerd then has nothing for that platform.
    delete lock.packages["node_modules/workerd"]!.optionalDependencies!["@cloudflare/workerd-darwin-arm64"];
    writeFileSync(broken, JSON.stringify(lock));
    const unlisted = await check(broken);
    expect(unlisted.code).toBe(1);
    expect(unlisted.stderr).toContain(
      "node_modules/workerd has no package for darwin arm64 in the lock file",
    );
  });
});
