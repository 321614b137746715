import { Readable } from "node:stream";
import busboy from "busboy";
import { readPast } from "../lib/refused-body";
import { badRequest, StorageError } from "./errors";

/**
 * A multipart/form-data body as an async sequence of parts, in order, with file contents as streams: `busboy`
 * parses the request body as it arrives and does not read past a file part until that part's stream is consumed,
 * so a file is never held whole in memory (storage contract §2, "streamed").
 */
export type Part =
  | { kind: "field"; name: string; value: string }
  | { kind: "file"; name: string; filename: string; mimeType: string; stream: Readable };

/**
 * A body that is not a well-formed upload as a whole (cut off before its closing boundary, parts that do not pair):
 * 400, and the upload keeps nothing of it, unlike a file refused by a rule, after which the files before it stay.
 */
export class MalformedUpload extends StorageError {
  constructor(detail: string) {
    super(400, `malformed multipart/form-data: ${detail}`);
  }
}

const LIMITS = { fields: 100, fieldSize: 64 * 1024, files: 100, parts: 300, headerPairs: 50 };

/** The WHATWG form encoding escapes `"`, CR and LF in file names as %22, %0D, %0A; those three are undone. */
function unescapeFilename(name: string): string {
  return name.replace(/%22/g, '"').replace(/%0D/gi, "\r").replace(/%0A/gi, "\n");
}

export async function* multipartParts(request: Request): AsyncGenerator<Part> {
  const contentType = request.headers.get("content-type") ?? "";
  if (!/^multipart\/form-data\s*;/i.test(contentType) || !request.body) {
    throw badRequest("the request must be multipart/form-data");
  }
  let parser: busboy.Busboy;
  try {
    // Browsers and undici send UTF-8 file names (busboy's default is latin1).
    parser = busboy({ headers: { "content-type": contentType }, limits: LIMITS, defParamCharset: "utf8" });
  } catch {
    throw badRequest("malformed multipart/form-data content type");
  }
  const queue: Part[] = [];
  let finished = false;
  let failure: unknown;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  parser.on("field", (name, value) => {
    queue.push({ kind: "field", name, value });
    notify();
  });
  parser.on("file", (name, stream, info) => {
    // A body cut off mid-part fails this stream too, possibly before anyone reads it: the reader sees the failure
    // (the stream keeps it); without a listener it would also surface as an uncaught exception.
    stream.on("error", () => {});
    queue.push({
      kind: "file",
      name,
      filename: unescapeFilename(info.filename ?? ""),
      mimeType: info.mimeType ?? "",
      stream,
    });
    notify();
  });
  parser.on("close", () => {
    finished = true;
    notify();
  });
  parser.on("error", (error) => {
    failure = error;
    notify();
  });
  const source = Readable.fromWeb(request.body as import("node:stream/web").ReadableStream<Uint8Array>);
  source.on("error", (error) => parser.destroy(error));
  source.pipe(parser);
  try {
    while (true) {
      const next = queue.shift();
      if (next) {
        yield next;
        continue;
      }
      if (failure) throw new MalformedUpload((failure as Error).message);
      if (finished) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  } finally {
    // A caller that stops early (a refused file) leaves the rest of the body unread: read past it before answering.
    source.unpipe(parser);
    await readPast(source);
  }
}

/** A small part read whole (the `metadata[]` JSON of browsers, which send it as a file with an empty name). */
export async function readSmallPart(stream: Readable, limit: number): Promise<string> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Uint8Array>) {
      length += chunk.length;
      if (length > limit) throw badRequest(`metadata part larger than ${limit} bytes`);
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof StorageError) throw error;
    throw new MalformedUpload(error instanceof Error ? error.message : String(error));
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}
