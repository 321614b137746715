/**
 * A request body as a client sends it, in 64 KiB chunks: `total` bytes of `bytes` repeated (or without end). It
 * counts what the Worker read and says whether the Worker cancelled the rest.
 */
export function countedBody(bytes: Uint8Array, total = bytes.length) {
  const seen = { read: 0, cancelled: false };
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (seen.read >= total) return controller.close();
      const offset = seen.read % bytes.length;
      const chunk = bytes.slice(offset, Math.min(offset + 65_536, bytes.length, offset + total - seen.read));
      seen.read += chunk.length;
      controller.enqueue(chunk);
    },
    cancel() {
      seen.cancelled = true;
    },
  });
  return { body, seen };
}
