// Global setup of the Workers tests: a fake Supabase project on loopback for the Supabase face's forwarded data calls
// (contract supabase.md §4), reached by the service's real outbound fetch (tests pass `OUTBOUND: undefined`), so
// what is checked is what went over the wire. It checks each call's token as PostgREST does (HS256 under the
// project's JWT secret, then `role` and `sub`) and its `apikey` as Supabase's gateway does (the anon key), and answers
// with what it saw:
// - `rest/v1/<table>` (any method): `[{...seen, title}]`, a row as `from(table).select()` reads it, its `title` naming
//   the token's `sub` (what RLS would let `auth.uid()` see); `rest/v1/rpc/<fn>`: `{seen}`;
// - `graphql/v1`, `functions/v1/<name>`: `{seen}` (the body, as text, in `seen.body`);
// - `realtime/v1/websocket`: a WebSocket speaking Phoenix (both serializers): `phx_join` is answered `ok` with the
//   claims of its `access_token` (and a `joined_as` broadcast of them), `access_token` with a `token_seen` broadcast
//   of its claims, a heartbeat `ok`, any other text frame echoed;
// - `hang/…`: accepts and never answers; `drop/…`: closes the connection without an answer; `status/<5xx>/…`:
//   answers that status with an HTML page, as Cloudflare in front of a project that is down does;
// - `upstreamRefusedUrl`: a port nothing listens on.
// A token that does not verify gets PostgREST's 401 (`PGRST301`); a wrong `apikey` the gateway's 401.
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { jwtVerify } from "jose";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    upstreamUrl: string;
    upstreamRefusedUrl: string;
  }
}

/** The project's JWT secret and anon key (the fake's; a test configures the service with them). */
export const UPSTREAM_JWT_SECRET = "super-secret-jwt-token-with-at-least-32-characters-long";
export const UPSTREAM_ANON_KEY = "upstream-anon-key.of-the-project";

