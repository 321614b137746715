// Storage part of `npm run bench`: downloads, a range, a 304 and image resizes through the bundled Worker, each next
// to a baseline measured in the same run — a plain R2 read in a bare Worker for downloads, the storage app's own
// /healthz for the 304, and native libvips (`vipsthumbnail`, Debian's libvips-tools) for a cold resize.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PhotonImage } from "@cf-wasm/photon/node";
import { generateSecrets } from "../scripts/secrets.mjs";
import {
  applyMigrations,
  bundle,
  CONNECTIONS,
  DURATION,
  failOnUnexpectedAnswers,
  floorWorker,
  printTable,
  run,
  workerFromBundle,
} from "./lib.mjs";

const COLD_RUNS = Number(process.env.BENCH_COLD_RUNS ?? 8);

/** A 1280 × 960 photo-like JPEG (photon's input limit, 1.2 MP: src/storage/images/limits.ts) (gradients plus noise, so the codecs have real work). */
function photo() {
  const width = 1280;
  const height = 960;
  const pixels = new Uint8Array(width * height * 4);
  let seed = 7;
  for (let i = 0; i < width * height; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    const x = i % width;
    const y = Math.floor(i / width);
    const noise = seed % 24;
    pixels.set([(x / 8 + noise) & 255, (y / 6 + noise) & 255, ((x + y) / 14 + noise) & 255, 255], i * 4);
  }
  const image = new PhotonImage(pixels, width, height);
  const jpeg = image.get_bytes_jpeg(85);
  image.free();
  return jpeg;
}

async function upload(base, bytes, name, type) {
  const form = new FormData();
  form.append("bucket-id", "bench");
  form.append("file[]", new Blob([bytes], { type }), name);
  const response = await fetch(`${base}/files`, { method: "POST", body: form });
  if (response.status !== 201) throw new Error(`upload: ${response.status} ${await response.text()}`);
  return (await response.json()).processedFiles[0];
}

async function timed(url) {
  const start = performance.now();
  const response = await fetch(url);
  const body = new Uint8Array(await response.arrayBuffer());
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  return { ms: performance.now() - start, body };
}

/**
 * The photo as HEIC, as phones write it (8-bit 4:2:0), made by libheif's own encoder (`heif-enc`, Debian's
 * libheif-examples) when it is installed; null otherwise.
 */
