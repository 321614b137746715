// Uploads by nhost-js 3.x (`@nhost/nhost-js-3`, an alias of @nhost/nhost-js 3.3.1), the client @nhost/react and
// @nhost/nextjs build on, against `wrangler dev`. It sends each file[] before its metadata[] and bucket-id last; its
// upload hooks send file[], bucket-id, metadata[] (src/storage/upload-settle.ts). One file and several, to the
// default bucket and to another, downloaded back byte for byte.
import { createFileUploadMachine, NhostClient, uploadFilePromise } from "@nhost/nhost-js-3";
import { describe, expect, inject, it } from "vitest";
import { interpret } from "xstate";
import { authUrl, PASSWORD, serverUrl, verifiedUser } from "./client";

const storageUrl = `${serverUrl}/storage/v1`;
const BUCKET = "nhost-js-3";

/** A nhost-js 3.x client signed in as a new verified user, its session kept in memory (Node has no localStorage). */
async function signedIn() {
  const memory = new Map<string, string>();
  const nhost = new NhostClient({
    authUrl,
    storageUrl,
    graphqlUrl: `${serverUrl}/v1/graphql`,
    functionsUrl: `${serverUrl}/v1/functions`,
    autoSignIn: false,
    autoRefreshToken: false,
    clientStorageType: "custom",
    clientStorage: {
      getItem: (key: string) => memory.get(key) ?? null,
      setItem: (key: string, value: string) => void memory.set(key, value),
      removeItem: (key: string) => void memory.delete(key),
    },
  });
  const { email } = await verifiedUser("nhost-js-3");
  const { session, error } = await nhost.auth.signIn({ email, password: PASSWORD });
  expect(error).toBeNull();
  return { nhost, userId: session!.user.id, accessToken: session!.accessToken };
}

async function bucketForUsers() {
  const created = await fetch(`${storageUrl}/buckets`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-hasura-admin-secret": inject("adminSecret") },
    body: JSON.stringify({
      id: BUCKET,
      // Downloads carry it: a file's bucket, seen from outside.
      cacheControl: "max-age=123",
      rules: { upload: "authenticated", read: "owner", update: "owner", delete: "owner" },
    }),
  });
  expect([201, 409]).toContain(created.status);
}

const bytesOf = (size: number, seed: number) => new Uint8Array(size).map((_, i) => (i * seed) % 251);

async function downloaded(nhost: NhostClient, fileId: string): Promise<Uint8Array> {
  const { file, error } = await nhost.storage.download({ fileId });
  expect(error).toBeNull();
  return new Uint8Array(await file!.arrayBuffer());
}

describe("@nhost/nhost-js 3.x storage", () => {
  it("uploads one file with its id and name, to the default bucket and to another, and downloads it back", async () => {
    await bucketForUsers();
    const { nhost, userId } = await signedIn();
    const id = crypto.randomUUID();
    const bytes = bytesOf(300_000, 7);
    const one = await nhost.storage.upload({
      file: new File([bytes], "data.bin", { type: "application/octet-stream" }),
      id,
      name: "named.bin",
    });
    expect(one.error).toBeNull();
    expect(one.fileMetadata).toMatchObject({
      id,
      name: "named.bin",
      bucketId: "default",
      size: bytes.length,
      uploadedByUserId: userId,
    });
    expect(await downloaded(nhost, id)).toEqual(bytes);

    const other = await nhost.storage.upload({
      file: new File(["in another bucket"], "other.txt", { type: "text/plain" }),
      bucketId: BUCKET,
    });
    expect(other.error).toBeNull();
    expect(other.fileMetadata).toMatchObject({ name: "other.txt", bucketId: BUCKET, mimeType: "text/plain" });
    const { presignedUrl } = await nhost.storage.getPresignedUrl({ fileId: other.fileMetadata!.id });
    expect(await (await fetch(presignedUrl!.url)).text()).toBe("in another bucket");
  });

  it("uploads several files in one form, each file[] before its metadata[], and downloads them back", async () => {
    await bucketForUsers();
    const { nhost } = await signedIn();
    const ids = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    const contents = ids.map((_, i) => bytesOf(10_000 * (i + 1), i + 3));
    const formData = new FormData();
    for (const [i, id] of ids.entries()) {
      formData.append("file[]", new File([contents[i]!], `part-${i}.bin`, { type: "application/x-test" }));
      const entry = JSON.stringify({ id, name: `file-${i}.bin`, metadata: { i } });
      formData.append("metadata[]", new Blob([entry], { type: "application/json" }), "");
    }
    const { fileMetadata, error } = await nhost.storage.upload({ formData, bucketId: BUCKET });
    expect(error).toBeNull();
    const files = (fileMetadata as { processedFiles: { id: string; name: string; bucketId: string }[] })
      .processedFiles;
    expect(files.map(({ id, name, bucketId }) => ({ id, name, bucketId }))).toEqual(
      ids.map((id, i) => ({ id, name: `file-${i}.bin`, bucketId: BUCKET })),
    );
    for (const [i, id] of ids.entries()) expect(await downloaded(nhost, id)).toEqual(contents[i]);
  });

  it("uploads as @nhost/react's useFileUpload does (file[], bucket-id, metadata[])", async () => {
    await bucketForUsers();
    const { accessToken } = await signedIn();
    const id = crypto.randomUUID();
    const interpreter = interpret(createFileUploadMachine()).start();
    const result = await uploadFilePromise(
      {
        url: storageUrl,
        accessToken,
        file: new File(["from the hook"], "hook.txt", { type: "text/plain" }),
        id,
        name: "hook.txt",
        bucketId: BUCKET,
      },
      interpreter,
    );
    interpreter.stop();
    // The result's bucketId and name are the client's own (its machine reports the id as the bucket).
    expect(result).toMatchObject({ isUploaded: true, id });
    const download = await fetch(`${storageUrl}/files/${id}`, {
      headers: { authorization: `Bearer ${accessToken}` },
    });
    expect(download.headers.get("cache-control")).toContain("max-age=123");
    expect(download.headers.get("content-disposition")).toBe('inline; filename="hook.txt"');
    expect(await download.text()).toBe("from the hook");
  });
});