export interface Seen {
  method: string;
  path: string;
  search: string;
  claims: Record<string, unknown>;
  header: Record<string, unknown>;
  apikey: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

const secret = new TextEncoder().encode(UPSTREAM_JWT_SECRET);

/** PostgREST's check: HS256 under the secret, unexpired, a `role`; the claims and header, or null. */
async function verify(token: string | undefined) {
  if (!token) return null;
  try {
    const { payload, protectedHeader } = await jwtVerify(token, secret, { algorithms: ["HS256"] });
    if (typeof payload.role !== "string") return null;
    return { claims: payload as Record<string, unknown>, header: protectedHeader as Record<string, unknown> };
  } catch {
    return null;
  }
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** One WebSocket frame of the server (never masked), text or close. */
function frame(opcode: number, data: Buffer): Buffer {
  const head =
    data.length < 126
      ? Buffer.from([0x80 | opcode, data.length])
      : Buffer.from([0x80 | opcode, 126, data.length >> 8, data.length & 0xff]);
  return Buffer.concat([head, data]);
}

/** Frames of a client (masked), as they come; up to 64 KiB each, which is all these tests send. */
function readFrames(socket: Socket, onText: (text: string) => void) {
  let buffer = Buffer.alloc(0);
  socket.on("data", (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    while (buffer.length >= 2) {
      const opcode = buffer[0]! & 0x0f;
      let length = buffer[1]! & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (buffer.length < 4) return;
        length = buffer.readUInt16BE(2);
        offset = 4;
      }
      if (buffer.length < offset + 4 + length) return;
      const mask = buffer.subarray(offset, offset + 4);
      const data = Buffer.from(
        buffer.subarray(offset + 4, offset + 4 + length).map((b: number, i: number) => b ^ mask[i % 4]!),
      );
      buffer = buffer.subarray(offset + 4 + length);
      if (opcode === 0x8) {
        socket.end(frame(0x8, data.subarray(0, 2)));
        return;
      }
      if (opcode === 0x9) socket.write(frame(0xa, data));
      if (opcode === 0x1) onText(data.toString("utf8"));
    }
  });
}

/** Realtime's side of a socket: Phoenix frames of either serializer, answered as described above. */
function phoenix(socket: Socket) {
  socket.on("error", () => socket.destroy());
  const send = (
    array: boolean,
    joinRef: unknown,
    ref: unknown,
    topic: string,
    event: string,
    payload: unknown,
  ) =>
    // A socket the other side has closed meanwhile takes nothing more.
    socket.writable &&
    socket.write(
      frame(
        0x1,
        Buffer.from(
          JSON.stringify(
            array ? [joinRef, ref, topic, event, payload] : { join_ref: joinRef, ref, topic, event, payload },
          ),
        ),
      ),
    );
  readFrames(socket, async (text) => {
    const value = JSON.parse(text);
    const array = Array.isArray(value);
    const [joinRef, ref, topic, event, payload] = array
      ? value
      : [value.join_ref, value.ref, value.topic, value.event, value.payload];
    if (event === "phx_join" || event === "access_token") {
      const verified = await verify(payload.access_token);
      const seen = verified ? { token: payload.access_token, ...verified.claims } : { refused: true };
      if (event === "phx_join") {
        send(array, joinRef, ref, topic, "phx_reply", { status: "ok", response: seen });
        // What the join was verified as, told as a broadcast too: realtime-js hands broadcasts to the app.
        send(array, joinRef, null, topic, "broadcast", {
          type: "broadcast",
          event: "joined_as",
          payload: seen,
        });
      } else
        send(array, joinRef, null, topic, "broadcast", {
          type: "broadcast",
          event: "token_seen",
          payload: seen,
        });
    } else if (event === "heartbeat") {
      send(array, null, ref, topic, "phx_reply", { status: "ok", response: {} });
    } else {
      send(array, joinRef, ref, topic, event, payload);
    }
  });
}

/** Realtime's check of the URL's key: a JWT under the project's secret (here the anon key's string too). */
async function upgrade(req: IncomingMessage, socket: Socket) {
  const url = new URL(req.url ?? "/", "http://fake");
  const apikey = url.searchParams.get("apikey") ?? undefined;
  const known = apikey === UPSTREAM_ANON_KEY || (await verify(apikey))?.claims.role === "anon";
  if (url.pathname !== "/realtime/v1/websocket" || !known) {
    socket.end("HTTP/1.1 401 Unauthorized\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
    return;
  }
  const accept = createHash("sha1")
    .update(`${req.headers["sec-websocket-key"]}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`)
    .digest("base64");
  socket.write(
    `HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-accept: ${accept}\r\n\r\n`,
  );
  phoenix(socket);
}

async function listen(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
  );
}

/**
 * Starts the fake project on a free loopback port: its URL, and how to stop it. The compat server's global setup
 * (test/compat/wrangler-dev.ts) starts one too, behind `wrangler dev`'s face (the example app reads its notes there).
 */
export async function startFakeUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const hung = new Set<Socket>();
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://fake");
    if (url.pathname.startsWith("/hang/")) {
      hung.add(req.socket);
      return;
    }
    const cloudflare = /^\/status\/(5\d\d)\//.exec(url.pathname);
    if (cloudflare) {
      res.writeHead(Number(cloudflare[1]), { "content-type": "text/html" });
      return res.end("<!DOCTYPE html><title>Web server is down</title>");
    }
    if (url.pathname.startsWith("/drop/")) {
      req.socket.destroy();
      return;
    }
    const body = await bodyOf(req);
    if (req.headers.apikey !== UPSTREAM_ANON_KEY) {
      res.writeHead(401, { "content-type": "application/json" });
      return res.end(JSON.stringify({ message: "Invalid API key" }));
    }
    const verified = await verify(/^Bearer (\S+)$/.exec(req.headers.authorization ?? "")?.[1]);
    if (!verified) {
      res.writeHead(401, { "content-type": "application/json" });
      return res.end(
        JSON.stringify({
          code: "PGRST301",
          details: null,
          hint: null,
          message: "JWSError JWSInvalidSignature",
        }),
      );
    }
    const seen: Seen = {
      method: req.method ?? "",
      path: url.pathname,
      search: url.search,
      claims: verified.claims,
      header: verified.header,
      apikey: req.headers.apikey as string | undefined,
      headers: req.headers,
      body,
    };
    const table = /^\/rest\/v1\/(?!rpc\/)[^/]+$/.test(url.pathname);
    res.writeHead(200, { "content-type": "application/json", "set-cookie": "upstream=1; Path=/" });
    // A table's row is what RLS would let `auth.uid()` see: it names the caller the token says.
    res.end(
      JSON.stringify(table ? [{ ...seen, title: `a note of ${verified.claims.sub ?? "anon"}` }] : seen),
    );
  });
  server.on("upgrade", upgrade);
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const socket of hung) socket.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A port nothing listens on, for the whole run: free now, and below the range the system picks ports from for a
 * server that asks for any (Linux's 32768–60999), which every other server of the suite does. A port that was just
 * free within that range could be handed to a later test's server (one run's "refused" call got a 403 from one).
 */
async function refusingPort(): Promise<number> {
  for (let tries = 0; tries < 50; tries++) {
    const port = 20_000 + Math.floor(Math.random() * 10_000);
    const probe = createServer();
    const free = await new Promise<boolean>((resolve) => {
      probe.once("error", () => resolve(false));
      probe.listen(port, "127.0.0.1", () => resolve(true));
    });
    if (free) {
      await new Promise<void>((resolve) => probe.close(() => resolve()));
      return port;
    }
  }
  throw new Error("no free port between 20000 and 29999 for the refused upstream");
}

/** Global setup of the workers projects: the fake project, and a port nothing listens on. */
export default async function setup(project: TestProject) {
  const upstream = await startFakeUpstream();
  const refusedPort = await refusingPort();
  project.provide("upstreamUrl", upstream.url);
  project.provide("upstreamRefusedUrl", `http://127.0.0.1:${refusedPort}`);
  return upstream.close;
}