function heicOf(jpeg, dir) {
  const input = join(dir, "photo-for-heic.jpg");
  const output = join(dir, "photo.heic");
  writeFileSync(input, jpeg);
  return spawnSync("heif-enc", ["-q", "80", "-o", output, input]).status === 0 ? readFileSync(output) : null;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

function vipsMs(input, output) {
  const times = [];
  for (let i = 0; i < COLD_RUNS; i++) {
    const start = performance.now();
    const result = spawnSync("vipsthumbnail", [input, "--size", "300x", "-o", output]);
    if (result.status !== 0) return null;
    times.push(performance.now() - start);
  }
  return median(times);
}

const dir = mkdtempSync(join(tmpdir(), "edge-auth-bench-storage-"));
bundle(join(dir, "build"));
const secrets = generateSecrets();
const mf = workerFromBundle(dir, { ...secrets, AUTH_RATE_LIMIT_ENABLE: "false" });
const floor = floorWorker();

try {
  const base = `${(await mf.ready).origin}/storage/v1`;
  const floorUrl = (await floor.ready).origin;
  await applyMigrations(mf);
  const created = await fetch(`${base}/buckets`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-hasura-admin-secret": secrets.AUTH_ADMIN_SECRET },
    body: JSON.stringify({
      id: "bench",
      rules: { upload: "public", read: "public", update: "public", delete: "public" },
    }),
  });
  if (created.status !== 201) throw new Error(`bucket: ${created.status} ${await created.text()}`);

  const megabyte = new Uint8Array(1024 * 1024);
  for (let i = 0; i < megabyte.length; i += 65_536) crypto.getRandomValues(megabyte.subarray(i, i + 65_536));
  const jpeg = photo();
  const big = await upload(base, megabyte, "1mb.bin", "application/octet-stream");
  const image = await upload(base, jpeg, "photo.jpg", "image/jpeg");
  const heic = heicOf(jpeg, dir);
  const heicImage = heic && (await upload(base, heic, "photo.heic", "image/heic"));

  // Cold resizes: each request a new variant (a different quality), after one warm-up that loads the codecs.
  await timed(`${base}/files/${image.id}?w=299`);
  await timed(`${base}/files/${image.id}?w=299&f=webp`);
  await timed(`${base}/files/${image.id}?w=299&f=avif`);
  const cold = {};
  for (const format of ["jpeg", "webp", "avif"]) {
    const times = [];
    for (let i = 0; i < COLD_RUNS; i++) {
      times.push((await timed(`${base}/files/${image.id}?w=300&q=${80 - i}&f=${format}`)).ms);
    }
    cold[format] = median(times);
  }
  // The HEIC photo: decoded by libheif in an instance of its own each time, out as JPEG (the default for HEIC).
  let coldHeic = null;
  if (heicImage) {
    await timed(`${base}/files/${heicImage.id}?w=299`);
    const times = [];
    for (let i = 0; i < COLD_RUNS; i++) {
      times.push((await timed(`${base}/files/${heicImage.id}?w=300&q=${80 - i}`)).ms);
    }
    coldHeic = median(times);
  }
  const variant = (await timed(`${base}/files/${image.id}?w=300&q=80&f=jpeg`)).body;

  // The floor Worker's own R2 holds the same bytes.
  const floorFiles = await floor.getR2Bucket("FILES");
  await floorFiles.put("1mb", megabyte);
  await floorFiles.put("variant", variant);

  const etag = (await fetch(`${base}/files/${big.id}`, { method: "HEAD" })).headers.get("etag");
  const results = {};
  for (const [key, name, options] of [
    ["r2", "floor: plain R2 get, 1 MB", { url: `${floorUrl}/r2/1mb` }],
    ["download", "download 1 MB: GET /files/{id}", { url: `${base}/files/${big.id}` }],
    [
      "r2range",
      "floor: plain R2 range get, 64 KiB",
      { url: `${floorUrl}/r2/1mb`, headers: { range: "bytes=0-65535" } },
    ],
    ["range", "range read 64 KiB", { url: `${base}/files/${big.id}`, headers: { range: "bytes=0-65535" } }],
    ["healthz", "baseline: GET /storage/v1/healthz", { url: `${base}/healthz` }],
    [
      "notModified",
      "304: If-None-Match",
      { url: `${base}/files/${big.id}`, headers: { "if-none-match": etag }, expectStatuses: [304] },
    ],
    ["r2variant", `floor: plain R2 get, ${variant.length} B`, { url: `${floorUrl}/r2/variant` }],
    [
      "cachedJpeg",
      "resize 1280→300 px JPEG q80, cached",
      { url: `${base}/files/${image.id}?w=300&q=80&f=jpeg` },
    ],
    [
      "cachedWebp",
      "resize 1280→300 px WebP q80, cached",
      { url: `${base}/files/${image.id}?w=300&q=80&f=webp` },
    ],
  ]) {
    results[key] = await run(name, options);
  }
  const baselineOf = {
    r2: "r2",
    download: "r2",
    r2range: "r2range",
    range: "r2range",
    healthz: "healthz",
    notModified: "healthz",
    r2variant: "r2variant",
    cachedJpeg: "r2variant",
    cachedWebp: "r2variant",
  };
  const keyOf = new Map(Object.entries(results).map(([key, value]) => [value, key]));
  printTable(
    `Storage: ${CONNECTIONS} connections, ${DURATION}s per scenario, workerd via Miniflare on loopback`,
    Object.values(results),
    (r) => results[baselineOf[keyOf.get(r)]],
  );
  failOnUnexpectedAnswers(Object.values(results));

  const input = join(dir, "photo.jpg");
  writeFileSync(input, jpeg);
  const vips = {
    jpeg: vipsMs(input, join(dir, "out.jpg[Q=80]")),
    webp: vipsMs(input, join(dir, "out.webp[Q=80]")),
    // Debian's libvips writes AVIF only when built with libheif's AV1 encoder: "unavailable" otherwise.
    avif: vipsMs(input, join(dir, "out.avif[Q=80]")),
  };
  console.log(
    `\nCold resize of a ${jpeg.length}-byte 1280×960 JPEG to 300 px wide, median of ${COLD_RUNS} runs\n`,
  );
  console.log("output        this service ms   vipsthumbnail ms   ratio");
  for (const format of ["jpeg", "webp", "avif"]) {
    const native = vips[format];
    console.log(
      `${format.padEnd(13)} ${cold[format].toFixed(0).padStart(15)} ${(native === null ? "unavailable" : native.toFixed(0)).padStart(18)} ${(native === null ? "–" : (cold[format] / native).toFixed(2)).padStart(7)}`,
    );
  }
  if (heic) {
    const native = vipsMs(join(dir, "photo.heic"), join(dir, "out-heic.jpg[Q=80]"));
    console.log(
      `\nCold resize of the same photo as HEIC (${heic.length} bytes, heif-enc -q 80) to a 300 px JPEG`,
    );
    console.log(
      `heic → jpeg   ${coldHeic.toFixed(0).padStart(15)} ${(native === null ? "unavailable" : native.toFixed(0)).padStart(18)} ${(native === null ? "–" : (coldHeic / native).toFixed(2)).padStart(7)}`,
    );
  } else {
    console.log("\nCold resize of a HEIC photo: heif-enc (Debian's libheif-examples) is not installed");
  }
} finally {
  await mf.dispose();
  await floor.dispose();
  rmSync(dir, { recursive: true, force: true });
}
