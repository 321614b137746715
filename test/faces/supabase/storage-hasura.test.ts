import { env } from "cloudflare:test";
import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import type { SupabaseClient } from "@supabase/supabase-js";
import type { JSONWebKeySet } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { totpCode, totpStep } from "../../../src/auth/mfa/totp";
import { BUCKET_DEFAULTS } from "../../../src/storage";
import { PASSWORD } from "../../helpers";
import {
  GRAPHQL_URL,
  ADMIN_SECRET as HASURA_SECRET,
  hasuraStorageGraphql,
  PUBLIC_BUCKET,
} from "../../storage/hasura-storage-graphql";
import { allInShards, firstInAnyShard } from "../../support/shards";
import { STORAGE_FACE, setRules, signedInClient, storageClient, uniqueBucket } from "./storage-support";
import { PUBLISHABLE_KEY, SECRET_KEY, supabaseService } from "./support";

/**
 * The face's Storage under `STORAGE_PERMISSIONS=hasura` (contract supabase.md §3: "applies unchanged"), with the real
 * storage-js: every object call asks the app's Hasura through the core's questions (storage/hasura-permissions.ts),
 * here the GraphQL stand-in the storage API's tests use (test/storage/hasura-storage-graphql.ts), which checks the
 * forwarded token against the service's JWKS. Its permissions: users insert into `default` only (never HTML), see
 * their own files and those shared with their organisation, change and delete their own; the unauthorized role reads
 * `hasura-public`. The buckets' rules are not consulted: `default` is closed by its rules here, and still serves.
 */

const gql = hasuraStorageGraphql();
const HASURA_ENV = {
  STORAGE_PERMISSIONS: "hasura",
  OUTBOUND: { fetch: (input: RequestInfo | URL, init?: RequestInit) => gql.fetch(input, init) },
  HASURA_GRAPHQL_GRAPHQL_URL: GRAPHQL_URL,
  HASURA_GRAPHQL_ADMIN_SECRET: HASURA_SECRET,
  AUTH_MFA_ENABLED: "true",
  AUTH_MFA_TOTP_ISSUER: "Acme",
};
const svc = supabaseService(HASURA_ENV);
const service = storageClient(svc, SECRET_KEY).storage;
/** A bucket the users' insert permission does not name. */
const RESTRICTED = uniqueBucket("restricted");

const text = (body: string, name = "f.txt", type = "text/plain") => new File([body], name, { type });
const open = (url: string) => svc.request("GET", url);

/** A new signed-in user: their storage client, id, and access token (what Hasura must see). */
async function user() {
  const { client, userId } = await signedInClient(svc);
  const token = (await client.auth.getSession()).data.session!.access_token;
  return { client, userId, token, files: client.storage.from("default") };
}

/** What D1 and R2 hold for a file: its bucket and path, and how many objects are under its keys. */
async function stored(bucketId: string, id: string) {
  const record = await firstInAnyShard<{ bucket_id: string; path: string }>(
    "SELECT bucket_id, path FROM files WHERE id = ?",
    id,
  );
  const objects = (await env.FILES.list({ prefix: `${bucketId}/${id}` })).objects.length;
  return { record, objects };
}

/** Shares a file with a new organisation of `members` (the select permission's relationship). */
function share(fileId: string, ...members: string[]) {
  const organisation = crypto.randomUUID();
  for (const userId of members) gql.tables.members.push({ organisationId: organisation, userId });
  gql.tables.documents.set(fileId, organisation);
}

async function uploaded(files: ReturnType<SupabaseClient["storage"]["from"]>, path: string, body = "x") {
  const up = await files.upload(path, text(body));
  if (up.error) throw up.error;
  return up.data!.id;
}

