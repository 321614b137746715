import { WorkerEntrypoint } from "cloudflare:workers";
import { StorageError } from "../errors";
import { concat } from "../r2-writer";
import { MAX_INPUT_BYTES } from "./limits";
import type { ImageParams, OutputFormat } from "./params";
import { codecMemoryBytes, transformImage } from "./transform";

/**
 * The image transformer: a Worker of its own (`wrangler.images.toml`), reached only through the main Worker's
 * `IMAGE_TRANSFORMER` service binding. Its own isolate holds the codecs' WebAssembly memory (photon, libwebp,
 * libaom, libheif), which never shrinks, apart from argon2id's 65 MiB in the auth isolate: together they do not fit
 * in one isolate's 128 MiB (docs/decisions.md, "Image transformation memory"). Its only inputs are the source bytes,
 * streamed from R2 by the main Worker, and already validated parameters.
 */

export type TransformResult = { ok: true; bytes: Uint8Array } | { ok: false; message: string };

async function readAtMost(source: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  for await (const chunk of source) {
    length += chunk.length;
    if (length > limit) {
      await source.cancel().catch(() => {});
      throw new StorageError(
        400,
        `image manipulation parameters out of range: the image is larger than ${limit} bytes`,
      );
    }
    chunks.push(chunk);
  }
  return concat(chunks, length);
}

export class ImageTransformer extends WorkerEntrypoint {
  /** The client's mistakes (unreadable image, limits) come back as `ok: false` with the contract's message. */
  async transform(
    source: ReadableStream<Uint8Array>,
    params: ImageParams,
    format: OutputFormat,
  ): Promise<TransformResult> {
    try {
      return {
        ok: true,
        bytes: await transformImage(await readAtMost(source, MAX_INPUT_BYTES), params, format),
      };
    } catch (error) {
      if (error instanceof StorageError && error.status === 400) return { ok: false, message: error.message };
      throw error;
    }
  }

  /** The codecs' WebAssembly memory in this isolate, for the memory-budget test and for operators. */
  memory(): Promise<{ photon: number; webp: number; avif: number; heif: number }> {
    return codecMemoryBytes();
  }
}

export default {
  fetch: () =>
    Response.json(
      { error: "the image transformer answers only through its service binding" },
      { status: 404 },
    ),
} satisfies ExportedHandler;
