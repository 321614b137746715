// Global setup of the Workers tests: an OpenTelemetry collector's OTLP/HTTP logs receiver on loopback, reached by the
// service's real outbound fetch (the audit export's tests pass `OUTBOUND: undefined`), so what is checked is what went
// over the wire. Two ports:
// - the receiver, `POST /v1/logs` with `Content-Type: application/json`: the body is checked against the OTLP JSON
//   encoding of ExportLogsServiceRequest (proto3 JSON mapping: lowerCamelCase names, 64-bit integers as decimal
//   strings, enums as integers, one field per AnyValue) and `Authorization: Bearer otlp-test-token` is required, as a
//   collector's bearer-token auth extension would: 401 without it, 400 with a Status body for a malformed request,
//   200 with an empty `partialSuccess` when taken. It can go down (its socket closed: connections refused, as a
//   collector that is not running) and come back on the same port, or answer 403 to everything;
// - the control, always up: `POST /__mode {mode: "up" | "down" | "reject"}`, `GET /__received` (every log record
//   taken, with the headers of its request).
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { TestProject } from "vitest/node";
import { z } from "zod";

declare module "vitest" {
  export interface ProvidedContext {
    otlpReceiver: { url: string; control: string };
  }
}

export const OTLP_TOKEN = "otlp-test-token";

const decimal = z.string().regex(/^\d+$/);
const anyValue = z
  .object({ stringValue: z.string(), intValue: decimal, boolValue: z.boolean(), doubleValue: z.number() })
  .partial()
  .strict()
  .refine((value) => Object.keys(value).length === 1, "an AnyValue holds exactly one value");
const keyValue = z.object({ key: z.string().min(1), value: anyValue }).strict();
const logRecord = z
  .object({
    timeUnixNano: decimal,
    observedTimeUnixNano: decimal,
    severityNumber: z.number().int().min(1).max(24),
    severityText: z.string(),
    body: anyValue,
    attributes: z.array(keyValue),
  })
  .strict();
const exportLogsServiceRequest = z
  .object({
    resourceLogs: z.array(
      z
        .object({
          resource: z.object({ attributes: z.array(keyValue) }).strict(),
          scopeLogs: z.array(
            z
              .object({
                scope: z.object({ name: z.string(), version: z.string() }).strict(),
                logRecords: z.array(logRecord).min(1),
              })
              .strict(),
          ),
        })
        .strict(),
    ),
  })
  .strict();

export interface ReceivedLog {
  /** The record's attributes as a flat object (string values), for the tests to read. */
  attributes: Record<string, string>;
  severityNumber: number;
  body: string;
  timeUnixNano: string;
  resource: Record<string, string>;
  scope: string;
  headers: Record<string, string | string[] | undefined>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

const flat = (attributes: z.infer<typeof keyValue>[]) =>
  Object.fromEntries(attributes.map(({ key, value }) => [key, String(Object.values(value)[0])]));

export default async function setup(project: TestProject) {
  const received: ReceivedLog[] = [];
  let mode: "up" | "down" | "reject" = "up";
  const answer = (res: import("node:http").ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };

  const receiver: Server = createServer(async (req, res) => {
    const body = await readBody(req);
    if (req.method !== "POST" || req.url !== "/v1/logs")
      return answer(res, 404, { code: 5, message: "not found" });
    if (mode === "reject") return answer(res, 403, { code: 7, message: "this tenant may not write logs" });
    if (req.headers.authorization !== `Bearer ${OTLP_TOKEN}`)
      return answer(res, 401, { code: 16, message: "missing or wrong bearer token" });
    if (req.headers["content-type"] !== "application/json")
      return answer(res, 415, { code: 3, message: "only application/json here" });
    let parsed: z.infer<typeof exportLogsServiceRequest>;
    try {
      parsed = exportLogsServiceRequest.parse(JSON.parse(body));
    } catch (error) {
      return answer(res, 400, { code: 3, message: `malformed ExportLogsServiceRequest: ${String(error)}` });
    }
    for (const resourceLogs of parsed.resourceLogs) {
      for (const scopeLogs of resourceLogs.scopeLogs) {
        for (const record of scopeLogs.logRecords) {
          received.push({
            attributes: flat(record.attributes),
            severityNumber: record.severityNumber,
            body: String(Object.values(record.body)[0]),
            timeUnixNano: record.timeUnixNano,
            resource: flat(resourceLogs.resource.attributes),
            scope: scopeLogs.scope.name,
            headers: req.headers,
          });
        }
      }
    }
    answer(res, 200, { partialSuccess: {} });
  });
  const port = await new Promise<number>((resolve) =>
    receiver.listen(0, "127.0.0.1", () => resolve((receiver.address() as AddressInfo).port)),
  );
  const up = () =>
    receiver.listening
      ? Promise.resolve()
      : new Promise<void>((resolve) => receiver.listen(port, "127.0.0.1", resolve));
  const down = () =>
    new Promise<void>((resolve) => {
      if (!receiver.listening) return resolve();
      receiver.close(() => resolve());
      receiver.closeAllConnections();
    });

  const control = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://control");
    if (req.method === "POST" && url.pathname === "/__mode") {
      const wanted = (JSON.parse((await readBody(req)) || "{}") as { mode?: typeof mode }).mode ?? "up";
      if (wanted === "down") await down();
      else await up();
      mode = wanted;
      return answer(res, 200, { mode });
    }
    if (req.method === "GET" && url.pathname === "/__received") return answer(res, 200, received);
    answer(res, 404, {});
  });
  const controlPort = await new Promise<number>((resolve) =>
    control.listen(0, "127.0.0.1", () => resolve((control.address() as AddressInfo).port)),
  );
  project.provide("otlpReceiver", {
    url: `http://127.0.0.1:${port}/v1/logs`,
    control: `http://127.0.0.1:${controlPort}`,
  });
  return async () => {
    await down();
    await new Promise<void>((resolve) => control.close(() => resolve()));
  };
}
