import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { failingR2, failingShards } from "../../support/faults";
import { STORAGE_FACE, setRules, signedInClient, storageClient, uniqueBucket } from "./storage-support";
import { SECRET_KEY, supabaseService } from "./support";

/**
 * The face's Storage under D1 and R2 faults (contract supabase.md §1: faults of D1 or R2 are 503). Threat: a database
 * or bucket fault answered as a 500 with its internals, or an upload half made (a record without its bytes, or the
 * path taken by nothing) that the app cannot retry.
 */

const admin = storageClient(supabaseService(), SECRET_KEY).storage;

const upload = (svc: ReturnType<typeof supabaseService>, bucketId: string, path: string) =>
  svc.request("POST", `${STORAGE_FACE}/object/${bucketId}/${path}`, {
    headers: { apikey: SECRET_KEY, "content-type": "text/plain" },
    body: "bytes",
  });

describe("storage-js upload against the face under faults", () => {
  it("upload: each D1 statement failing is Storage's 503 with Retry-After, and the retry uploads the file", async () => {
    const id = uniqueBucket("faults");
    await admin.createBucket(id);
    const watched = failingShards(env, { after: Number.POSITIVE_INFINITY });
    expect((await upload(supabaseService(watched.bindings), id, "seen.txt")).status).toBe(200);
    expect(watched.fault.seen.length).toBeGreaterThan(2);
    for (let step = 0; step < watched.fault.seen.length; step++) {
      const context = `step ${step}: ${watched.fault.seen[step]!.slice(0, 80)}`;
      const path = `step-${step}.txt`;
      const broken = supabaseService(failingShards(env, { after: step, times: 1 }).bindings);
      const answer = await upload(broken, id, path);
      if (answer.status !== 200) {
        const text = await answer.text();
        expect(answer.status, `${context}: ${text}`).toBe(503);
        expect(Number(answer.headers.get("retry-after")), context).toBeGreaterThan(0);
        expect(JSON.parse(text), context).toMatchObject({ statusCode: "503" });
        expect(text, context).not.toMatch(/D1_ERROR|\bat \S+:\d+/);
      }
      // Whatever the fault left, the app's retry (upsert) stores the file, and it reads back whole.
      const retried = await admin.from(id).upload(path, new File(["bytes"], path), { upsert: true });
      expect(retried.error, context).toBeNull();
      expect(await (await admin.from(id).download(path)).data!.text(), context).toBe("bytes");
    }
    // An upload per D1 statement of the upload, each failing once, then retried: dozens of uploads.
  }, 30_000);

  // The signed upload reads its maker's row before the upload (a URL of a user disabled since uploads nothing): that
  // read, and every other statement, failing is a 503, and the URL's retry (an upsert URL, as an app retrying would
  // make) uploads the file whole.
  it("uploadToSignedUrl: each D1 statement failing (the maker's read first) is Storage's 503; the retry uploads", async () => {
    const id = uniqueBucket("signedfaults");
    await admin.createBucket(id);
    await setRules(supabaseService(), id, {
      upload: "authenticated",
      read: "owner",
      update: "owner",
      delete: "owner",
    });
    const { client: maker } = await signedInClient(supabaseService());
    const put = (svc: ReturnType<typeof supabaseService>, path: string, token: string) =>
      svc.request("PUT", `${STORAGE_FACE}/object/upload/sign/${id}/${path}?token=${token}`, {
        headers: { "content-type": "text/plain" },
        body: "bytes",
      });
    const urlFor = async (path: string) =>
      (await maker.storage.from(id).createSignedUploadUrl(path, { upsert: true })).data!.token;
    const watched = failingShards(env, { after: Number.POSITIVE_INFINITY });
    expect((await put(supabaseService(watched.bindings), "seen.txt", await urlFor("seen.txt"))).status).toBe(
      200,
    );
    expect(watched.fault.seen.some((sql) => /from "users"/.test(sql))).toBe(true);
    for (let step = 0; step < watched.fault.seen.length; step++) {
      const context = `step ${step}: ${watched.fault.seen[step]!.slice(0, 80)}`;
      const path = `step-${step}.txt`;
      const token = await urlFor(path);
      const answer = await put(
        supabaseService(failingShards(env, { after: step, times: 1 }).bindings),
        path,
        token,
      );
      if (answer.status !== 200) {
        const text = await answer.text();
        expect(answer.status, `${context}: ${text}`).toBe(503);
        expect(JSON.parse(text), context).toMatchObject({ statusCode: "503" });
      }
      expect((await put(supabaseService(), path, token)).status, context).toBe(200);
      expect(await (await maker.storage.from(id).download(path)).data!.text(), context).toBe("bytes");
    }
  }, 30_000);

  it("upload and download: R2 failing is Storage's 503", async () => {
    const id = uniqueBucket("r2");
    await admin.createBucket(id);
    await admin.from(id).upload("there.txt", new File(["x"], "there.txt"));
    const broken = supabaseService({ FILES: failingR2(env.FILES).binding });
    expect((await upload(broken, id, "new.txt")).status).toBe(503);
    const download = await broken.request("GET", `${STORAGE_FACE}/object/${id}/there.txt`, {
      headers: { apikey: SECRET_KEY },
    });
    expect(download.status).toBe(503);
    expect(await download.json()).toMatchObject({ statusCode: "503" });
  });

  // Threat: a listing or a cache purge answered as a 500 with D1's or R2's internals, or a purge that says "success"
  // while the cached images are still there.
  it("listV2 with D1 failing and purgeCache with R2 failing: Storage's 503, and the retry works", async () => {
    const id = uniqueBucket("faults-v2");
    await admin.createBucket(id);
    await admin.from(id).upload("a/one.txt", new File(["x"], "one.txt"));
    const listing = (svc: ReturnType<typeof supabaseService>) =>
      svc.request("POST", `${STORAGE_FACE}/object/list-v2/${id}`, {
        headers: {
          apikey: SECRET_KEY,
          authorization: `Bearer ${SECRET_KEY}`,
          "content-type": "application/json",
        },
        body: JSON.stringify({ prefix: "a/" }),
      });
    const broken = await listing(supabaseService(failingShards(env, { after: 0 }).bindings));
    expect(broken.status).toBe(503);
    const text = await broken.text();
    expect(JSON.parse(text)).toMatchObject({ statusCode: "503" });
    expect(text).not.toMatch(/D1_ERROR|\bat \S+:\d+/);
    expect((await listing(supabaseService())).status).toBe(200);

    const purge = (svc: ReturnType<typeof supabaseService>) =>
      svc.request("DELETE", `${STORAGE_FACE}/cdn/${id}/a/one.txt?transformations=true`, {
        headers: { apikey: SECRET_KEY, authorization: `Bearer ${SECRET_KEY}` },
      });
    const refused = await purge(supabaseService({ FILES: failingR2(env.FILES).binding }));
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ statusCode: "503" });
    expect((await purge(supabaseService())).status).toBe(200);
  });
});
