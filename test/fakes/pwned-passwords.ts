// Global setup of the Workers tests: a fake Pwned Passwords range API
// (https://haveibeenpwned.com/API/v3#PwnedPasswords) on loopback, reached by the service's real outbound fetch (tests
// pass `OUTBOUND: undefined`), so what is checked is what went over the wire. On the same port:
// - `GET /range/<5 hex>` answers as the real API does with `Add-Padding: true`: "SUFFIX:COUNT" lines, the breached
//   ones that start with the prefix and padding lines ending ":0";
// - `GET /down/range/<5 hex>` answers 503, as the API does in an outage;
// - `POST /__breached {sha1, count?}` adds a breached password (by its SHA-1, hex), so each test has breaches of its
//   own; `count: 0` lists it as a padding line would (a suffix with a count of 0, which is no breach);
// - `GET /__received?prefix=<5 hex>` lists what the range requests for that prefix carried (path, query, headers).
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    pwnedPasswordsUrl: string;
  }
}

/** What one range request carried, as the fake saw it. */
export interface RangeRequest {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string | string[] | undefined>;
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
}

/** Padding as the real API pads: random suffixes with a count of 0, which a client must not count as a breach. */
const padding = () =>
  Array.from(
    { length: 5 },
    () => `${createHash("sha1").update(crypto.randomUUID()).digest("hex").slice(5).toUpperCase()}:0`,
  );

export default async function setup(project: TestProject) {
  /** SHA-1 (upper-case hex) → how often it was seen in breaches. */
  const breached = new Map<string, number>();
  const received = new Map<string, RangeRequest[]>();

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://fake");
    const range = /^(\/down)?\/range\/([^/]*)$/.exec(url.pathname);
    if (req.method === "GET" && range) {
      const prefix = range[2]!.toUpperCase();
      const seen = received.get(prefix) ?? [];
      seen.push({ method: req.method, path: url.pathname, query: url.search, headers: req.headers });
      received.set(prefix, seen);
      if (range[1]) {
        res.writeHead(503, { "content-type": "text/plain" });
        return res.end("Service Unavailable");
      }
      const lines = [...breached]
        .filter(([sha1]) => sha1.startsWith(prefix))
        .map(([sha1, count]) => `${sha1.slice(5)}:${count}`)
        .concat(padding());
      res.writeHead(200, { "content-type": "text/plain" });
      return res.end(lines.join("\r\n"));
    }
    if (req.method === "POST" && url.pathname === "/__breached") {
      const { sha1, count = 42 } = (await readJson(req)) as { sha1: string; count?: number };
      breached.set(sha1.toUpperCase(), count);
      res.writeHead(201);
      return res.end();
    }
    if (req.method === "GET" && url.pathname === "/__received") {
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(JSON.stringify(received.get(url.searchParams.get("prefix")?.toUpperCase() ?? "") ?? []));
    }
    res.writeHead(404);
    res.end();
  });
  const port = await new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
  );
  project.provide("pwnedPasswordsUrl", `http://127.0.0.1:${port}`);
  return () => new Promise<void>((resolve) => server.close(() => resolve()));
}
