import { imageSize } from "image-size";
import { describe, expect, it } from "vitest";
import { signObjectToken } from "../../../src/storage";
import { testDeps } from "../../helpers";
import { jpeg } from "../../storage/fixtures";
import { setRules, signedInClient, storageClient, uniqueBucket } from "./storage-support";
import { SECRET_KEY, supabaseService } from "./support";

/**
 * URLs that carry their own credential, and image transformation, through the face (contract supabase.md §3): signed
 * URLs, signed upload URLs, public URLs and `render/image`, with the real storage-js. Each test names its methods.
 */

const svc = supabaseService();
const admin = storageClient(svc, SECRET_KEY).storage;

/** A URL storage-js made, opened as a browser would: no key, no token. */
const open = (url: string, method = "GET") => svc.request(method, url);

describe("storage-js URLs against the face", () => {
  // Threat: a signed URL reused for another object, or its token altered.
  it("createSignedUrl, createSignedUrls: the URL downloads without a key; another path or a changed token does not", async () => {
    const id = uniqueBucket();
    await admin.createBucket(id);
    await admin.from(id).upload("a.txt", new File(["signed"], "a.txt", { type: "text/plain" }));
    await admin.from(id).upload("b.txt", new File(["other"], "b.txt", { type: "text/plain" }));
    const { data, error } = await admin.from(id).createSignedUrl("a.txt", 60);
    expect(error).toBeNull();
    const response = await open(data!.signedUrl);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("signed");
    expect(response.headers.get("cache-control")).toMatch(/max-age=(59|60)/);

    const token = new URL(data!.signedUrl).searchParams.get("token")!;
    const elsewhere = await open(data!.signedUrl.replace("/a.txt?", "/b.txt?"));
    expect(elsewhere.status).toBe(400);
    expect(await elsewhere.json()).toMatchObject({ statusCode: "400", code: "InvalidSignature" });
    // One character changed mid-token (the last one may carry only padding bits, and may already be the new one).
    const middle = Math.floor(token.length / 2);
    const swapped = `${token.slice(0, middle)}${token[middle] === "A" ? "B" : "A"}${token.slice(middle + 1)}`;
    const altered = await open(data!.signedUrl.replace(token, swapped));
    expect(altered.status).toBe(400);

    // A token past its time (signed by the service, an hour ago): Storage's ExpiredToken, before any byte.
    const { config } = testDeps(svc.env, { now: Date.now() });
    const stale = await signObjectToken(config, {
      use: "download",
      url: `${id}/a.txt`,
      exp: Math.floor(Date.now() / 1000) - 3600,
    });
    const expired = await open(data!.signedUrl.replace(token, stale));
    expect(expired.status).toBe(400);
    expect(await expired.json()).toMatchObject({ statusCode: "400", code: "ExpiredToken" });
    // An upload token is no download token, even for the same path.
    const upload = await signObjectToken(config, {
      use: "upload",
      url: `${id}/a.txt`,
      exp: Math.floor(Date.now() / 1000) + 60,
    });
    expect((await open(data!.signedUrl.replace(token, upload))).status).toBe(400);

    const many = await admin.from(id).createSignedUrls(["a.txt", "missing.txt"], 60);
    expect(many.data?.[0]).toMatchObject({ path: "a.txt", error: null });
    expect(await (await open(many.data![0]!.signedUrl!)).text()).toBe("signed");
    expect(many.data?.[1]).toMatchObject({ path: "missing.txt", signedUrl: null });
    expect(many.data?.[1]?.error).toBeTruthy();
  });

  // Threat: a signed upload URL used for another path, or one made by someone the bucket's rules do not let upload.
  it("createSignedUploadUrl, uploadToSignedUrl: the maker's rules, the maker owns the file; anyone with the URL uploads once", async () => {
    const id = uniqueBucket();
    await admin.createBucket(id);
    const { client: alice, userId } = await signedInClient(svc);
    expect((await alice.storage.from(id).createSignedUploadUrl("x.txt")).error).toMatchObject({
      statusCode: "403",
    });
    await setRules(svc, id, { upload: "authenticated", read: "owner", update: "owner", delete: "owner" });

    const made = await alice.storage.from(id).createSignedUploadUrl(`${userId}/photo.txt`);
    expect(made.error).toBeNull();
    const stranger = storageClient(svc).storage.from(id);
    const wrong = await stranger.uploadToSignedUrl(
      "elsewhere.txt",
      made.data!.token,
      new File(["x"], "x.txt"),
    );
    expect(wrong.error).toMatchObject({ statusCode: "400" });
    const up = await stranger.uploadToSignedUrl(
      made.data!.path,
      made.data!.token,
      new File(["hi"], "p.txt", { type: "text/plain" }),
    );
    expect(up.error).toBeNull();
    expect(up.data).toMatchObject({ fullPath: `${id}/${userId}/photo.txt` });
    // The file is the maker's: her own-files rule lets her read it.
    expect(await (await alice.storage.from(id).download(`${userId}/photo.txt`)).data!.text()).toBe("hi");
    // Without upsert, the URL cannot replace what it uploaded.
    const again = await stranger.uploadToSignedUrl(
      made.data!.path,
      made.data!.token,
      new File(["x"], "x.txt"),
    );
    expect(again.error).toMatchObject({ statusCode: "409" });
  });

  it("getPublicUrl: a public bucket's file without a key; a private bucket's is not found", async () => {
    const pub = uniqueBucket("pub");
    const priv = uniqueBucket("priv");
    await admin.createBucket(pub, { public: true });
    await admin.createBucket(priv);
    for (const bucket of [pub, priv]) await admin.from(bucket).upload("p.txt", new File(["public"], "p.txt"));
    const ok = await open(admin.from(pub).getPublicUrl("p.txt").data.publicUrl);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe("public");
    const { data } = admin.from(pub).getPublicUrl("p.txt", { download: true });
    expect((await open(data.publicUrl)).headers.get("content-disposition")).toMatch(/^attachment/);
    const closed = await open(admin.from(priv).getPublicUrl("p.txt").data.publicUrl);
    expect(closed.status).toBe(400);
    expect(await closed.json()).toMatchObject({ statusCode: "404", message: "Object not found" });
    // Anonymous clients read a public bucket's files by the authenticated route too (its read rule is public).
    expect(await (await storageClient(svc).storage.from(pub).download("p.txt")).data!.text()).toBe("public");
  });

  it("download with transform, getPublicUrl with transform, createSignedUrl with transform: render/image resizes", async () => {
    const id = uniqueBucket("img");
    await admin.createBucket(id, { public: true });
    await admin.from(id).upload("photo.jpg", new File([jpeg(400, 300)], "photo.jpg", { type: "image/jpeg" }));
    const downloaded = await admin
      .from(id)
      .download("photo.jpg", { transform: { width: 100, format: "origin" } });
    expect(downloaded.error).toBeNull();
    const bytes = new Uint8Array(await downloaded.data!.arrayBuffer());
    expect(imageSize(bytes)).toMatchObject({ width: 100, height: 75, type: "jpg" });

    const publicUrl = admin.from(id).getPublicUrl("photo.jpg", { transform: { height: 150 } }).data.publicUrl;
    expect(publicUrl).toContain("/render/image/public/");
    const rendered = await open(publicUrl);
    expect(rendered.status).toBe(200);
    expect(imageSize(new Uint8Array(await rendered.arrayBuffer()))).toMatchObject({
      width: 200,
      height: 150,
    });

    const signed = await admin.from(id).createSignedUrl("photo.jpg", 60, { transform: { width: 40 } });
    expect(signed.data?.signedUrl).toContain("/render/image/sign/");
    const small = await open(signed.data!.signedUrl);
    expect(imageSize(new Uint8Array(await small.arrayBuffer()))).toMatchObject({ width: 40, height: 30 });
  });
});
