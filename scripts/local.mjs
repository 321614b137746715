// What the local scripts (`npm start`, `npm run admin`, `npm run reset`) agree on: the git-ignored .dev.vars with the
// development secrets and switches, and the one setting that moves the local server, PORT.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { DEVELOPMENT_VARS, generateSecrets, toEnvLines } from "./secrets.mjs";

export const DEV_VARS = ".dev.vars";
const DEFAULT_PORT = 8787;

/** .dev.vars as name → value (dotenv lines, values in single or double quotes or bare). */
export function readDevVars() {
  if (!existsSync(DEV_VARS)) return {};
  const vars = {};
  for (const line of readFileSync(DEV_VARS, "utf8").split("\n")) {
    const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!match) continue;
    vars[match[1]] = match[2]
      .trim()
      .replace(/^'(.*)'$/s, "$1")
      .replace(/^"(.*)"$/s, "$1");
  }
  return vars;
}

/**
 * Makes sure .dev.vars holds the local secrets and development switches, adding only what is missing (a developer's
 * own values stay). Returns the names it added.
 */
export function ensureDevVars() {
  const current = existsSync(DEV_VARS) ? readFileSync(DEV_VARS, "utf8") : "";
  const present = readDevVars();
  const wanted = { ...generateSecrets(), ...DEVELOPMENT_VARS };
  const missing = Object.entries(wanted).filter(([name]) => !(name in present));
  if (missing.length > 0) {
    const prefix = current && !current.endsWith("\n") ? "\n" : "";
    const lines = toEnvLines(Object.fromEntries(missing));
    writeFileSync(DEV_VARS, `${current}${prefix}${lines.join("\n")}\n`, { mode: 0o600 });
  }
  return missing.map(([name]) => name);
}

/**
 * The local server's port: `--port N` on the command line, else PORT in the environment, else PORT in .dev.vars,
 * else 8787. One setting: the server listens there and every URL below is built from it.
 */
export function localPort(argv = process.argv.slice(2), devVars = readDevVars()) {
  const flag = argv.findIndex((arg) => arg === "--port" || arg.startsWith("--port="));
  const given =
    flag < 0
      ? (process.env.PORT ?? devVars.PORT)
      : argv[flag].includes("=")
        ? argv[flag].split("=")[1]
        : argv[flag + 1];
  if (given === undefined || given === "") return DEFAULT_PORT;
  const port = Number(given);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new Error(`PORT must be a port number (1-65535), not "${given}"`);
  }
  return port;
}

/**
 * The URLs of the local server. AUTH_SERVER_URL and STORAGE_SERVER_URL follow the port unless .dev.vars sets them
 * (then they are the developer's choice, kept as they are).
 */
export function localUrls(port = localPort(), devVars = readDevVars()) {
  const authPrefix = devVars.AUTH_API_PREFIX || "/auth/v1";
  const auth = (devVars.AUTH_SERVER_URL || `http://localhost:${port}${authPrefix}`).replace(/\/$/, "");
  const storageServer = (devVars.STORAGE_SERVER_URL || `http://localhost:${port}`).replace(/\/$/, "");
  return {
    auth,
    storage: `${storageServer}${devVars.STORAGE_API_PREFIX || "/storage/v1"}`,
    storageServer,
    /** Whether the URLs were derived from the port (and must be handed to wrangler dev with --var). */
    derived: { auth: !devVars.AUTH_SERVER_URL, storage: !devVars.STORAGE_SERVER_URL },
  };
}

/**
 * Where a running `npm start` says which server it started (port and URLs), for `npm run admin` to find it when
 * nothing names a server. Under the git-ignored .wrangler/, beside the local state it serves; removed on exit.
 */
export const RUNNING_FILE = join(".wrangler", "edge-auth-running.json");

/** Records the server this process started (`npm start`). */
export function recordRunning(details) {
  mkdirSync(dirname(RUNNING_FILE), { recursive: true });
  writeFileSync(RUNNING_FILE, `${JSON.stringify({ pid: process.pid, ...details }, null, 2)}\n`);
}

/** Forgets it, unless another `npm start` has recorded itself since. */
export function forgetRunning() {
  try {
    if (JSON.parse(readFileSync(RUNNING_FILE, "utf8")).pid === process.pid) rmSync(RUNNING_FILE);
  } catch {}
}

/** The server a running `npm start` recorded, or null (none, or its process is gone: a file left by a crash). */
export function readRunning() {
  let running;
  try {
    running = JSON.parse(readFileSync(RUNNING_FILE, "utf8"));
  } catch {
    return null;
  }
  if (!Number.isInteger(running?.pid) || typeof running.auth !== "string") return null;
  try {
    process.kill(running.pid, 0);
  } catch (error) {
    // EPERM: the process exists but is another user's.
    if (error.code !== "EPERM") return null;
  }
  return running;
}
