// Helpers of the storage tests: requests to the storage API through the Worker, multipart bodies as nhost-js
// builds them, and the contract's error shape.
import { env } from "cloudflare:test";
import { expect } from "vitest";
import type { WireFile } from "../../src/storage/records";
import { NO_VERIFICATION, service } from "../helpers";

export type { WireFile };

export const svc = service(NO_VERIFICATION);
export const STORAGE = "http://localhost:8787/storage/v1";

export async function md5Etag(bytes: Uint8Array): Promise<string> {
  const stream = new crypto.DigestStream("MD5");
  const writer = stream.getWriter();
  await writer.write(bytes);
  await writer.close();
  return `"${[...new Uint8Array(await stream.digest)].map((b) => b.toString(16).padStart(2, "0")).join("")}"`;
}

export interface Upload {
  bytes: Uint8Array | string;
  name?: string;
  type?: string;
  metadata?: Record<string, unknown>;
}

/** A multipart body as nhost-js builds it: bucket-id, every metadata[] (as a Blob with an empty name), every file[]. */
export function uploadForm(uploads: Upload[], bucketId?: string, metadataAsField = false): FormData {
  const form = new FormData();
  if (bucketId) form.append("bucket-id", bucketId);
  for (const upload of uploads) {
    if (!upload.metadata) continue;
    const json = JSON.stringify(upload.metadata);
    if (metadataAsField) form.append("metadata[]", json);
    else form.append("metadata[]", new Blob([json], { type: "application/json" }), "");
  }
  for (const upload of uploads) {
    form.append("file[]", new Blob([upload.bytes], { type: upload.type ?? "" }), upload.name ?? "file.bin");
  }
  return form;
}

export const upload = (form: FormData, token?: string) =>
  svc.request("POST", `${STORAGE}/files`, { body: form, token });

export async function uploaded(form: FormData, token: string): Promise<WireFile[]> {
  const response = await upload(form, token);
  const body = (await response.json()) as { processedFiles: WireFile[] };
  if (response.status !== 201) throw new Error(`upload: ${response.status} ${JSON.stringify(body)}`);
  return body.processedFiles;
}

export const get = (id: string, headers: Record<string, string> = {}, token?: string, query = "") =>
  svc.request("GET", `${STORAGE}/files/${id}${query}`, { headers, token });

export async function expectStorageError(response: Response, status: number, message: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get("x-error")).toBe(message);
  if (response.headers.get("content-type")?.includes("json")) {
    expect(((await response.json()) as { error: { message: string } }).error.message).toBe(message);
  }
}

export const PNG = Uint8Array.from([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1,
  8, 0, 0, 0, 0, 0x3a, 0x7e, 0x9b, 0x55,
]);

/**
 * FILES with a gate: the first `put` (or `method`) whose key matches waits until `release()`; `arrived` says it got
 * there. A `delete` of several keys waits when one of them matches. `at: "after"`: the call is made first, and its
 * answer waits (the bytes are in R2, the request does not know it yet).
 */
export function pausingFiles(
  match: (key: string) => boolean,
  method: "put" | "delete" = "put",
  at: "before" | "after" = "before",
) {
  let release!: () => void;
  let reached!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const arrived = new Promise<void>((resolve) => (reached = resolve));
  let paused = false;
  const files = new Proxy(env.FILES, {
    get(target, property) {
      if (property === method) {
        return async (key: string | string[], ...rest: unknown[]) => {
          const call = () => (target[method] as (...args: unknown[]) => Promise<unknown>)(key, ...rest);
          if (paused || !(Array.isArray(key) ? key : [key]).some(match)) return call();
          paused = true;
          const answer = at === "after" ? await call() : undefined;
          reached();
          await gate;
          return at === "after" ? answer : call();
        };
      }
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { files, release, arrived };
}
