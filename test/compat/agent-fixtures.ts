// Part of the compatibility suite's global setup (wrangler-dev.ts): what OAuth2's agent clients meet besides the
// service. The example MCP server (examples/mcp-server), bundled by wrangler as its deploy would, served by Miniflare
// on loopback; and a host for client ID metadata documents over https with a certificate made here, which
// `wrangler dev` trusts through NODE_EXTRA_CA_CERTS (Miniflare hands it to workerd), since a document URL is https.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { convertV4MiniflareOptions, Log, LogLevel, Miniflare } from "miniflare";
import selfsigned from "selfsigned";

const WRANGLER = join(process.cwd(), "node_modules", "wrangler", "bin", "wrangler.js");

/**
 * The example MCP server on `port`, trusting `issuer`. Bundled with `wrangler deploy --dry-run`, which is what its
 * deploy uploads.
 */
export async function startMcpExample(port: number, issuer: string) {
  const outdir = mkdtempSync(join(tmpdir(), "edge-auth-mcp-example-"));
  // Not execFileSync: the global setup runs this while the other projects' tests report to the same process.
  await promisify(execFile)(
    process.execPath,
    [WRANGLER, "deploy", "--dry-run", "-c", "examples/mcp-server/wrangler.toml", "--outdir", outdir],
    { env: { ...process.env, WRANGLER_SEND_METRICS: "false" } },
  );
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      log: new Log(LogLevel.WARN),
      host: "127.0.0.1",
      port,
      modulesRoot: outdir,
      modules: [{ type: "ESModule", path: join(outdir, "index.js") }],
      compatibilityDate: "2026-11-01",
      bindings: { AUTH_ISSUER: issuer, MCP_RESOURCE: "" },
    }),
  );
  await mf.ready;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: async () => {
      await mf.dispose();
      rmSync(outdir, { recursive: true, force: true });
    },
  };
}

const listen = (server: ReturnType<typeof createHttpServer>) =>
  new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
  );

/**
 * Client ID metadata documents over https on loopback. A test publishes one with `PUT <control>/<path>` (plain http,
 * so the test needs no certificate); the service fetches `https://127.0.0.1:<port>/<path>`.
 */
export async function startClientDocumentHost() {
  const dir = mkdtempSync(join(tmpdir(), "edge-auth-client-docs-"));
  const pems = await selfsigned.generate([{ name: "commonName", value: "127.0.0.1" }], {
    notAfterDate: new Date(Date.now() + 2 * 86_400_000),
    keyType: "ec",
    extensions: [
      { name: "basicConstraints", cA: true },
      {
        name: "subjectAltName",
        altNames: [
          { type: 7, ip: "127.0.0.1" },
          { type: 2, value: "localhost" },
        ],
      },
    ],
  });
  const certPath = join(dir, "client-docs.pem");
  writeFileSync(certPath, pems.cert);
  const documents = new Map<string, string>();
  const fetches = new Map<string, number>();

  const serve = (request: IncomingMessage, response: ServerResponse) => {
    const path = request.url ?? "/";
    fetches.set(path, (fetches.get(path) ?? 0) + 1);
    const document = documents.get(path);
    response.writeHead(document ? 200 : 404, {
      "content-type": "application/json",
      "cache-control": "max-age=60",
    });
    response.end(document ?? "{}");
  };
  const control = (request: IncomingMessage, response: ServerResponse) => {
    const path = request.url ?? "/";
    if (request.method === "GET") {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify(fetches.get(path) ?? 0));
      return;
    }
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      documents.set(path, body);
      response.writeHead(204).end();
    });
  };
  const https = createHttpsServer({ key: pems.private, cert: pems.cert }, serve);
  const http = createHttpServer(control);
  const [httpsPort, httpPort] = await Promise.all([
    listen(https as unknown as ReturnType<typeof createHttpServer>),
    listen(http),
  ]);
  return {
    origin: `https://127.0.0.1:${httpsPort}`,
    control: `http://127.0.0.1:${httpPort}`,
    certPath,
    close: async () => {
      await Promise.all([
        new Promise((resolve) => https.close(resolve)),
        new Promise((resolve) => http.close(resolve)),
      ]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
