// Ports the tests name before anything listens on them: the compat server's (test/compat/wrangler-dev.ts), the pages'
// and the app's origins it is configured with, wrangler's inspector, `npm start`'s in test/compat/start-script.test.ts.
//
// A port found free is free only until someone else binds it, and a test run binds ports all the time: every
// listen(0) of a fake server or of the workers pool's Miniflare, and every outgoing connection, takes one from the
// kernel's ephemeral range. A named port drawn from that range can be handed to any of them before its own server
// starts: wrangler dev then exits with "Address already in use", or a fake webhook receiver lands on the app's
// origin, which the service refuses to post to (its own loopback ports: src/lib/outbound-url.ts). So:
// - a port that must be held until a spawn is `reservePort`'s, kept listening by this process until released;
// - a port named for later is `freePort`'s, drawn below the ephemeral range, where the kernel hands out none.

import { randomInt } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";

/** A loopback port held by this process until `release`: nobody else's bind(0) or connect can be handed it meanwhile. */
export function reservePort(): Promise<{ port: number; release(): Promise<void> }> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      if (typeof address !== "object" || !address) return reject(new Error("no port"));
      resolve({ port: address.port, release: () => new Promise((done) => server.close(() => done())) });
    });
  });
}

/** Where named ports are drawn: from 10000 to the start of the ephemeral range ("32768\t60999", Linux's), exclusive. */
export function namedPortRange(ephemeral: string): { from: number; to: number } {
  const start = Number(ephemeral.trim().split(/\s+/)[0]);
  // A range that starts low (a tuned kernel) leaves too few ports below it: Linux's default start instead.
  return { from: 10_000, to: Number.isInteger(start) && start > 20_000 ? start : 32_768 };
}

/** The kernel's ephemeral range: Linux's from /proc; macOS and Windows use IANA's dynamic ports. */
function ephemeralRange(): string {
  try {
    return readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8");
  } catch {
    return "49152 65535";
  }
}

/** Ports this process has named already: two servers of one run are never given the same one. */
const named = new Set<number>();

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/**
 * A loopback port below the ephemeral range, free now, for a server started later (by this process or a test file).
 * `record`: the ports already named, this process's unless a test brings its own.
 */
export async function freePort(
  range = namedPortRange(ephemeralRange()),
  record: Set<number> = named,
): Promise<number> {
  const { from, to } = range;
  for (let tries = 0; tries < 100; tries++) {
    const port = randomInt(from, to);
    if (record.has(port) || !(await canListen(port))) continue;
    record.add(port);
    return port;
  }
  throw new Error(`no free port from ${from} to ${to} in 100 tries`);
}
