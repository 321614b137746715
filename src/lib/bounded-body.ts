/** A body over the bound: the reader is cancelled, nothing more is read. */
export class BodyTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`the body is larger than ${maxBytes} bytes`);
    this.name = "BodyTooLarge";
  }
}

/**
 * The body of an answer from outside as text, read at most `maxBytes` and no longer than `aborted` allows: a remote
 * party must not make one request hold megabytes or wait forever (an isolate has 128 MB). Throws `BodyTooLarge`, or
 * whatever the read or `aborted` threw; the reader is cancelled either way. The callers (outbound GETs, hooks, the
 * claims query) turn those into their own failures.
 */
export async function readBoundedText(
  response: Response,
  maxBytes: number,
  aborted: Promise<never>,
): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), aborted]);
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) throw new BodyTooLarge(maxBytes);
      chunks.push(value);
    }
  } catch (error) {
    reader.cancel().catch(() => {});
    throw error;
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}

/**
 * The first `maxBytes` of an answer as text, the rest left unread (the reader is cancelled): for answers kept only
 * as a clue, such as what a webhook receiver said, where a long body is no failure. A character cut in two at the
 * end decodes as U+FFFD. Throws whatever the read or `aborted` threw.
 */
export async function readTextPrefix(
  response: Response,
  maxBytes: number,
  aborted: Promise<never>,
): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return "";
  const bytes = new Uint8Array(maxBytes);
  let size = 0;
  try {
    while (size < maxBytes) {
      const { done, value } = await Promise.race([reader.read(), aborted]);
      if (done) break;
      const take = Math.min(value.byteLength, maxBytes - size);
      bytes.set(value.subarray(0, take), size);
      size += take;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
  return new TextDecoder().decode(bytes.subarray(0, size));
}
