import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { NO_VERIFICATION, service, signUp } from "../helpers";
import { allInShards, routedD1 } from "../support/shards";
import { jpeg } from "./fixtures";
import { expectStorageError, get, STORAGE, svc, uploaded, uploadForm } from "./helpers";

const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };
const admin = (method: string, path: string, json?: unknown) =>
  svc.request(method, `${STORAGE}${path}`, { headers: ADMIN, json });

async function own(bytes: Uint8Array | string, type: string, name = "file", bucketId?: string) {
  const session = await signUp(svc);
  const [file] = await uploaded(uploadForm([{ bytes, type, name }], bucketId), session.accessToken);
  return { file: file!, token: session.accessToken };
}

describe("what a file answer lets a browser or a cache do", () => {
  // Threat: stored XSS. Browsers render more types as documents than html/svg/xml (rss, xsl, any +xml).
  it("every file answer is sandboxed, whatever its type", async () => {
    for (const type of [
      "application/rss+xml",
      "text/xsl",
      "application/x-foo+xml",
      "image/png",
      "text/plain",
    ]) {
      const { file, token } = await own("<x/>", type);
      const response = await get(file.id, {}, token);
      expect(response.headers.get("content-security-policy"), type).toBe("default-src 'none'; sandbox");
      expect(response.headers.get("x-content-type-options"), type).toBe("nosniff");
    }
  });

  // Threat: a CDN honouring Surrogate-Control serves one user's private file to the next caller.
  it("only answers that are the same for everyone may be kept by shared caches", async () => {
    await admin("POST", "/buckets", {
      id: "open-gallery",
      rules: { upload: "authenticated", read: "public", update: "owner", delete: "owner" },
    });
    const { file } = await own("public bytes", "text/plain", "p.txt", "open-gallery");
    const open = await get(file.id);
    expect(open.headers.get("cache-control")).toBe("max-age=3600");
    expect(open.headers.get("surrogate-control")).toBe("max-age=3600");
    const { file: mine, token } = await own("private bytes", "text/plain");
    const closed = await get(mine.id, {}, token);
    expect(closed.headers.get("cache-control")).toBe("private, max-age=3600");
    expect(closed.headers.get("surrogate-control")).toBe("no-store");
  });
});

describe("maintenance", () => {
  it("a bucket named `variants` keeps its records through delete-broken-metadata", async () => {
    await admin("POST", "/buckets", {
      id: "variants",
      rules: { upload: "authenticated", read: "owner", update: "owner", delete: "owner" },
    });
    const { file, token } = await own("kept", "text/plain", "k.txt", "variants");
    const listed = (await (await admin("POST", "/ops/list-broken-metadata")).json()) as {
      metadata: { id: string }[];
    };
    expect(listed.metadata.map((m) => m.id)).not.toContain(file.id);
    await admin("POST", "/ops/delete-broken-metadata");
    expect(await (await get(file.id, {}, token)).text()).toBe("kept");
  });

  it("delete-broken-metadata removes more records than D1 binds parameters in one statement", async () => {
    const now = Date.now();
    const ids = Array.from({ length: 120 }, () => crypto.randomUUID());
    await env.DB.batch(
      ids.map((id) =>
        env.DB.prepare(
          "INSERT INTO files (id, bucket_id, name, size, mime_type, etag, object_key, is_uploaded, created_at, updated_at) VALUES (?, 'default', 'gone', 1, 'text/plain', '\"x\"', ?, 1, ?, ?)",
        ).bind(id, `default/${id}`, now, now),
      ),
    );
    const deleted = await admin("POST", "/ops/delete-broken-metadata");
    expect(deleted.status).toBe(200);
    const gone = (await deleted.json()) as { metadata: { id: string }[] };
    expect(gone.metadata.map((m) => m.id)).toEqual(expect.arrayContaining(ids));
    const left = await allInShards<{ n: number }>(`SELECT count(*) AS n FROM files WHERE name = 'gone'`);
    expect(left.map(({ n }) => n)).toEqual(left.map(() => 0));
  });
});

describe("image transformation cost", () => {
  const variantCount = async (id: string) =>
    (await env.FILES.list({ prefix: `_variants/${id}/` })).objects.length;

  // Threat: CPU amplification. Parameters that produce the same output must not each cost a transformation.
  it("requests producing the same output share one variant: w above the image, float blur sigmas", async () => {
    const { file, token } = await own(jpeg(64, 48), "image/jpeg", "p.jpg");
    const etags = new Set<string>();
    for (const query of ["?w=64", "?w=100", "?w=4001", "?w=64&h=900", "?h=48", "?q=80&w=64"]) {
      const response = await get(file.id, {}, token, query);
      expect(response.status, query).toBe(200);
      etags.add(response.headers.get("etag")!);
    }
    expect(etags.size).toBe(1);
    expect(await variantCount(file.id)).toBe(1);
    for (const query of ["?w=32&b=1.001", "?w=32&b=1.2", "?w=32&b=0.75"]) {
      expect((await get(file.id, {}, token, query)).status, query).toBe(200);
    }
    expect(await variantCount(file.id)).toBe(2);
  });

  it("transformations that miss the cache are limited per file and per address; cached ones are not", async () => {
    const limited = service({
      ...NO_VERIFICATION,
      AUTH_RATE_LIMIT_ENABLE: "true",
      AUTH_RATE_LIMIT_TRANSFORM_FILE_BURST: "2",
    });
    const { file, token } = await own(jpeg(64, 48), "image/jpeg", "p.jpg");
    const at = (query: string) => limited.request("GET", `${STORAGE}/files/${file.id}${query}`, { token });
    expect((await at("?w=10")).status).toBe(200);
    expect((await at("?w=11")).status).toBe(200);
    const refused = await at("?w=12");
    await expectStorageError(refused.clone(), 429, "too many image transformations: try again later");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await at("?w=10")).status).toBe(200);
  });

  it("images stored before their size was recorded are still transformed (the transformer reads the header)", async () => {
    const { file, token } = await own(jpeg(64, 48), "image/jpeg", "p.jpg");
    await routedD1(file.id)
      .prepare("UPDATE files SET image_width = NULL, image_height = NULL WHERE id = ?")
      .bind(file.id)
      .run();
    const response = await get(file.id, {}, token, "?w=32");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("image/jpeg");
  });
});
