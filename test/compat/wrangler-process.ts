// Starting a `wrangler dev` of the tests (the compat server, test/compat/wrangler-dev.ts; the service-binding example,
// test/compat/workers-binding.test.ts) on a port of the run's own, and knowing why when it does not start.
//
// wrangler dev binds its sockets seconds after it is spawned; a port taken in between makes it print "Address already
// in use" and exit, and the whole compat project fails (a CI run did, once, of ~70). Its port is held until the spawn
// (test/compat/ports.ts says how), its inspector's is drawn where nobody is handed one, and a start that lost a race
// for a port anyway is tried again. Any other early exit is a real failure: its error lines come first in the
// message, where a CI summary that shows a failure's first lines reads them, before wrangler's banner.
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { freePort } from "./ports";

const WRANGLER = join(process.cwd(), "node_modules", "wrangler", "bin", "wrangler.js");
/** How wrangler dev says a socket of its own is taken (wrangler 4: "Address already in use (127.0.0.1:8787)."). */
const PORT_TAKEN = /Address already in use/i;
const ATTEMPTS = 3;

/** The lines of a wrangler (or workerd) log that say what went wrong, without colours or the banner. */
export function errorLines(output: string): string {
  const lines = stripVTControlCharacters(output)
    .split("\n")
    .filter((line) => /\b(error|✘|failed|cannot|could not)\b|in use/i.test(line))
    .filter((line) => !/Request\.cf|workers\.cloudflare\.com/.test(line));
  return lines.length > 0 ? lines.slice(-8).join("\n") : output.trim().split("\n").slice(-8).join("\n");
}

export interface WranglerDevOptions {
  /** What the log calls it: "the compat server", "the example's wrangler dev". */
  label: string;
  /** `wrangler dev`'s arguments but --ip, --port and --inspector-port, which this sets. */
  args: string[];
  /** The port it must answer on: held by the caller until now, released just before the spawn. */
  port: { port: number; release(): Promise<void> };
  env: NodeJS.ProcessEnv;
  /**
   * True once it answers as the caller needs. Its requests take `signal`: a port that accepts and never answers (someone
   * else's listener, a server still starting) must not hold the wait past its deadline.
   */
  ready(signal: AbortSignal): Promise<boolean>;
  /** How long it may take to get there, each attempt. */
  timeoutMs: number;
  /** The command run instead of wrangler (test/tooling/wrangler-process.test.ts); its arguments as wrangler's. */
  command?: string[];
  /** How long one readiness probe may wait for an answer; five seconds unless said. */
  probeTimeoutMs?: number;
  /** The pause before the second attempt (doubled before the third); half a second unless said. */
  retryDelayMs?: number;
}

/**
 * Spawns wrangler dev on `options.port` and waits until `ready()`; tries again, on the same port and another inspector
 * port, when it exits because a socket it wanted was taken. Throws with its error lines first otherwise.
 */
export async function startWranglerDev(options: WranglerDevOptions): Promise<ChildProcess> {
  await options.port.release();
  const command = options.command ?? [process.execPath, WRANGLER];
  let earlier = "";
  for (let attempt = 1; ; attempt++) {
    let output = "";
    const child = spawn(
      command[0],
      [
        ...command.slice(1),
        "dev",
        ...options.args,
        "--ip",
        "127.0.0.1",
        "--port",
        String(options.port.port),
        "--inspector-port",
        String(await freePort()),
      ],
      { env: options.env, stdio: ["ignore", "pipe", "pipe"] },
    );
    child.stdout?.on("data", (chunk) => (output += chunk));
    child.stderr?.on("data", (chunk) => (output += chunk));
    const deadline = Date.now() + options.timeoutMs;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) break;
      if (await options.ready(AbortSignal.timeout(options.probeTimeoutMs ?? 5_000)).catch(() => false))
        return child;
      if (Date.now() > deadline) {
        await stopWranglerDev(child);
        throw new Error(
          `${options.label} did not become ready in ${options.timeoutMs / 1000} s:\n${errorLines(output)}\n` +
            `--- its output ---\n${output}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const how = child.exitCode !== null ? `code ${child.exitCode}` : `signal ${child.signalCode}`;
    if (PORT_TAKEN.test(output) && attempt < ATTEMPTS) {
      earlier += `--- attempt ${attempt} (${how}): ${errorLines(output)}\n`;
      // Whoever took it may have been passing through (an outgoing connection, a server closing).
      await new Promise((resolve) => setTimeout(resolve, (options.retryDelayMs ?? 500) * attempt));
      continue;
    }
    throw new Error(
      `${options.label} exited early (${how}, attempt ${attempt} of ${ATTEMPTS}):\n${errorLines(output)}\n` +
        `${earlier}--- its output ---\n${output}`,
    );
  }
}

/**
 * Stops a wrangler dev and waits for it. Its bin script (the spawned process) runs the CLI as a child of its own and
 * passes SIGTERM on; a SIGKILL would leave that child, its workerd and its esbuild running, holding their ports.
 */
export async function stopWranglerDev(child: ChildProcess, graceMs = 5_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  let timer: NodeJS.Timeout | undefined;
  const inTime = await Promise.race([
    exited.then(() => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), graceMs);
    }),
  ]);
  clearTimeout(timer); // an armed timer would keep the test process up to graceMs longer
  if (!inTime) {
    child.kill("SIGKILL");
    await exited;
  }
}
