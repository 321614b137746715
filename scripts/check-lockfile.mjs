// `npm run lint` (last step): package-lock.json must install on every platform people develop on, not only on the
// machine that last wrote it. npm writes the platform packages of a native tool (Biome, SWC, workerd, esbuild…) as
// optional dependencies; a lockfile regenerated on one platform can lose the others' entries, and `npm ci` on a Mac
// or on Windows then stops with "Missing: @cloudflare/workerd-darwin-arm64@… from lock file". Two checks:
//   1. every optional dependency of every package in the lockfile (and of its installed package.json, which is what
//      was published) has an entry where node would resolve it from that package;
//   2. a package whose optional dependencies are platform packages for several operating systems has one that
//      installs on each of darwin x64, darwin arm64, win32 x64 and linux x64 (glibc).
// Usage: node scripts/check-lockfile.mjs [path/to/package-lock.json]
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

const TARGETS = [
  { os: "darwin", cpu: "x64" },
  { os: "darwin", cpu: "arm64" },
  { os: "win32", cpu: "x64" },
  { os: "linux", cpu: "x64", libc: "glibc" },
];
const label = (target) => `${target.os} ${target.cpu}`;

const file = process.argv[2] ?? process.env.LOCKFILE ?? "package-lock.json";
let lock;
try {
  lock = JSON.parse(readFileSync(file, "utf8"));
} catch (error) {
  console.error(`check-lockfile: cannot read ${file}: ${error.message}`);
  process.exit(1);
}
const packages = lock.packages;
if (!packages || lock.lockfileVersion < 2) {
  console.error(
    `check-lockfile: ${file} has no "packages" (lockfileVersion ${lock.lockfileVersion}): run npm install`,
  );
  process.exit(1);
}
const root = dirname(file);

/** Where node finds `name` from the package at `path`: its own node_modules, then each enclosing one, as npm does. */
function resolve(path, name) {
  let dir = path;
  for (;;) {
    const candidate = `${dir ? `${dir}/` : ""}node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (!dir) return null;
    const up = dir.lastIndexOf("/node_modules/");
    dir = up < 0 ? "" : dir.slice(0, up);
  }
}

/** The optional dependencies the package's own package.json declares, when it is installed (the published list). */
function publishedOptional(path, version) {
  const manifest = join(root, path, "package.json");
  if (!path || !existsSync(manifest)) return {};
  try {
    const json = JSON.parse(readFileSync(manifest, "utf8"));
    return json.version === version ? (json.optionalDependencies ?? {}) : {};
  } catch {
    return {};
  }
}

/** Whether npm would install the entry on the target (`os`, `cpu`, `libc`; a leading ! excludes). */
function installsOn(entry, target) {
  const allows = (list, value) => {
    if (!list || list.length === 0) return true;
    if (list.includes(`!${value}`)) return false;
    return list.includes(value) || list.every((item) => item.startsWith("!"));
  };
  return (
    allows(entry.os, target.os) &&
    allows(entry.cpu, target.cpu) &&
    (!target.libc || allows(entry.libc, target.libc))
  );
}

const problems = [];
for (const [path, entry] of Object.entries(packages)) {
  const optional = { ...publishedOptional(path, entry.version), ...(entry.optionalDependencies ?? {}) };
  const names = Object.keys(optional);
  if (names.length === 0) continue;
  const who = path || "the project";
  const resolved = [];
  for (const name of names) {
    const at = resolve(path, name);
    if (at) resolved.push(packages[at]);
    else
      problems.push(`Missing: ${name}@${optional[name]} from lock file (an optional dependency of ${who})`);
  }
  // A native tool's per-platform packages: checked when they span several operating systems (fsevents, for macOS
  // only, is not a tool that must install elsewhere).
  const systems = new Set(resolved.flatMap((dep) => (dep.os ?? []).filter((os) => !os.startsWith("!"))));
  if (systems.size < 2) continue;
  for (const target of TARGETS) {
    if (!resolved.some((dep) => installsOn(dep, target))) {
      problems.push(`${who} has no package for ${label(target)} in the lock file`);
    }
  }
}

if (problems.length > 0) {
  console.error(
    `check-lockfile: ${file} would not install everywhere (${problems.length} problem(s)):\n${problems
      .map((problem) => `  - ${problem}`)
      .join("\n")}\n` +
      "Regenerate it with every platform's packages: rm -rf node_modules package-lock.json && npm install, then commit package-lock.json.",
  );
  process.exit(1);
}
console.log(`check-lockfile: ${file} installs on ${TARGETS.map(label).join(", ")}`);
