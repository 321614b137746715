// test/compat/wrangler-process.ts: how the tests start a wrangler dev. A stand-in for wrangler (a Node script given
// the same arguments) fails the way wrangler 4 does when a socket it wants is taken, or another way, or serves.
// Threat (to the suite, not the service): a port found free and taken by someone else before wrangler dev binds it
// failed a whole CI run, and its summary showed wrangler's banner, not why.

import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { reservePort } from "../compat/ports";
import { errorLines, startWranglerDev, stopWranglerDev } from "../compat/wrangler-process";

/** Whether a process of that id still runs. */
function alive(pid: number): boolean {
  // kill(0) would signal this test's own process group, which is always there.
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`not a process id: ${pid}`);
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const dir = mkdtempSync(join(tmpdir(), "wrangler-process-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The stand-in: counts its starts in `<state>.starts`; fails with `<state>.fail`'s lines (wrangler's banner before them)
 * while starts ≤ `<state>.failures`, then serves 200 on --port until killed.
 */
const STAND_IN = join(dir, "stand-in.mjs");
writeFileSync(
  STAND_IN,
  `import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
const [state] = process.argv.slice(2);
const args = process.argv.slice(3);
const starts = (existsSync(state + ".starts") ? Number(readFileSync(state + ".starts", "utf8")) : 0) + 1;
writeFileSync(state + ".starts", String(starts));
console.log(" ⛅️ wrangler 4.x\\n───────\\nYour Worker has access to the following bindings:\\nenv.DB  D1 Database  local");
if (starts <= Number(readFileSync(state + ".failures", "utf8"))) {
  console.error(readFileSync(state + ".fail", "utf8"));
  process.exit(1);
}
const port = Number(args[args.indexOf("--port") + 1]);
createServer((_, res) => res.end("ok")).listen(port, args[args.indexOf("--ip") + 1]);
`,
);

function standIn(name: string, failures: number, fail: string) {
  const state = join(dir, name);
  writeFileSync(`${state}.failures`, String(failures));
  writeFileSync(`${state}.fail`, fail);
  return {
    command: [process.execPath, STAND_IN, state],
    starts: () => Number(readFileSync(`${state}.starts`, "utf8")),
  };
}

const TAKEN =
  "✘ [ERROR] Address already in use (127.0.0.1:8787). Please check that you are not already running a server";

async function start(
  name: string,
  failures: number,
  fail: string,
  ready = (url: string, signal: AbortSignal) => fetch(url, { signal }).then((answer) => answer.ok),
) {
  const fake = standIn(name, failures, fail);
  const port = await reservePort();
  const url = `http://127.0.0.1:${port.port}`;
  const started = startWranglerDev({
    label: `the ${name} server`,
    args: ["-c", "wrangler.toml"],
    port,
    env: process.env,
    ready: (signal) => ready(url, signal),
    timeoutMs: 10_000,
    probeTimeoutMs: 200,
    command: fake.command,
    retryDelayMs: 20,
  });
  return { started, starts: fake.starts, url };
}

describe("startWranglerDev", () => {
  it("starts again when a socket it wanted was taken, on the same port, and answers there", async () => {
    const { started, starts, url } = await start("clash-once", 2, TAKEN);
    const server = await started;
    try {
      expect(starts()).toBe(3);
      expect(await (await fetch(url)).text()).toBe("ok");
    } finally {
      server.kill("SIGKILL");
    }
  });

  it("gives up after three clashes, saying so in its first lines", async () => {
    const { started, starts } = await start("clash-always", 9, TAKEN);
    const error = await started.then(
      () => new Error("it started"),
      (failure: Error) => failure,
    );
    expect(starts()).toBe(3);
    const first = error.message.split("\n").slice(0, 2).join("\n");
    expect(first).toContain("the clash-always server exited early (code 1, attempt 3 of 3)");
    expect(first).toContain("Address already in use");
  });

  it("does not start again on any other failure, and puts its error before wrangler's banner", async () => {
    const { started, starts } = await start("broken", 9, '✘ [ERROR] Could not resolve "./missing"');
    const error = await started.then(
      () => new Error("it started"),
      (failure: Error) => failure,
    );
    expect(starts()).toBe(1);
    const [head, second] = error.message.split("\n");
    expect(head).toBe("the broken server exited early (code 1, attempt 1 of 3):");
    expect(second).toBe('✘ [ERROR] Could not resolve "./missing"');
    // The whole output still follows, for whoever reads further.
    expect(error.message).toContain("--- its output ---\n ⛅️ wrangler 4.x");
  });

  it("gives up on a probe that gets no answer, and tries the next", async () => {
    // As a port that accepts and never answers would: only the probe's signal ends it.
    let probes = 0;
    const hangsTwice = (url: string, signal: AbortSignal) =>
      ++probes <= 2
        ? new Promise<boolean>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)))
        : fetch(url, { signal }).then((answer) => answer.ok);
    const { started, url } = await start("slow-to-answer", 0, "", hangsTwice);
    const server = await started;
    try {
      expect(probes).toBeGreaterThanOrEqual(3); // two that hung, then as many as the stand-in took to listen
      expect(await (await fetch(url)).text()).toBe("ok");
    } finally {
      server.kill("SIGKILL");
    }
  });
});

describe("stopWranglerDev", () => {
  it("stops the CLI its bin script runs, not only the bin", async () => {
    // As wrangler's bin/wrangler.js: the CLI in a child process, SIGTERM passed on, its exit code taken.
    const cli = join(dir, "cli.mjs");
    const bin = join(dir, "bin.mjs");
    const pidFile = join(dir, "cli.pid");
    writeFileSync(
      cli,
      `import { writeFileSync } from "node:fs";
writeFileSync(${JSON.stringify(pidFile)}, String(process.pid));
setInterval(() => {}, 1000);
process.on("SIGTERM", () => process.exit(0));
`,
    );
    writeFileSync(
      bin,
      `import { spawn } from "node:child_process";
const cli = spawn(process.execPath, [${JSON.stringify(cli)}], { stdio: "inherit" });
process.on("SIGTERM", () => cli.kill());
cli.on("exit", (code) => process.exit(code ?? 1));
`,
    );
    const child = spawn(process.execPath, [bin], { stdio: "ignore" });
    // The file exists from the CLI's open, before its write: wait for a whole pid, not for the file.
    const cliPid = await vi.waitFor(
      () => {
        const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, "utf8")) : 0;
        expect(pid).toBeGreaterThan(0);
        return pid;
      },
      { timeout: 10_000, interval: 50 },
    );
    await stopWranglerDev(child);
    expect(child.exitCode).toBe(0);
    await vi.waitFor(() => expect(alive(cliPid)).toBe(false), { timeout: 5_000, interval: 50 });
  });
});

describe("errorLines", () => {
  it("keeps the error lines without colours and without the Request.cf fallback's", () => {
    const output = [
      " ⛅️ wrangler 4.156.2",
      "env.DB (edge-auth)   D1 Database   local",
      "Error: getaddrinfo ENOTFOUND workers.cloudflare.com",
      "\x1b[31m✘ \x1b[41;31m[\x1b[41;97mERROR\x1b[41;31m]\x1b[0m \x1b[1mAddress already in use (socket).\x1b[0m",
    ].join("\n");
    expect(errorLines(output)).toBe("✘ [ERROR] Address already in use (socket).");
  });
});
