import { describe, expect, it } from "vitest";
import { DRAIN_LIMIT } from "../../../src/lib/refused-body";
import { countedBody } from "../../support/counted-body";
import { STORAGE_FACE, signedInClient, storageClient, uniqueBucket, userBucket } from "./storage-support";
import { PUBLISHABLE_KEY, SECRET_KEY, supabaseService } from "./support";

// Threat: an upload the face refuses before reading its bytes (no such bucket, a key that exists, a policy that
// refuses the caller) is answered while the client is still sending. Its raw body was left locked and unread (the
// stream handed to the core was never consumed), so through wrangler dev's proxy, whose own drain cannot read a locked
// body, a large upload got a 500 "Network connection lost" instead of Storage's error, in two requests of three at
// 8 MB; a body cancelled mid-send is the same lost connection (lib/refused-body.ts). The face now reads past a
// refused body up to a bound, as the Nhost face does for a refused form (test/storage/races-and-breakage.test.ts), and
// cancels only a longer one.

const svc = supabaseService();
const admin = storageClient(svc, SECRET_KEY).storage;
const THREE_MB = new Uint8Array(3 * 1024 * 1024).fill(7);
const SERVICE = { apikey: SECRET_KEY, authorization: `Bearer ${SECRET_KEY}` };

/** Storage's error as the face answers it: HTTP 400 with the status it means in `statusCode`. */
async function expectStorageApiError(response: Response, statusCode: string, code: string) {
  expect(response.status).toBe(400);
  expect(await response.json()).toMatchObject({ statusCode, code });
}

const rawUpload = (path: string, body: ReadableStream<Uint8Array>, headers: Record<string, string>) =>
  svc.request("POST", `${STORAGE_FACE}/object/${path}`, {
    headers: { ...headers, "content-type": "application/x-test" },
    body,
  });

describe("the face's uploads refused before their body is read", () => {
  it("a 3 MB raw upload refused early is read to its end before Storage's error goes", async () => {
    const bucket = uniqueBucket("refused");
    expect((await admin.createBucket(bucket)).error).toBeNull();
    expect((await admin.from(bucket).upload("taken.bin", new Uint8Array([1]).buffer)).error).toBeNull();
    // Refused part-way: the core stops reading at the bucket's limit, and the rest is read past.
    const small = uniqueBucket("refused-small");
    expect((await admin.createBucket(small, { public: false, fileSizeLimit: 1024 * 1024 })).error).toBeNull();
    const anonymous = { apikey: PUBLISHABLE_KEY, authorization: `Bearer ${PUBLISHABLE_KEY}` };
    // Buckets are closed to clients by default (Supabase's RLS with no policy): the anonymous caller is refused.
    const cases: [string, string, Record<string, string>, string, string][] = [
      ["an unknown bucket", "no-such-bucket/a.bin", SERVICE, "404", "NoSuchBucket"],
      ["a key that exists", `${bucket}/taken.bin`, SERVICE, "409", "KeyAlreadyExists"],
      ["a caller the bucket's policy refuses", `${bucket}/new.bin`, anonymous, "403", "AccessDenied"],
      ["a file over the bucket's limit", `${small}/big.bin`, SERVICE, "413", "EntityTooLarge"],
    ];
    for (const [what, path, headers, statusCode, code] of cases) {
      const { body, seen } = countedBody(THREE_MB);
      const response = await rawUpload(path, body, headers);
      expect({ what, ...seen }).toEqual({ what, read: THREE_MB.length, cancelled: false });
      await expectStorageApiError(response, statusCode, code);
    }
    // Nothing of the refused uploads was kept: the one object is the first.
    const listed = await admin.from(bucket).list();
    expect(listed.data?.map((entry) => entry.name)).toEqual(["taken.bin"]);
  });

  it("a refused raw upload whose body never ends is answered: read past up to a bound, then cancelled", async () => {
    const { body, seen } = countedBody(new Uint8Array(65_536), Number.POSITIVE_INFINITY);
    await expectStorageApiError(
      await rawUpload("no-such-bucket/a.bin", body, SERVICE),
      "404",
      "NoSuchBucket",
    );
    expect(seen.cancelled).toBe(true);
    expect(seen.read).toBeGreaterThan(DRAIN_LIMIT);
    // The chunks the stream queues ahead, besides the bound.
    expect(seen.read).toBeLessThan(DRAIN_LIMIT + 1024 * 1024);
  });

  it("a JSON body streamed past 64 KB is Storage's 413, read past rather than cut off", async () => {
    const { body, seen } = countedBody(THREE_MB);
    const response = await svc.request("POST", `${STORAGE_FACE}/object/list/no-such-bucket`, {
      headers: { ...SERVICE, "content-type": "application/json" },
      body,
    });
    await expectStorageApiError(response, "413", "EntityTooLarge");
    expect(seen).toEqual({ read: THREE_MB.length, cancelled: false });
  });

  it("a TUS chunk longer than the upload's rest is 413, read past rather than cut off", async () => {
    const bucket = await userBucket("tus-refused");
    const { client, userId } = await signedInClient(svc);
    const token = (await client.auth.getSession()).data.session!.access_token;
    const tusHeaders = { ...SERVICE, authorization: `Bearer ${token}`, "tus-resumable": "1.0.0" };
    const b64 = (text: string) => Buffer.from(text).toString("base64");
    const created = await svc.request("POST", `${STORAGE_FACE}/upload/resumable`, {
      headers: {
        ...tusHeaders,
        "upload-length": "1000",
        "upload-metadata": `bucketName ${b64(bucket)},objectName ${b64(`${userId}/small.bin`)}`,
      },
    });
    expect(created.status).toBe(201);
    const { body, seen } = countedBody(THREE_MB);
    const response = await svc.request("PATCH", created.headers.get("location")!, {
      headers: { ...tusHeaders, "upload-offset": "0", "content-type": "application/offset+octet-stream" },
      body,
    });
    expect(response.status).toBe(413);
    expect(seen).toEqual({ read: THREE_MB.length, cancelled: false });
  });
});
