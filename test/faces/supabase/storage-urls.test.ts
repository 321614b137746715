import { env } from "cloudflare:test";
import { PhotonImage } from "@cf-wasm/photon";
import { decode as decodePng } from "fast-png";
import { imageSize } from "image-size";
import jpegJs from "jpeg-js";
import { describe, expect, it } from "vitest";
import { signObjectToken } from "../../../src/storage";
import heicUrl from "../../fixtures/heic/gradient-96x64.heic?inline";
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

const RED = [255, 0, 0];
const GREEN = [0, 255, 0];
const BLUE = [0, 0, 255];

/** A 400 × 200 PNG in three bands: red (x < 100), green (100 ≤ x < 300), blue: a crop and a stretch show. */
function bands(): Uint8Array {
  const [width, height] = [400, 200];
  const pixels = new Uint8Array(width * height * 4);
  for (let i = 0; i < width * height; i++) {
    const x = i % width;
    pixels.set([...(x < 100 ? RED : x < 300 ? GREEN : BLUE), 255], i * 4);
  }
  const image = new PhotonImage(pixels, width, height);
  try {
    return image.get_bytes();
  } finally {
    image.free();
  }
}

/** A PNG's size and the colour of pixel (x, y). */
function pixelsOf(bytes: Uint8Array) {
  const png = decodePng(bytes);
  const at = (x: number, y: number) => {
    const i = (y * png.width + x) * png.channels;
    return Array.from(png.data.slice(i, i + 3));
  };
  return { width: png.width, height: png.height, at };
}

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

  // Threat: an upsert URL made for an empty path, held until someone else stores a file there, replaces that file
  // although the bucket's update rule (`owner`) would refuse its maker a replace.
  it("uploadToSignedUrl with upsert replaces as its maker: not a file another user stored at the path since", async () => {
    const id = uniqueBucket();
    await admin.createBucket(id);
    await setRules(svc, id, { upload: "authenticated", read: "owner", update: "owner", delete: "owner" });
    const { client: alice, userId: aliceId } = await signedInClient(svc);
    const { client: bob } = await signedInClient(svc);
    const path = "shared/report.txt";
    const made = await alice.storage.from(id).createSignedUploadUrl(path, { upsert: true });
    expect(made.error).toBeNull();
    const text = (words: string) => new File([words], "r.txt", { type: "text/plain" });
    expect((await bob.storage.from(id).upload(path, text("bob's"))).error).toBeNull();

    const through = await storageClient(svc)
      .storage.from(id)
      .uploadToSignedUrl(path, made.data!.token, text("not"));
    expect(through.error).toMatchObject({ statusCode: "403" });
    expect(await (await bob.storage.from(id).download(path)).data!.text()).toBe("bob's");

    // Her own file at the path her URL replaces, as she could herself.
    const mine = await alice.storage
      .from(id)
      .createSignedUploadUrl(`own/${crypto.randomUUID()}.txt`, { upsert: true });
    const first = storageClient(svc).storage.from(id);
    expect((await first.uploadToSignedUrl(mine.data!.path, mine.data!.token, text("one"))).error).toBeNull();
    expect((await first.uploadToSignedUrl(mine.data!.path, mine.data!.token, text("two"))).error).toBeNull();
    expect(await (await alice.storage.from(id).download(mine.data!.path)).data!.text()).toBe("two");

    // Threat: a URL outliving its maker's standing. The holder uploads as the maker, so not once she is disabled.
    const later = await alice.storage.from(id).createSignedUploadUrl(`own/${crypto.randomUUID()}.txt`);
    const disabled = await svc.request("PATCH", `/admin/users/${aliceId}`, {
      headers: { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) },
      json: { disabled: true },
    });
    expect(disabled.status).toBe(200);
    const refused = await first.uploadToSignedUrl(later.data!.path, later.data!.token, text("x"));
    expect(refused.error).toMatchObject({ statusCode: "403" });
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

  // Storage's renderer (imgproxy) never enlarges, crops from the middle, and defaults `resize` to `cover`.
  it("download, createSignedUrl, getPublicUrl with transform.resize: cover crops the middle, fill stretches, contain fits", async () => {
    const id = uniqueBucket("fit");
    await admin.createBucket(id, { public: true });
    const up = await admin
      .from(id)
      .upload("bands.png", new File([bands()], "bands.png", { type: "image/png" }));
    expect(up.error).toBeNull();
    const box = { width: 100, height: 100, format: "origin" } as const;

    // cover: scaled to 200 × 100 (the box covered), the middle 100 × 100 kept: green to both edges.
    const cover = await admin.from(id).download("bands.png", { transform: { ...box, resize: "cover" } });
    expect(cover.error).toBeNull();
    const covered = pixelsOf(new Uint8Array(await cover.data!.arrayBuffer()));
    expect([covered.width, covered.height]).toEqual([100, 100]);
    for (const x of [0, 50, 99]) expect(covered.at(x, 50)).toEqual(GREEN);

    // fill: exactly the box, the aspect ratio not kept: all three bands, stretched.
    const fill = await admin
      .from(id)
      .createSignedUrl("bands.png", 60, { transform: { ...box, resize: "fill" } });
    const filled = pixelsOf(new Uint8Array(await (await open(fill.data!.signedUrl)).arrayBuffer()));
    expect([filled.width, filled.height]).toEqual([100, 100]);
    expect([filled.at(5, 90), filled.at(50, 10), filled.at(95, 50)]).toEqual([RED, GREEN, BLUE]);

    // contain: within the box, the aspect ratio kept.
    const containUrl = admin.from(id).getPublicUrl("bands.png", { transform: { ...box, resize: "contain" } });
    const contained = pixelsOf(new Uint8Array(await (await open(containUrl.data.publicUrl)).arrayBuffer()));
    expect([contained.width, contained.height]).toEqual([100, 50]);
    expect([contained.at(5, 25), contained.at(95, 25)]).toEqual([RED, BLUE]);

    // No resize: Storage's default, cover (the same variant). fill and cover of one size are different images: the
    // cache key has the fit (without it, fill above would have been served cover's cached variant).
    const plain = await open(admin.from(id).getPublicUrl("bands.png", { transform: box }).data.publicUrl);
    const byDefault = pixelsOf(new Uint8Array(await plain.arrayBuffer()));
    expect([byDefault.width, byDefault.height, ...byDefault.at(0, 50)]).toEqual([100, 100, ...GREEN]);
    const again = pixelsOf(new Uint8Array(await (await open(containUrl.data.publicUrl)).arrayBuffer()));
    expect([again.width, again.height]).toEqual([100, 50]);
    const variants = await env.FILES.list({ prefix: `_variants/${up.data!.id}/` });
    expect(variants.objects.map((o) => o.key.slice(o.key.lastIndexOf("-") + 1)).sort()).toEqual([
      "cover",
      "fill",
      "png",
    ]);

    // Never enlarged: cover keeps what the box holds of the image (300 × 200 of its middle), fill shrinks both sides
    // by what one would grow; one side given: cover follows the aspect ratio, fill keeps the other side.
    const sizes = [
      [{ width: 300, height: 300, resize: "cover" }, [300, 200]],
      [{ width: 800, height: 100, resize: "fill" }, [400, 50]],
      [{ width: 100, resize: "cover" }, [100, 50]],
      [{ width: 100, resize: "fill" }, [100, 200]],
    ] as const;
    for (const [transform, size] of sizes) {
      const { data } = await admin
        .from(id)
        .download("bands.png", { transform: { ...transform, format: "origin" } });
      const made = pixelsOf(new Uint8Array(await data!.arrayBuffer()));
      expect([made.width, made.height], JSON.stringify(transform)).toEqual(size);
    }
    const middle = await admin
      .from(id)
      .download("bands.png", { transform: { width: 300, height: 300, resize: "cover", format: "origin" } });
    const kept = pixelsOf(new Uint8Array(await middle.data!.arrayBuffer()));
    expect([kept.at(0, 100), kept.at(150, 100), kept.at(299, 100)]).toEqual([RED, GREEN, BLUE]);
  });

  // A HEIC photo is cropped and scaled in libheif's memory (downscale.ts), not photon's: the same geometry.
  it("download with transform.resize of a HEIC photo: cover keeps its middle, fill stretches", async () => {
    const id = uniqueBucket("heic");
    await admin.createBucket(id);
    const heic = Uint8Array.from(atob(heicUrl.slice(heicUrl.indexOf(",") + 1)), (char) => char.charCodeAt(0));
    await admin.from(id).upload("photo.heic", new File([heic], "photo.heic", { type: "image/heic" }));
    const made = async (resize: "cover" | "fill" | "contain") => {
      const { data, error } = await admin
        .from(id)
        .download("photo.heic", { transform: { width: 48, height: 48, resize, format: "origin" } });
      expect(error).toBeNull();
      return jpegJs.decode(new Uint8Array(await data!.arrayBuffer()), { useTArray: true });
    };
    const red = (image: { width: number; data: Uint8Array }, x: number, y: number) =>
      image.data[(y * image.width + x) * 4]! > 200 && image.data[(y * image.width + x) * 4 + 1]! < 80;
    // The 96 × 64 photo has a red block over its top-left quarter (48 × 32 × 0.75 = 36 × 24 once scaled).
    const cover = await made("cover");
    expect([cover.width, cover.height]).toEqual([48, 48]);
    // Scaled to 72 × 48, its middle 48 × 48 kept: the block's right part (x 12–18 of the scaled photo) is left.
    expect([red(cover, 2, 2), red(cover, 10, 3)]).toEqual([true, false]);
    const contain = await made("contain");
    expect([contain.width, contain.height, red(contain, 10, 3)]).toEqual([48, 32, true]);
    const fill = await made("fill");
    // Halved across, three quarters down: the block is 12 × 12, from the left edge (cover's is 6 wide).
    expect([fill.width, fill.height, red(fill, 9, 9), red(fill, 20, 5), red(cover, 9, 9)]).toEqual([
      48,
      48,
      true,
      false,
      false,
    ]);
  });

  it("render/image with a resize Storage does not know: its 400, nothing transformed", async () => {
    const id = uniqueBucket("fit");
    await admin.createBucket(id, { public: true });
    const up = await admin
      .from(id)
      .upload("bands.png", new File([bands()], "bands.png", { type: "image/png" }));
    const url = admin.from(id).getPublicUrl("bands.png", { transform: { width: 100, height: 100 } })
      .data.publicUrl;
    const refused = await open(`${url}&resize=stretch`);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({
      statusCode: "400",
      code: "InvalidRequest",
      error: "InvalidRequest",
      message: "querystring/resize must be equal to one of the allowed values",
    });
    expect((await env.FILES.list({ prefix: `_variants/${up.data!.id}/` })).objects).toHaveLength(0);
  });
});
