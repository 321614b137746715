// The closing lines of `.ci/run`, from the two Vitest JSON reports: what failed, by file and test with the first
// lines of each failure, then "N passed, N failed" per run and in all. CI shows only the end of its log, and a
// failure of the workers projects is printed long before it (scripts/test.mjs prints the compatibility files'
// output after theirs): without this, a failed run said "1 failed" and not which. Exits non-zero on a failure, on a
// non-zero status of the runs, or when a run has no tests.
import { existsSync, readFileSync } from "node:fs";
import { relative } from "node:path";
import { stripVTControlCharacters } from "node:util";

const [status, ...files] = process.argv.slice(2);
const runs = [
  ["npm test", files[0]],
  ["hostile smoke", files[1]],
];
/** The first lines of a failure: its message and where it was thrown, not the whole stack. */
const FAILURE_LINES = 6;
const firstLines = (text) =>
  stripVTControlCharacters(String(text ?? ""))
    .split("\n")
    .filter((line) => line.trim() && !/node_modules|node:internal/.test(line))
    .slice(0, FAILURE_LINES)
    .map((line) => `    ${line.trimEnd()}`)
    .join("\n");

let passed = 0;
let failed = 0;
let empty = false;
const lines = [];
for (const [name, file] of runs) {
  const report = file && existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : null;
  const r = report ?? { numTotalTests: 0, numPassedTests: 0, numFailedTests: 0, testResults: [] };
  if (r.numTotalTests === 0) {
    console.error(`no tests ran (${name})`);
    empty = true;
  }
  for (const result of r.testResults ?? []) {
    const path = relative(process.cwd(), result.name);
    const failures = (result.assertionResults ?? []).filter((test) => test.status === "failed");
    for (const test of failures) {
      const seconds = ((test.duration ?? 0) / 1000).toFixed(1);
      lines.push(`FAILED (${name}) ${path} > ${test.fullName ?? test.title} [${seconds} s]`);
      lines.push(firstLines((test.failureMessages ?? []).join("\n")));
    }
    // A file that failed outside its tests (an import, a hook): Vitest reports it on the file alone.
    if (result.status === "failed" && failures.length === 0) {
      lines.push(`FAILED (${name}) ${path}, outside its tests`);
      lines.push(firstLines(result.message));
    }
  }
  passed += r.numPassedTests;
  failed += r.numFailedTests;
  lines.push(`${name}: ${r.numPassedTests} passed, ${r.numFailedTests} failed`);
}
lines.push(`${passed} passed, ${failed} failed`);
console.log(lines.filter(Boolean).join("\n"));
process.exit(Number(status) !== 0 || failed > 0 || empty ? 1 : 0);