describe("storage-js against the face under STORAGE_PERMISSIONS=hasura", () => {
  beforeAll(async () => {
    gql.trust((await (await svc.get("/.well-known/jwks.json")).json()) as JSONWebKeySet);
    expect((await service.createBucket(RESTRICTED)).error).toBeNull();
    // The stand-in's permissions name PUBLIC_BUCKET by its fixed id: another file of the pool may have made it first.
    const made = await service.createBucket(PUBLIC_BUCKET);
    if (made.error) expect(made.error).toMatchObject({ statusCode: "409" });
    // Closed by its rules: under Hasura they are not consulted, so every client call below is Hasura's to decide.
    await setRules(svc, "default", { upload: "none", read: "none", update: "none", delete: "none" });
  });
  // The pool's workerd (and its D1) is shared by the files it runs after this one: `default` gets its rules back.
  afterAll(() => setRules(svc, "default", { ...BUCKET_DEFAULTS.rules }));

  // Threat: an insert asked as the service (or the bucket's rules applied instead) would let a user put files where
  // the app's insert permission forbids; a refused upload leaving its bytes or record behind.
  it("upload: the insert permission asked with the user's GoTrue token; refused, Storage's 403 and nothing stored", async () => {
    const alice = await user();
    const before = gql.received.length;
    const up = await alice.files.upload(`${alice.userId}/a.txt`, text("hello"));
    expect(up.error).toBeNull();
    const [insert, complete] = gql.received.slice(before);
    expect(insert).toMatchObject({ role: "user", field: "insertFile" });
    expect(insert!.headers.get("authorization")).toBe(`Bearer ${alice.token}`);
    expect(complete).toMatchObject({ role: "admin", field: "updateFile" });
    expect(gql.tables.files.get(up.data!.id)).toMatchObject({
      bucketId: "default",
      name: "a.txt",
      uploadedByUserId: alice.userId,
      isUploaded: true,
    });
    expect(await (await alice.files.download(`${alice.userId}/a.txt`)).data!.text()).toBe("hello");

    for (const refused of [
      await alice.client.storage.from(RESTRICTED).upload("b.txt", text("b")),
      await alice.files.upload(`${alice.userId}/page.html`, text("<p>", "page.html", "text/html")),
    ]) {
      expect(refused.error).toMatchObject({
        status: 400,
        statusCode: "403",
        message: "new row violates row-level security policy",
      });
    }
    // The bucket named too: other files upload a `b.txt` of their own at the same time. Every shard counted (a count
    // answers a row in each, so the first shard's would be the only one read).
    const paths = await allInShards<{ n: number }>(
      "SELECT count(*) AS n FROM files WHERE (bucket_id = ? AND path = 'b.txt') OR path = ?",
      RESTRICTED,
      `${alice.userId}/page.html`,
    );
    expect(paths.map((shard) => shard.n)).toEqual(paths.map(() => 0));
    expect((await env.FILES.list({ prefix: `${RESTRICTED}/` })).objects).toEqual([]);
  });

  // Threat: a file the app hides read by path (download, info, exists, a signed URL), or its existence told apart
  // from a path that holds nothing.
  it("download, info, exists, createSignedUrl: what the select permission hides is not found; shared, it is served", async () => {
    const alice = await user();
    const bob = await user();
    const path = `${alice.userId}/secret.txt`;
    const id = await uploaded(alice.files, path, "secret");
    const missing = `${alice.userId}/none.txt`;
    for (const target of [path, missing]) {
      expect((await bob.files.download(target)).error).toMatchObject({ statusCode: "404" });
      expect((await bob.files.info(target)).error).toMatchObject({ statusCode: "404" });
      expect((await bob.files.exists(target)).data).toBe(false);
      expect((await bob.files.createSignedUrl(target, 60)).error).toMatchObject({ statusCode: "404" });
    }
    const answers = await Promise.all(
      [path, missing].map(async (target) =>
        (
          await svc.request("GET", `${STORAGE_FACE}/object/authenticated/default/${target}`, {
            headers: { apikey: PUBLISHABLE_KEY, authorization: `Bearer ${bob.token}` },
          })
        ).text(),
      ),
    );
    expect(answers[0]).toBe(answers[1]);

    share(id, bob.userId);
    expect(await (await bob.files.download(path)).data!.text()).toBe("secret");
    expect((await bob.files.info(path)).data).toMatchObject({ id, size: 6 });
    expect((await bob.files.exists(path)).data).toBe(true);
  });

  // Threat: a list naming files (or folders of files) the app's select permission hides.
  it("list: only what the select permission lets the caller see, folders included; a role without select sees none", async () => {
    const alice = await user();
    const bob = await user();
    await uploaded(alice.files, `${alice.userId}/a.txt`);
    await uploaded(alice.files, `${alice.userId}/sub/b.txt`);
    const shared = await uploaded(alice.files, `${alice.userId}/shared.txt`);
    await uploaded(bob.files, `${bob.userId}/c.txt`);

    const names = async (client: SupabaseClient, prefix = "") => {
      const { data, error } = await client.storage.from("default").list(prefix);
      expect(error).toBeNull();
      return data!.map((entry) => entry.name);
    };
    const before = gql.received.length;
    expect(await names(alice.client)).toEqual([alice.userId]);
    expect(gql.received.slice(before)).toMatchObject([
      { role: "user", field: "files", variables: { where: { bucketId: { _eq: "default" } } } },
    ]);
    expect(await names(alice.client, alice.userId)).toEqual(["sub", "a.txt", "shared.txt"]);
    expect(await names(bob.client)).toEqual([bob.userId]);
    expect(await names(bob.client, alice.userId)).toEqual([]);
    share(shared, bob.userId);
    expect((await names(bob.client)).sort()).toEqual([alice.userId, bob.userId].sort());
    expect(await names(bob.client, alice.userId)).toEqual(["shared.txt"]);
    // listV2 (Storage's list-v2) under the same select permission, flat and by folder.
    const v2 = bob.client.storage.from("default");
    const level = await v2.listV2({ with_delimiter: true });
    expect(level.data!.folders.map((f) => f.name).sort()).toEqual(
      [`${alice.userId}/`, `${bob.userId}/`].sort(),
    );
    const flat = await v2.listV2({ prefix: `${alice.userId}/` });
    expect(flat.data!.objects.map((o) => o.name)).toEqual([`${alice.userId}/shared.txt`]);
    // The unauthorized role may select `hasura-public` only; the role `me` has no select permission at all.
    expect(await names(storageClient(svc))).toEqual([]);
    expect((await storageClient(svc).storage.from("default").listV2()).data!.objects).toEqual([]);
    const asMe = await svc.request("POST", `${STORAGE_FACE}/object/list/default`, {
      headers: { apikey: PUBLISHABLE_KEY, authorization: `Bearer ${alice.token}`, "x-hasura-role": "me" },
      json: { prefix: alice.userId },
    });
    expect(await asMe.json()).toEqual([]);
  });

  // Threat: a list cut short without saying so (ids past the first statement's dropped), or one so large it is read
  // whole into memory.
  it("list: more ids than one D1 statement takes are all honoured; more than 10,000 visible files are refused", async () => {
    const carol = await user();
    const row = (id: string) => ({
      id,
      bucketId: "default",
      name: "ghost",
      mimeType: "text/plain",
      size: 1,
      etag: null,
      isUploaded: true,
      uploadedByUserId: carol.userId,
      metadata: null,
    });
    // Rows the app has and the service does not (they list nothing), before carol's one real file.
    for (let n = 0; n < 600; n++) {
      const id = crypto.randomUUID();
      gql.tables.files.set(id, row(id));
    }
    const real = await uploaded(carol.files, `${carol.userId}/real.txt`);
    const listed = await carol.files.list(carol.userId);
    expect(listed.data?.map((entry) => [entry.id, entry.name])).toEqual([[real, "real.txt"]]);
    for (let n = 0; n < 9_400; n++) {
      const id = crypto.randomUUID();
      gql.tables.files.set(id, row(id));
    }
    expect((await carol.files.list(carol.userId)).error).toMatchObject({
      statusCode: "400",
      message: expect.stringMatching(/more than 10000 files/),
    });
    for (const [id, file] of gql.tables.files) if (file.name === "ghost") gql.tables.files.delete(id);
  });

  // Threat: a user moving, replacing or removing a file the app lets them see but not change; a refusal that still
  // moved the record or removed the bytes.
  it("move, update, upsert, remove: refused without the update/delete permission, nothing changed; allowed, the app's row follows", async () => {
    const alice = await user();
    const bob = await user();
    const path = `${alice.userId}/doc.txt`;
    const id = await uploaded(alice.files, path, "original");
    share(id, bob.userId);
    const row = { ...gql.tables.files.get(id) };

    expect((await bob.files.move(path, `${bob.userId}/doc.txt`)).error).toMatchObject({
      statusCode: "403",
      message: "new row violates row-level security policy",
    });
    expect((await bob.files.update(path, text("changed"))).error).toMatchObject({ statusCode: "403" });
    expect((await bob.files.upload(path, text("changed"), { upsert: true })).error).toMatchObject({
      statusCode: "403",
    });
    expect((await bob.files.remove([path])).data).toEqual([]);
    expect(await stored("default", id)).toEqual({ record: { bucket_id: "default", path }, objects: 1 });
    expect(gql.tables.files.get(id)).toEqual(row);
    expect(await (await alice.files.download(path)).data!.text()).toBe("original");

    // Copying what he may see is his insert: a file of his own.
    const copy = await bob.files.copy(path, `${bob.userId}/copy.txt`);
    expect(copy.error).toBeNull();
    expect(await (await bob.files.download(`${bob.userId}/copy.txt`)).data!.text()).toBe("original");

    expect((await alice.files.update(path, text("second"))).error).toBeNull();
    expect(gql.tables.files.get(id)).toMatchObject({ size: 6 });
    const moved = `${alice.userId}/moved/doc.txt`;
    expect((await alice.files.move(path, moved)).error).toBeNull();
    expect(gql.tables.files.get(id)).toMatchObject({ name: "doc.txt", bucketId: "default" });
    expect((await stored("default", id)).record).toEqual({ bucket_id: "default", path: moved });
    // Onto a taken path: Hasura said yes, the record could not move (409), and the app's row is set back.
    const other = `${alice.userId}/other.txt`;
    await uploaded(alice.files, other, "other");
    const asked = gql.received.length;
    expect((await alice.files.move(moved, other)).error).toMatchObject({ statusCode: "409" });
    expect(gql.received.slice(asked).map((request) => `${request.role}:${request.field}`)).toEqual([
      "user:file",
      "user:updateFile",
      "admin:updateFile",
    ]);
    expect(gql.tables.files.get(id)).toMatchObject({ name: "doc.txt", bucketId: "default" });
    expect((await stored("default", id)).record).toEqual({ bucket_id: "default", path: moved });
    // To another bucket: the update permission's check is asked with the new bucket and name.
    const before = gql.received.length;
    const files = alice.client.storage.from("default");
    expect((await files.move(moved, "elsewhere.txt", { destinationBucket: RESTRICTED })).error).toBeNull();
    expect(gql.received[before + 1]).toMatchObject({
      role: "user",
      field: "updateFile",
      variables: { id, _set: { bucketId: RESTRICTED, name: "elsewhere.txt" } },
    });
    expect(gql.tables.files.get(id)).toMatchObject({ bucketId: RESTRICTED, name: "elsewhere.txt" });
    expect((await alice.client.storage.from(RESTRICTED).remove(["elsewhere.txt"])).data).toHaveLength(1);
    expect(await stored(RESTRICTED, id)).toEqual({ record: null, objects: 0 });
    expect(gql.tables.files.has(id)).toBe(false);
  });

  // Threat: a signed URL made for a file its maker may not read; a signed upload URL letting its holder insert
  // without the app's insert permission being asked.
  it("createSignedUrl(s) by a user who may read; createSignedUploadUrl: the service role's only", async () => {
    const alice = await user();
    const bob = await user();
    const path = `${alice.userId}/s.txt`;
    await uploaded(alice.files, path, "signed");
    const made = await alice.files.createSignedUrl(path, 60);
    expect(made.error).toBeNull();
    expect(await (await open(made.data!.signedUrl)).text()).toBe("signed");
    const many = await bob.files.createSignedUrls([path], 60);
    expect(many.data?.[0]).toMatchObject({ path, signedUrl: null });

    expect((await alice.files.createSignedUploadUrl(`${alice.userId}/u.txt`)).error).toMatchObject({
      statusCode: "403",
      message: expect.stringMatching(/service role/),
    });
    const byService = await service.from("default").createSignedUploadUrl("from-service/u.txt");
    expect(byService.error).toBeNull();
    const up = await storageClient(svc)
      .storage.from("default")
      .uploadToSignedUrl(byService.data!.path, byService.data!.token, text("u"));
    expect(up.error).toBeNull();
    const { data } = await service.from("default").info("from-service/u.txt");
    expect(gql.tables.files.get(data!.id)).toMatchObject({ name: "u.txt", uploadedByUserId: null });

    // A URL a user made while the bucket's rules decided (the same deployment before the switch) uploads nothing now.
    const { STORAGE_PERMISSIONS: _, ...rulesEnv } = HASURA_ENV;
    const rulesMode = supabaseService(rulesEnv);
    await setRules(rulesMode, RESTRICTED, {
      upload: "authenticated",
      read: "none",
      update: "none",
      delete: "none",
    });
    const before = storageClient(rulesMode, PUBLISHABLE_KEY, { Authorization: `Bearer ${alice.token}` });
    const old = await before.storage.from(RESTRICTED).createSignedUploadUrl("old.txt");
    expect(old.error).toBeNull();
    const late = await storageClient(svc)
      .storage.from(RESTRICTED)
      .uploadToSignedUrl(old.data!.path, old.data!.token, text("late"));
    expect(late.error).toMatchObject({ statusCode: "403", message: expect.stringMatching(/service role/) });
    expect((await service.from(RESTRICTED).exists("old.txt")).data).toBe(false);
  });

  // Threat: a bucket's public flag serving what the app's unauthorized role may not select, or a public file the
  // app exposes refused because of the bucket's own rules.
  // Threat: Hasura unreachable (never a yes, never a no) told per path as "does not exist", in a 200: the app tells its
  // user the files are gone. One path already answered Storage's 503; many paths answer it too.
  it("createSignedUrls with Hasura unreachable: Storage's 503 as for one path, not a per-path 'does not exist'", async () => {
    const { files, userId } = await user();
    const path = `${userId}/s.txt`;
    await uploaded(files, path, "signed");
    expect((await files.createSignedUrls([path], 60)).data?.[0]?.signedUrl).toBeTruthy();
    gql.setMode("down");
    const [one, many] = [await files.createSignedUrl(path, 60), await files.createSignedUrls([path], 60)];
    gql.setMode("ok");
    expect(one.error).toMatchObject({ status: 503 });
    expect(many.data).toBeNull();
    expect(many.error).toMatchObject({ status: 503 });
  });

  it("getPublicUrl: Hasura's unauthorized role decides, not the bucket's public flag", async () => {
    const flagged = uniqueBucket("pub");
    expect((await service.createBucket(flagged, { public: true })).error).toBeNull();
    // A path of this run's own in the shared PUBLIC_BUCKET.
    const path = `p-${crypto.randomUUID().slice(0, 8)}.txt`;
    for (const bucket of [flagged, PUBLIC_BUCKET]) {
      expect((await service.from(bucket).upload(path, text("public"))).error).toBeNull();
    }
    const readable = await open(service.from(PUBLIC_BUCKET).getPublicUrl(path).data.publicUrl);
    expect(readable.status).toBe(200);
    expect(await readable.text()).toBe("public");
    expect(readable.headers.get("cache-control")).toMatch(/private/);
    const hidden = await open(service.from(flagged).getPublicUrl(path).data.publicUrl);
    expect(await hidden.json()).toMatchObject({ statusCode: "404", message: "Object not found" });
  });

  // Threat: a password alone (an aal1 session owing its second factor) reaching the app's files, or taken for an
  // outage (Hasura answers such a token with an error).
  it("a pending-MFA (aal1) session's token: refused as Hasura refuses it, without asking", async () => {
    const alice = await user();
    const path = `${alice.userId}/mine.txt`;
    await uploaded(alice.files, path, "mine");
    const enrolled = await alice.client.auth.mfa.enroll({ factorType: "totp" });
    const { id: factorId, totp } = enrolled.data as { id: string; totp: { secret: string } };
    const code = totpCode(decodeBase32IgnorePadding(totp.secret), totpStep(Date.now()));
    expect((await alice.client.auth.mfa.challengeAndVerify({ factorId, code })).error).toBeNull();
    const { email } = (await alice.client.auth.getUser()).data.user!;
    const pending = storageClient(svc);
    expect((await pending.auth.signInWithPassword({ email: email!, password: PASSWORD })).error).toBeNull();
    const files = pending.storage.from("default");
    const before = gql.received.length;
    expect((await files.download(path)).error).toMatchObject({ statusCode: "404" });
    expect((await files.upload(`${alice.userId}/more.txt`, text("m"))).error).toMatchObject({
      statusCode: "403",
    });
    expect((await files.list(alice.userId)).data).toEqual([]);
    expect(gql.received.length).toBe(before);
  });

  // Threat: a resumable upload recording a file the app's insert permission refuses, or keeping its bytes.
  it("TUS resumable upload: the insert asked with the uploader's token when the last bytes are in", async () => {
    const alice = await user();
    const b64 = (value: string) => Buffer.from(value).toString("base64");
    const tus = async (bucketId: string, path: string) => {
      const headers = {
        apikey: PUBLISHABLE_KEY,
        authorization: `Bearer ${alice.token}`,
        "tus-resumable": "1.0.0",
      };
      const created = await svc.request("POST", `${STORAGE_FACE}/upload/resumable`, {
        headers: {
          ...headers,
          "upload-length": "5",
          "upload-metadata": `bucketName ${b64(bucketId)},objectName ${b64(path)},contentType ${b64("text/plain")}`,
        },
      });
      expect(created.status).toBe(201);
      return svc.request("PATCH", created.headers.get("location")!, {
        headers: { ...headers, "upload-offset": "0", "content-type": "application/offset+octet-stream" },
        body: new TextEncoder().encode("bytes"),
      });
    };
    const before = gql.received.length;
    expect((await tus("default", `${alice.userId}/t.txt`)).status).toBe(204);
    const [insert] = gql.received.slice(before);
    expect(insert).toMatchObject({ role: "user", field: "insertFile" });
    expect(insert!.headers.get("authorization")).toBe(`Bearer ${alice.token}`);
    expect(await (await alice.files.download(`${alice.userId}/t.txt`)).data!.text()).toBe("bytes");

    const refused = await tus(RESTRICTED, "t.txt");
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ message: "new row violates row-level security policy" });
    expect((await service.from(RESTRICTED).exists("t.txt")).data).toBe(false);
    expect((await env.FILES.list({ prefix: `${RESTRICTED}/` })).objects).toEqual([]);
  });

  // Threat: Hasura's silence taken as a yes (or a no): a 503 the client can retry, nothing served or stored.
  it("Hasura unreachable: Storage's 503 with Retry-After", async () => {
    const alice = await user();
    const path = `${alice.userId}/d.txt`;
    await uploaded(alice.files, path);
    gql.setMode("down");
    try {
      const response = await svc.request("GET", `${STORAGE_FACE}/object/authenticated/default/${path}`, {
        headers: { apikey: PUBLISHABLE_KEY, authorization: `Bearer ${alice.token}` },
      });
      expect(response.status).toBe(503);
      expect(response.headers.get("retry-after")).toBe("5");
      expect((await alice.files.upload(`${alice.userId}/e.txt`, text("e"))).error).toMatchObject({
        statusCode: "503",
      });
    } finally {
      gql.setMode("ok");
    }
    expect((await alice.files.exists(`${alice.userId}/e.txt`)).data).toBe(false);
  });

  // Threat: the service role's writes leaving the app's storage.files rows behind the files.
  it("the service role: upload, move, remove keep the app's rows in step", async () => {
    const files = service.from(RESTRICTED);
    const up = await files.upload("y.txt", text("y"));
    expect(up.error).toBeNull();
    expect(gql.tables.files.get(up.data!.id)).toMatchObject({ bucketId: RESTRICTED, name: "y.txt" });
    expect((await files.move("y.txt", "z/y2.txt")).error).toBeNull();
    expect(gql.tables.files.get(up.data!.id)).toMatchObject({ name: "y2.txt" });
    expect((await files.remove(["z/y2.txt"])).data).toHaveLength(1);
    expect(gql.tables.files.has(up.data!.id)).toBe(false);
  });
});
