import { describe, expect, it } from "vitest";
import { MIN_CHUNK } from "../../../src/storage/resumable";
import { signUp } from "../../helpers";
import { STORAGE, uploadForm } from "../../storage/helpers";
import { STORAGE_FACE, setRules, signedInClient, storageClient, uniqueBucket } from "./storage-support";
import { SECRET_KEY, supabaseService } from "./support";

/**
 * Resumable uploads over TUS through the face (contract supabase.md §3: `/storage/v1/upload/resumable`, R2 multipart
 * underneath), spoken as tus-js-client speaks it with Supabase's settings (equal chunks, the headers below). The
 * file it makes is read back with storage-js's `download` and `info`.
 */

const svc = supabaseService();
const admin = storageClient(svc, SECRET_KEY).storage;

const b64 = (text: string) => Buffer.from(text).toString("base64");

function tus(
  method: string,
  url: string,
  token: string,
  headers: Record<string, string> = {},
  body?: Uint8Array,
) {
  return svc.request(method, url, {
    headers: { apikey: SECRET_KEY, authorization: `Bearer ${token}`, "tus-resumable": "1.0.0", ...headers },
    body,
  });
}

async function create(
  token: string,
  bucketId: string,
  path: string,
  length: number,
  extra: Record<string, string> = {},
) {
  return tus("POST", `${STORAGE_FACE}/upload/resumable`, token, {
    "upload-length": String(length),
    "upload-metadata": `bucketName ${b64(bucketId)},objectName ${b64(path)},contentType ${b64("application/x-test")},metadata ${b64('{"via":"tus"}')}`,
    ...extra,
  });
}

const patch = (url: string, token: string, offset: number, bytes: Uint8Array) =>
  tus(
    "PATCH",
    url,
    token,
    { "upload-offset": String(offset), "content-type": "application/offset+octet-stream" },
    bytes,
  );

async function md5Hex(bytes: Uint8Array) {
  return Buffer.from(await crypto.subtle.digest("MD5", bytes)).toString("hex");
}

describe("TUS resumable uploads against the face", () => {
  it("upload over TUS in equal parts: HEAD says the offset; the file is recorded with its MD5, owned by its uploader", async () => {
    const id = uniqueBucket("tus");
    await admin.createBucket(id);
    await setRules(svc, id, { upload: "authenticated", read: "owner", update: "owner", delete: "owner" });
    const { client, userId } = await signedInClient(svc);
    const token = (await client.auth.getSession()).data.session!.access_token;
    const data = new Uint8Array(MIN_CHUNK + 100).map((_, i) => (i * 7) & 255);
    const created = await create(token, id, `${userId}/big.bin`, data.length);
    expect(created.status).toBe(201);
    expect(created.headers.get("tus-resumable")).toBe("1.0.0");
    const url = created.headers.get("location")!;

    const first = await patch(url, token, 0, data.slice(0, MIN_CHUNK));
    expect(first.status).toBe(204);
    expect(first.headers.get("upload-offset")).toBe(String(MIN_CHUNK));
    const head = await tus("HEAD", url, token);
    expect(head.headers.get("upload-offset")).toBe(String(MIN_CHUNK));
    expect(head.headers.get("upload-length")).toBe(String(data.length));
    // Threat: two requests appending at one offset (a retry racing its original): the offset decides, once.
    expect((await patch(url, token, 0, data.slice(0, MIN_CHUNK))).status).toBe(409);

    const last = await patch(url, token, MIN_CHUNK, data.slice(MIN_CHUNK));
    expect(last.status).toBe(204);
    expect(last.headers.get("upload-offset")).toBe(String(data.length));
    expect((await tus("HEAD", url, token)).status).toBe(404);

    const files = client.storage.from(id);
    const info = await files.info(`${userId}/big.bin`);
    expect(info.data).toMatchObject({
      size: data.length,
      contentType: "application/x-test",
      metadata: { via: "tus" },
    });
    expect(info.data?.etag).toBe(`"${await md5Hex(data)}"`);
    const downloaded = new Uint8Array(await (await files.download(`${userId}/big.bin`)).data!.arrayBuffer());
    expect(downloaded.length).toBe(data.length);
    expect(await md5Hex(downloaded)).toBe(await md5Hex(data));
  });

  // Threat: an upload past the bucket's rules or limit, or another user continuing (or ending) someone's upload.
  it("upload over TUS: the bucket's rules and limit at creation; only its uploader continues it; termination", async () => {
    const closed = uniqueBucket("tus-closed");
    await admin.createBucket(closed, { public: false, fileSizeLimit: 1000 });
    const { client } = await signedInClient(svc);
    const token = (await client.auth.getSession()).data.session!.access_token;
    const refused = await create(token, closed, "x.bin", 10);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ statusCode: "403" });
    const service = SECRET_KEY;
    expect((await create(service, closed, "x.bin", 2000)).status).toBe(413);
    expect((await create(service, closed, "x.bin", 10, { "tus-resumable": "0.2.2" })).status).toBe(412);

    const open = uniqueBucket("tus-open");
    await admin.createBucket(open);
    await setRules(svc, open, { upload: "authenticated", read: "owner", update: "owner", delete: "owner" });
    const url = (await create(token, open, "y.bin", MIN_CHUNK + 10)).headers.get("location")!;
    const { client: other } = await signedInClient(svc);
    const otherToken = (await other.auth.getSession()).data.session!.access_token;
    expect((await tus("HEAD", url, otherToken)).status).toBe(404);
    expect((await patch(url, otherToken, 0, new Uint8Array(MIN_CHUNK))).status).toBe(404);
    // R2's parts must be equal and at least 5 MiB: a short middle part is refused before anything is kept.
    const short = await patch(url, token, 0, new Uint8Array(10));
    expect(short.status).toBe(400);
    expect((await tus("HEAD", url, token)).headers.get("upload-offset")).toBe("0");
    expect((await tus("DELETE", url, otherToken)).status).toBe(404);
    expect((await tus("DELETE", url, token)).status).toBe(204);
    expect((await tus("HEAD", url, token)).status).toBe(404);
  });

  // Threat: a TUS upload's bytes went under `<bucket>/<upload id>`, the key every upload of a client-chosen id writes,
  // and the upload's id is in its URL: another user's `POST /files` naming it in the same bucket wrote over the bytes
  // of the file the upload was recorded as.
  it("a file uploaded over TUS keeps its bytes when another upload names the TUS upload's id", async () => {
    const bucket = uniqueBucket("tus-id");
    await admin.createBucket(bucket);
    await setRules(svc, bucket, { upload: "authenticated", read: "owner", update: "owner", delete: "owner" });
    const { client, userId } = await signedInClient(svc);
    const token = (await client.auth.getSession()).data.session!.access_token;
    const data = new Uint8Array(1000).map((_, i) => (i * 13) & 255);
    const url = (await create(token, bucket, `${userId}/kept.bin`, data.length)).headers.get("location")!;
    expect((await patch(url, token, 0, data)).status).toBe(204);
    const uploadId = new URL(url).pathname.split("/").at(-1)!;
    const other = await signUp(svc);
    const named = await svc.request("POST", `${STORAGE}/files`, {
      body: uploadForm(
        [{ bytes: "another user's bytes", type: "text/plain", metadata: { id: uploadId } }],
        bucket,
      ),
      token: other.accessToken,
    });
    expect(named.status, await named.clone().text()).toBe(201);
    const downloaded = await client.storage.from(bucket).download(`${userId}/kept.bin`);
    expect(await md5Hex(new Uint8Array(await downloaded.data!.arrayBuffer()))).toBe(await md5Hex(data));
  });
});
