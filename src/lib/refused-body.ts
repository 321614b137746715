import type { Readable } from "node:stream";

/**
 * At most this much of a refused request's body is read past (and dropped) before the answer goes; a longer rest is
 * cancelled. A body cancelled while the client is still sending it is a lost connection to workerd and to wrangler
 * dev's proxy in front of it, and so is one left locked and unread through that proxy (its own drain of an unused body
 * cannot read a locked one): the client then gets a reset or a 500 ("Network connection lost") instead of the 4xx the
 * Worker chose. Reading a few MiB costs only the wait for them; reading without a bound would let a client hold the
 * request open for as long as it keeps sending.
 */
export const DRAIN_LIMIT = 8 * 1024 * 1024;

/** Reads `source` to its end and drops the bytes, or cancels it once more than `limit` bytes came. */
export async function readPast(source: Readable, limit = DRAIN_LIMIT): Promise<void> {
  let read = 0;
  try {
    for await (const chunk of source as AsyncIterable<Uint8Array>) {
      read += chunk.length;
      // Leaving the loop destroys the stream, which cancels the rest of the body.
      if (read > limit) break;
    }
  } catch {
    // The body broke off: nothing is left to read, and the answer is the one the failure already chose.
  }
}

/** `readPast` for a body read through its own reader (a bounded JSON body, a resumable upload's chunk). */
export async function readPastReader(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  limit = DRAIN_LIMIT,
): Promise<void> {
  let read = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      read += value.byteLength;
      if (read > limit) break;
    }
    await reader.cancel();
  } catch {
    // As above: a body that broke off has nothing left to read.
  }
}

/**
 * A request body read whole if it is at most `maxBytes`; past that, the rest is read past (`readPastReader`) and the
 * answer is `"too-large"`, so the refusal the caller sends reaches a client still sending.
 */
export async function readWithin(
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
): Promise<Uint8Array | "too-large"> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await readPastReader(reader);
      return "too-large";
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
