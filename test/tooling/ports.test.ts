// test/compat/ports.ts: the ports the tests name before anything listens on them.
// Threat (to the suite, not the service): a named port handed by the kernel to someone else's listen(0) or outgoing
// connection before its own server starts: wrangler dev exits "Address already in use", or a fake webhook receiver
// lands on the app origin's port, which the service refuses to post to.
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { freePort, namedPortRange, reservePort } from "../compat/ports";

const listen = (port: number) =>
  new Promise<string>((resolve) => {
    const other = createServer();
    other.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"));
    other.listen(port, "127.0.0.1", () => other.close(() => resolve("listening")));
  });

describe("reservePort", () => {
  it("holds its port until released: nobody else can listen there meanwhile", async () => {
    const held = await reservePort();
    expect(await listen(held.port)).toBe("EADDRINUSE");
    await held.release();
    expect(await listen(held.port)).toBe("listening");
  });
});

describe("freePort", () => {
  it("draws below the ephemeral range, where the kernel hands out no port for listen(0) or a connection", async () => {
    const ephemeralStart = Number(
      readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").split(/\s+/)[0],
    );
    for (let i = 0; i < 20; i++) {
      const port = await freePort();
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(ephemeralStart);
      expect(await listen(port)).toBe("listening");
    }
  });

  it("never names one port twice in a process, though none listens there yet", async () => {
    // 400 draws from ~22,000 ports: without the record of those named, a repeat is all but certain (97 %).
    const ports = [];
    for (let i = 0; i < 400; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(ports.length);
  });

  it("skips a port someone listens on", async () => {
    // Eight ports, the first seven listened on here (or by someone else): the eighth is the only answer.
    const base = await freePort();
    const servers = await Promise.all(
      Array.from(
        { length: 7 },
        (_, i) =>
          new Promise<ReturnType<typeof createServer>>((resolve) => {
            const server = createServer();
            server.once("error", () => resolve(server));
            server.listen(base + i, "127.0.0.1", () => resolve(server));
          }),
      ),
    );
    try {
      // A record of its own: the process's may already hold base + 7 (the draws above, ~420 of ~22,000 ports, named
      // it in about one run in fifty, and then no port of the eight was left: "no free port … in 100 tries").
      expect(await freePort({ from: base, to: base + 8 }, new Set())).toBe(base + 7);
    } finally {
      await Promise.all(servers.map((server) => new Promise((resolve) => server.close(() => resolve(null)))));
    }
  });

  it("reads the range's start from the kernel's setting, and keeps Linux's default under a low one", () => {
    expect(namedPortRange("40000 60999")).toEqual({ from: 10_000, to: 40_000 });
    expect(namedPortRange("1024\t65535")).toEqual({ from: 10_000, to: 32_768 });
    expect(namedPortRange("49152 65535")).toEqual({ from: 10_000, to: 49_152 });
  });
});
