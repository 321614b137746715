import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { PART_SIZE } from "../../src/storage/r2-writer";
import { NO_VERIFICATION, service, signUp } from "../helpers";
import { expectStorageError, md5Etag, STORAGE, svc, uploaded, uploadForm, type WireFile } from "./helpers";

/**
 * Uploads and replaces under attack or bad luck: bodies cut short, metadata[] that does not pair with file[],
 * two requests racing for one id, a delete landing during a replace, bytes vanishing under a record. Each case
 * names the threat; each checks the end state (records against bytes), not only the status.
 */

/** FILES with a gate: the first `put` whose key matches waits until `release()`; `reached` says it got there. */
function pausingFiles(match: (key: string) => boolean) {
  let release!: () => void;
  let reached!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const arrived = new Promise<void>((resolve) => (reached = resolve));
  let paused = false;
  const files = new Proxy(env.FILES, {
    get(target, property) {
      if (property === "put") {
        return async (key: string, ...rest: unknown[]) => {
          if (!paused && match(key)) {
            paused = true;
            reached();
            await gate;
          }
          return (target.put as (...args: unknown[]) => Promise<unknown>)(key, ...rest);
        };
      }
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { files, release, arrived };
}

/** FILES that counts multipart uploads created, completed and aborted. */
function countingFiles() {
  const calls = { created: 0, completed: 0, aborted: 0 };
  const files = new Proxy(env.FILES, {
    get(target, property) {
      if (property === "createMultipartUpload") {
        return async (...args: Parameters<R2Bucket["createMultipartUpload"]>) => {
          calls.created += 1;
          const upload = await target.createMultipartUpload(...args);
          return {
            uploadPart: upload.uploadPart.bind(upload),
            complete: (...a: Parameters<R2MultipartUpload["complete"]>) => {
              calls.completed += 1;
              return upload.complete(...a);
            },
            abort: () => {
              calls.aborted += 1;
              return upload.abort();
            },
          };
        };
      }
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { files, calls };
}

const fileCount = async () =>
  (await env.DB.prepare("SELECT count(*) AS n FROM files").first<{ n: number }>())!.n;
const objectKeys = async (prefix = "default/") =>
  (await env.FILES.list({ prefix })).objects.map((object) => object.key);

/** A multipart body that stops in the middle of its file part: no closing boundary. */
function truncatedBody(size: number): { body: Uint8Array; type: string } {
  const boundary = "----cut-short";
  const head = new TextEncoder().encode(
    `--${boundary}\r\nContent-Disposition: form-data; name="file[]"; filename="big.bin"\r\n` +
      "Content-Type: application/octet-stream\r\n\r\n",
  );
  const body = new Uint8Array(head.length + size);
  body.set(head);
  body.fill(7, head.length);
  return { body, type: `multipart/form-data; boundary=${boundary}` };
}

async function session() {
  return (await signUp(svc)).accessToken;
}

/** A new user's text file: its id and the owner's token. */
async function storedDocument(text: string): Promise<{ token: string; id: string }> {
  const token = await session();
  const [file] = await uploaded(uploadForm([{ bytes: text, name: "doc.txt", type: "text/plain" }]), token);
  return { token, id: file!.id };
}

describe("malformed uploads keep nothing", () => {
  it("a body cut off before its closing boundary is a 400; no record, no object, no open multipart upload", async () => {
    const token = await session();
    const { files, calls } = countingFiles();
    const s = service({ ...NO_VERIFICATION, FILES: files });
    const [filesBefore, objectsBefore] = [await fileCount(), await objectKeys()];
    for (const size of [1000, PART_SIZE + 1000]) {
      const { body, type } = truncatedBody(size);
      const response = await s.request("POST", `${STORAGE}/files`, {
        body,
        token,
        headers: { "content-type": type },
      });
      await expectStorageError(
        response.clone(),
        400,
        ((await response.json()) as { error: { message: string } }).error.message,
      );
      expect(response.status).toBe(400);
    }
    expect(await fileCount()).toBe(filesBefore);
    expect(await objectKeys()).toEqual(objectsBefore);
    // The 5 MiB + case started a multipart upload; it was aborted, not left to linger.
    expect(calls.created).toBe(1);
    expect(calls.aborted).toBe(1);
    expect(calls.completed).toBe(0);
  });

  it("metadata[] parts that do not pair with the file[] parts: 400 naming the extra part, nothing stored", async () => {
    const token = await session();
    const before = [await fileCount(), await objectKeys()];
    const post = (form: FormData) => svc.request("POST", `${STORAGE}/files`, { body: form, token });
    const meta = (name: string) => new Blob([JSON.stringify({ name })], { type: "application/json" });

    const twoForOne = new FormData();
    twoForOne.append("metadata[]", meta("a"), "");
    twoForOne.append("metadata[]", meta("b"), "");
    twoForOne.append("file[]", new Blob(["one"]), "one.txt");
    await expectStorageError(
      await post(twoForOne),
      400,
      "malformed multipart/form-data: metadata[] part 2 has no file[] part (1 sent)",
    );

    const twoForThree = new FormData();
    twoForThree.append("metadata[]", meta("a"), "");
    twoForThree.append("metadata[]", meta("b"), "");
    for (const name of ["1.txt", "2.txt", "3.txt"]) twoForThree.append("file[]", new Blob([name]), name);
    await expectStorageError(
      await post(twoForThree),
      400,
      "malformed multipart/form-data: file[] part 3 has no metadata[] part (2 sent before it)",
    );

    const late = new FormData();
    late.append("file[]", new Blob(["one"]), "one.txt");
    late.append("metadata[]", meta("a"), "");
    await expectStorageError(
      await post(late),
      400,
      "malformed multipart/form-data: metadata[] part 1 comes after its file[] part",
    );
    expect([await fileCount(), await objectKeys()]).toEqual(before);
  });
});

describe("races for one file", () => {
  it("two uploads of one client-chosen id: one 201, one 409, and the record serves the winner's bytes", async () => {
    const token = await session();
    const id = crypto.randomUUID();
    const gated = pausingFiles((key) => key === `default/${id}`);
    const s = service({ ...NO_VERIFICATION, FILES: gated.files });
    const upload = (text: string) =>
      s.request("POST", `${STORAGE}/files`, {
        body: uploadForm([{ bytes: text, name: "race.txt", type: "text/plain", metadata: { id } }]),
        token,
      });
    const first = upload("the first uploader's bytes");
    await gated.arrived;
    // The first upload holds the id and waits inside its write; the second is refused before writing anything.
    await expectStorageError(
      await upload("the second uploader's bytes"),
      409,
      `a file with id ${id} already exists`,
    );
    gated.release();
    const winner = await first;
    expect(winner.status).toBe(201);
    const [record] = ((await winner.json()) as { processedFiles: WireFile[] }).processedFiles;
    const download = await svc.request("GET", `${STORAGE}/files/${id}`, { token });
    const bytes = new Uint8Array(await download.arrayBuffer());
    expect(new TextDecoder().decode(bytes)).toBe("the first uploader's bytes");
    expect(record!.etag).toBe(await md5Etag(bytes));
  });

  it("two replaces at once: one wins, the other is a 409 whose bytes are gone; record and bytes agree", async () => {
    const { token, id } = await storedDocument("v1");
    const gated = pausingFiles((key) => key.startsWith(`default/${id}/`));
    const s = service({ ...NO_VERIFICATION, FILES: gated.files });
    const replace = (text: string) => {
      const form = new FormData();
      form.append("file", new Blob([text], { type: "text/plain" }), "doc.txt");
      return s.request("PUT", `${STORAGE}/files/${id}`, { body: form, token });
    };
    const slow = replace("slow replacement");
    await gated.arrived;
    const fast = await replace("fast replacement");
    expect(fast.status).toBe(200);
    gated.release();
    await expectStorageError(await slow, 409, "the file was changed by another request; try again");
    const download = await svc.request("GET", `${STORAGE}/files/${id}`, { token });
    const bytes = new Uint8Array(await download.arrayBuffer());
    expect(new TextDecoder().decode(bytes)).toBe("fast replacement");
    expect(download.headers.get("etag")).toBe(await md5Etag(bytes));
    // Only the current version's bytes remain: the first upload's and the loser's are removed.
    const record = await env.DB.prepare("SELECT object_key FROM files WHERE id = ?")
      .bind(id)
      .first<{ object_key: string }>();
    expect(await objectKeys(`default/${id}`)).toEqual([record!.object_key]);
  });

  it("a delete landing during a replace: the replace is a 404 and leaves no bytes behind", async () => {
    const { token, id } = await storedDocument("v1");
    const gated = pausingFiles((key) => key.startsWith(`default/${id}/`));
    const s = service({ ...NO_VERIFICATION, FILES: gated.files });
    const form = new FormData();
    form.append("file", new Blob(["v2"], { type: "text/plain" }), "doc.txt");
    const replacing = s.request("PUT", `${STORAGE}/files/${id}`, { body: form, token });
    await gated.arrived;
    expect((await svc.request("DELETE", `${STORAGE}/files/${id}`, { token })).status).toBe(204);
    gated.release();
    await expectStorageError(await replacing, 404, "file not found");
    expect(await objectKeys(`default/${id}`)).toEqual([]);
  });

  it("bytes gone from R2 under a live record: a 404, not a 500", async () => {
    const { token, id } = await storedDocument("here today");
    await env.FILES.delete(`default/${id}`);
    await expectStorageError(
      await svc.request("GET", `${STORAGE}/files/${id}`, { token }),
      404,
      "file not found",
    );
  });
});
