// Storage permissions from Hasura (contract move-in §5.1b): with STORAGE_PERMISSIONS=hasura every file operation is
// asked of the app's Hasura as Nhost Storage asks it, here a real GraphQL server (hasura-storage-graphql.ts) that
// checks the forwarded token against the service's JWKS and applies row permissions per role over tables the test
// changes. What is proved each time: Hasura's answer decides, and the record (D1) and the bytes (R2) change only
// after it said yes.
import { env } from "cloudflare:test";
import type { JSONWebKeySet } from "jose";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { signUpInEachShard } from "../db/shard-users";
import { NO_VERIFICATION, service, signUp, type WireSession } from "../helpers";
import { allD1, firstInAnyShard, testShards, userD1 } from "../support/shards";
import {
  ADMIN_SECRET,
  GRAPHQL_URL,
  hasuraStorageGraphql,
  PUBLIC_BUCKET,
  type Received,
} from "./hasura-storage-graphql";
import { expectStorageError, md5Etag, STORAGE, type WireFile } from "./helpers";

const gql = hasuraStorageGraphql();
const HASURA = {
  ...NO_VERIFICATION,
  OUTBOUND: { fetch: (input: RequestInfo | URL, init?: RequestInit) => gql.fetch(input, init) },
  HASURA_GRAPHQL_GRAPHQL_URL: GRAPHQL_URL,
  HASURA_GRAPHQL_ADMIN_SECRET: ADMIN_SECRET,
};
const svc = service({ ...HASURA, STORAGE_PERMISSIONS: "hasura" });
/** The same deployment with the default, STORAGE_PERMISSIONS=rules (the GraphQL endpoint still configured). */
const rulesSvc = service(HASURA);

/** A bucket the app's user role may not insert into (its insert check names `default` only). */
const RESTRICTED_BUCKET = "hasura-restricted";
const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };

type As = WireSession | "admin" | null;
const headersOf = (as: As): Record<string, string> =>
  as === "admin" ? ADMIN : as ? { authorization: `Bearer ${as.accessToken}` } : {};

function form(
  bytes: string,
  options: { id?: string; bucket?: string; type?: string; metadata?: unknown } = {},
) {
  const body = new FormData();
  if (options.bucket) body.append("bucket-id", options.bucket);
  if (options.id || options.metadata) {
    const entry = { id: options.id, name: "doc.txt", metadata: options.metadata };
    body.append("metadata[]", new Blob([JSON.stringify(entry)], { type: "application/json" }), "");
  }
  body.append("file[]", new Blob([bytes], { type: options.type ?? "text/plain" }), "doc.txt");
  return body;
}

const uploadAs = (as: As, body: FormData, to = svc) =>
  to.request("POST", `${STORAGE}/files`, { body, headers: headersOf(as) });
const getAs = (as: As, id: string, method = "GET", to = svc) =>
  to.request(method, `${STORAGE}/files/${id}`, { headers: headersOf(as) });
const presignAs = (as: As, id: string, to = svc) =>
  to.request("GET", `${STORAGE}/files/${id}/presignedurl`, { headers: headersOf(as) });
const deleteAs = (as: As, id: string, to = svc) =>
  to.request("DELETE", `${STORAGE}/files/${id}`, { headers: headersOf(as) });
function replaceAs(as: As, id: string, bytes: string, type = "text/plain", to = svc) {
  const body = new FormData();
  body.append("file", new Blob([bytes], { type }), "new.txt");
  return to.request("PUT", `${STORAGE}/files/${id}`, { body, headers: headersOf(as) });
}

async function uploadedAs(as: As, body: FormData, to = svc): Promise<WireFile> {
  const response = await uploadAs(as, body, to);
  const answer = (await response.json()) as { processedFiles: WireFile[] };
  if (response.status !== 201) throw new Error(`upload: ${response.status} ${JSON.stringify(answer)}`);
  return answer.processedFiles[0]!;
}

/** What D1 and R2 hold for a file id: its record, and every object under its keys. */
async function stored(id: string, bucket = "default") {
  // In whichever shard holds it (the uploader's, src/storage/file-shards.ts); none when it exists nowhere.
  const record = await firstInAnyShard<{ etag: string; object_key: string; is_uploaded: number }>(
    "SELECT etag, object_key, is_uploaded FROM files WHERE id = ?",
    id,
  );
  const objects = (await env.FILES.list({ prefix: `${bucket}/${id}` })).objects.map((object) => object.key);
  return { record, objects };
}

async function expectNothingStored(id: string, bucket = "default") {
  expect(await stored(id, bucket)).toEqual({ record: null, objects: [] });
}

const newRequests = (from: number): Received[] => gql.received.slice(from);

/** An organisation the app's tables know, with its members; files shared with it through `documents`. */
function organisation(...members: WireSession[]) {
  const id = crypto.randomUUID();
  for (const member of members) gql.tables.members.push({ organisationId: id, userId: member.user.id });
  return { share: (fileId: string) => gql.tables.documents.set(fileId, id) };
}

describe("storage permissions from Hasura", () => {
  beforeAll(async () => {
    // Hasura trusts the service's keys (its jwk_url): a token the service forwards must be the caller's own.
    gql.trust((await (await svc.get("/.well-known/jwks.json")).json()) as JSONWebKeySet);
    for (const id of [RESTRICTED_BUCKET, PUBLIC_BUCKET]) {
      const created = await svc.request("POST", `${STORAGE}/buckets`, { headers: ADMIN, json: { id } });
      expect([201, 409]).toContain(created.status);
    }
  });
  afterEach(() => gql.setMode("ok"));

  it("an upload the insert permission allows: 201, the app's row as Nhost writes it, the record and the bytes", async () => {
    const alice = await signUp(svc);
    const id = crypto.randomUUID();
    const before = gql.received.length;
    const file = await uploadedAs(alice, form("hello", { id, metadata: { k: 1 } }));
    const etag = await md5Etag(new TextEncoder().encode("hello"));
    expect(file).toMatchObject({ id, size: 5, etag, isUploaded: true, uploadedByUserId: alice.user.id });

    // Threat: an insert made with the admin secret would let anyone put rows (and files) where the app forbids it.
    // The insert runs as the caller, with the token the server verified against the service's JWKS, and sends what
    // hasura-storage's InsertFile sends; the uploader comes from the role's column preset, as in Nhost.
    const [insert, complete, ...rest] = newRequests(before);
    expect(rest).toEqual([]);
    expect(insert).toMatchObject({ role: "user", field: "insertFile" });
    expect(insert!.headers.get("authorization")).toBe(`Bearer ${alice.accessToken}`);
    expect(insert!.headers.get("x-hasura-admin-secret")).toBeNull();
    expect(insert!.variables).toEqual({
      object: { id, bucketId: "default", name: "doc.txt", mimeType: "text/plain", size: 5 },
    });
    // The row is completed as the service, as hasura-storage's PopulateMetadata does.
    expect(complete).toMatchObject({ role: "admin", field: "updateFile" });
    expect(complete!.headers.get("x-hasura-admin-secret")).toBe(ADMIN_SECRET);
    expect(gql.tables.files.get(id)).toEqual({
      id,
      bucketId: "default",
      name: "doc.txt",
      mimeType: "text/plain",
      size: 5,
      etag,
      isUploaded: true,
      uploadedByUserId: alice.user.id,
      metadata: { k: 1 },
    });

    const { record, objects } = await stored(id);
    expect(record).toMatchObject({ etag, is_uploaded: 1 });
    expect(objects).toEqual([record!.object_key]);
    expect(await (await getAs(alice, id)).text()).toBe("hello");
  });

  // nhost-js 3.x sends each file[] before its metadata[], and bucket-id last (test/storage/part-order.test.ts): the
  // bytes are staged, and Hasura is asked once the form is read, with the id, name and bucket the later parts gave.
  it("an upload in nhost-js 3.x's order: the insert is asked with the later parts' id, name and bucket", async () => {
    const alice = await signUp(svc);
    const late = (id: string, bucket: string) => {
      const body = new FormData();
      body.append("file[]", new Blob(["late"], { type: "text/plain" }), "doc.txt");
      const entry = JSON.stringify({ id, name: "late.txt", metadata: { k: 2 } });
      body.append("metadata[]", new Blob([entry], { type: "application/json" }), "");
      body.append("bucket-id", bucket);
      return body;
    };
    const id = crypto.randomUUID();
    const before = gql.received.length;
    const file = await uploadedAs(alice, late(id, "default"));
    expect(file).toMatchObject({ id, name: "late.txt", bucketId: "default", metadata: { k: 2 } });
    expect(newRequests(before)[0]!.variables).toEqual({
      object: { id, bucketId: "default", name: "late.txt", mimeType: "text/plain", size: 4 },
    });
    expect(gql.tables.files.get(id)).toMatchObject({
      id,
      bucketId: "default",
      name: "late.txt",
      isUploaded: true,
    });
    // The bytes stay where they were staged, under the id drawn before the metadata[] came.
    const { record } = await stored(id);
    expect(record).toMatchObject({ is_uploaded: 1 });
    expect((await env.FILES.head(record!.object_key))?.size).toBe(4);
    expect(await (await getAs(alice, id)).text()).toBe("late");

    // Refused for the bucket named last: nothing in D1, R2 (any key) or the app's table.
    const keys = async () => (await env.FILES.list()).objects.map((object) => object.key).sort();
    const keysBefore = await keys();
    const restricted = crypto.randomUUID();
    await expectStorageError(
      await uploadAs(alice, late(restricted, RESTRICTED_BUCKET)),
      403,
      "you are not authorized",
    );
    await expectNothingStored(restricted, RESTRICTED_BUCKET);
    expect(gql.tables.files.has(restricted)).toBe(false);
    expect(await keys()).toEqual(keysBefore);
  });

  it("an upload the insert permission refuses: 403, and nothing in D1, R2 or the app's table", async () => {
    const alice = await signUp(svc);
    // Threat: a user writing into a bucket the app keeps for others (the insert check names `default` only).
    const restricted = crypto.randomUUID();
    const refused = await uploadAs(alice, form("not here", { id: restricted, bucket: RESTRICTED_BUCKET }));
    await expectStorageError(refused, 403, "you are not authorized");
    await expectNothingStored(restricted, RESTRICTED_BUCKET);
    expect(gql.tables.files.has(restricted)).toBe(false);

    // Threat: an HTML page (script on the storage origin) the app's check forbids: the real MIME type is what is asked.
    const html = crypto.randomUUID();
    await expectStorageError(
      await uploadAs(alice, form("<script>", { id: html, type: "text/html" })),
      403,
      "you are not authorized",
    );
    await expectNothingStored(html);

    // Threat: an anonymous upload. No token, or one the service does not accept, is Hasura's unauthorized role:
    // no Authorization header is sent, and that role has no insert permission.
    const anonymous: Record<string, string>[] = [{}, { authorization: "Bearer not.a.token" }];
    for (const headers of anonymous) {
      const id = crypto.randomUUID();
      const before = gql.received.length;
      const response = await svc.request("POST", `${STORAGE}/files`, { body: form("x", { id }), headers });
      await expectStorageError(response, 403, "you are not authorized");
      const [asked] = newRequests(before);
      expect(asked).toMatchObject({ role: "public", field: "insertFile" });
      expect(asked!.headers.get("authorization")).toBeNull();
      await expectNothingStored(id);
    }
  });

  it("reads: a file the select permission does not show is not found; one it shows through an organisation is served", async () => {
    const [alice, bob, carol] = [await signUp(svc), await signUp(svc), await signUp(svc)];
    const shared = (await uploadedAs(alice, form("team notes"))).id;
    organisation(alice, bob).share(shared);
    organisation(carol);

    // A member of the file's organisation (a relationship in the app's tables) reads it.
    const read = await getAs(bob, shared);
    expect(read.status).toBe(200);
    expect(await read.text()).toBe("team notes");
    expect(read.headers.get("cache-control")).toMatch(/^private/);
    expect((await getAs(bob, shared, "HEAD")).status).toBe(200);

    // Threat: a user reading another organisation's file by id. Not visible is not found, as a missing file is.
    await expectStorageError(await getAs(carol, shared), 404, "file not found");
    expect((await getAs(carol, shared, "HEAD")).status).toBe(404);
    await expectStorageError(await getAs(null, shared), 404, "file not found");
    await expectStorageError(await getAs(carol, crypto.randomUUID()), 404, "file not found");
    // The app withdraws the share: the next read is refused (nothing is cached).
    gql.tables.documents.delete(shared);
    await expectStorageError(await getAs(bob, shared), 404, "file not found");
    expect((await getAs(alice, shared)).status).toBe(200);

    // Threat: a role the caller may not take. `me` has no permission on storage.files: asked as `me`, nothing shows.
    const asMe = await svc.request("GET", `${STORAGE}/files/${shared}`, {
      headers: { ...headersOf(alice), "x-hasura-role": "me" },
    });
    await expectStorageError(asMe, 404, "file not found");
    expect(gql.received.at(-1)).toMatchObject({ role: "me", field: "file" });
  });

  it("presigned URLs: refused as a read is; one minted for a reader downloads without asking Hasura", async () => {
    const [alice, bob, carol] = [await signUp(svc), await signUp(svc), await signUp(svc)];
    const file = await uploadedAs(alice, form("presigned bytes"));
    organisation(alice, bob).share(file.id);

    // Threat: a URL minted for a file the caller cannot see would hand it to anyone holding the URL.
    await expectStorageError(await presignAs(carol, file.id), 404, "file not found");
    await expectStorageError(await presignAs(null, file.id), 404, "file not found");

    const minted = await presignAs(bob, file.id);
    expect(minted.status).toBe(200);
    const { url } = (await minted.json()) as { url: string };
    // The URL is the credential, signed for someone Hasura let see the file (hasura-storage reads that row with the
    // admin secret): its contents ask nothing.
    const before = gql.received.length;
    const contents = await svc.request("GET", url);
    expect(contents.status).toBe(200);
    expect(await contents.text()).toBe("presigned bytes");
    expect(newRequests(before)).toEqual([]);
  });

  it("replace: refused is 403 with the bytes unchanged; the owner's replace changes the bytes and the app's row", async () => {
    const [alice, bob] = [await signUp(svc), await signUp(svc)];
    const file = await uploadedAs(alice, form("version one"));
    organisation(alice, bob).share(file.id);
    const rowBefore = { ...gql.tables.files.get(file.id)! };
    const original = await stored(file.id);

    // Threat: a member of the organisation overwriting a colleague's file they may only read.
    await expectStorageError(await replaceAs(bob, file.id, "bob's version"), 403, "you are not authorized");
    // Threat: the owner replacing their file with an HTML page the app's update check forbids.
    await expectStorageError(
      await replaceAs(alice, file.id, "<script>", "text/html"),
      403,
      "you are not authorized",
    );
    await expectStorageError(await replaceAs(null, file.id, "anyone"), 403, "you are not authorized");
    // The bytes, the record, R2 and the app's row are as they were; the refused bytes are gone.
    expect(await (await getAs(bob, file.id)).text()).toBe("version one");
    expect(await stored(file.id)).toEqual(original);
    expect(gql.tables.files.get(file.id)).toEqual(rowBefore);

    const before = gql.received.length;
    const replaced = await replaceAs(alice, file.id, "version two!");
    expect(replaced.status).toBe(200);
    const etag = await md5Etag(new TextEncoder().encode("version two!"));
    expect(newRequests(before).map((r) => `${r.role}:${r.field}`)).toEqual(["user:updateFile"]);
    expect(newRequests(before)[0]!.headers.get("authorization")).toBe(`Bearer ${alice.accessToken}`);
    expect(await (await getAs(bob, file.id)).text()).toBe("version two!");
    expect(gql.tables.files.get(file.id)).toMatchObject({
      etag,
      size: 12,
      isUploaded: true,
      name: "new.txt",
    });
    expect((await stored(file.id)).record).toMatchObject({ etag });
  });

  it("delete: refused is 403 and the file stays downloadable; allowed, it is gone from D1, R2 and the app's table", async () => {
    const [alice, bob] = [await signUp(svc), await signUp(svc)];
    const file = await uploadedAs(alice, form("keep me"));
    organisation(alice, bob).share(file.id);

    // Threat: a user deleting a file that is not theirs (they may read it, not delete it).
    await expectStorageError(await deleteAs(bob, file.id), 403, "you are not authorized");
    await expectStorageError(await deleteAs(null, file.id), 403, "you are not authorized");
    expect(await (await getAs(bob, file.id)).text()).toBe("keep me");
    expect(gql.tables.files.has(file.id)).toBe(true);

    expect((await deleteAs(alice, file.id)).status).toBe(204);
    expect(gql.received.at(-1)).toMatchObject({ role: "user", field: "deleteFile" });
    expect(gql.tables.files.has(file.id)).toBe(false);
    await expectNothingStored(file.id);
    await expectStorageError(await getAs(alice, file.id), 404, "file not found");
  });

  it.each(["down", "500", "not-json", "not-graphql", "internal-error"] as const)(
    "Hasura %s: 503 in the storage error shape, nothing written, nothing removed",
    async (mode) => {
      const alice = await signUp(svc);
      const kept = await uploadedAs(alice, form("still here"));
      gql.setMode(mode);
      // Threat: an outage taken as a yes hands files out and lets anyone write; taken as a no it looks like a refusal
      // or a missing file. It is neither: a 503 to retry, and never a 500.
      const id = crypto.randomUUID();
      const upload = await uploadAs(alice, form("new", { id }));
      await expectStorageError(upload, 503, "the service cannot answer this right now; try again shortly");
      expect(upload.headers.get("retry-after")).toBe("5");
      await expectNothingStored(id);
      expect(gql.tables.files.has(id)).toBe(false);
      await expectStorageError(
        await getAs(alice, kept.id),
        503,
        "the service cannot answer this right now; try again shortly",
      );
      expect((await presignAs(alice, kept.id)).status).toBe(503);
      expect((await replaceAs(alice, kept.id, "changed")).status).toBe(503);
      expect((await deleteAs(alice, kept.id)).status).toBe(503);
      gql.setMode("ok");
      expect(await (await getAs(alice, kept.id)).text()).toBe("still here");
      expect(gql.tables.files.get(kept.id)).toMatchObject({ etag: kept.etag });
    },
  );

  it("gives up after 2 s: a Hasura that never answers is a 503, not a hung request", async () => {
    const alice = await signUp(svc);
    gql.setMode("hang");
    const id = crypto.randomUUID();
    const started = Date.now();
    await expectStorageError(
      await uploadAs(alice, form("slow", { id })),
      503,
      "the service cannot answer this right now; try again shortly",
    );
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(1_900);
    expect(elapsed).toBeLessThan(5_000);
    await expectNothingStored(id);
  });

  it("a failure after Hasura inserted the row: the row goes again, and nothing is half-written", async () => {
    const alice = await signUp(svc);
    // Completing the row (as the service) fails after the caller's insert succeeded.
    gql.setMode("500", (request) => request.role === "admin" && request.field === "updateFile");
    const id = crypto.randomUUID();
    const before = gql.received.length;
    expect((await uploadAs(alice, form("half", { id }))).status).toBe(503);
    // Threat: a row in the app's table for a file that does not exist (the app lists it, its downloads fail).
    expect(newRequests(before).map((r) => `${r.role}:${r.field}`)).toEqual([
      "user:insertFile",
      "admin:updateFile",
      "admin:deleteFile",
    ]);
    expect(gql.tables.files.has(id)).toBe(false);
    await expectNothingStored(id);
    gql.setMode("ok");

    // A malformed upload (a metadata[] part with no file[] part, found after the first file was stored and its row
    // inserted and completed) keeps nothing: the row goes with the record and the bytes.
    const stranded = crypto.randomUUID();
    const malformed = form("stranded", { id: stranded });
    malformed.append("metadata[]", new Blob(["{}"], { type: "application/json" }), "");
    const refused = await uploadAs(alice, malformed);
    expect(refused.status).toBe(400);
    expect(gql.asked().slice(-3)).toEqual(["user:insertFile", "admin:updateFile", "admin:deleteFile"]);
    expect(gql.tables.files.has(stranded)).toBe(false);
    await expectNothingStored(stranded);

    // An id the service already holds (uploaded under the bucket rules, so Hasura has no row for it): Hasura lets the
    // insert through, the record cannot be written, and the row goes again. Threat: a client-chosen id overwriting
    // another file's bytes.
    const taken = await uploadedAs(alice, form("first owner", { id: crypto.randomUUID() }), rulesSvc);
    const clash = await uploadAs(alice, form("second", { id: taken.id }));
    await expectStorageError(clash, 409, `a file with id ${taken.id} already exists`);
    expect(gql.tables.files.has(taken.id)).toBe(false);
    expect(await (await getAs(alice, taken.id, "GET", rulesSvc)).text()).toBe("first owner");
    expect((await stored(taken.id)).objects).toEqual([`default/${taken.id}`]);
  });

  it("the admin secret reads without asking, and writes as the service so the app's row stays in step", async () => {
    const alice = await signUp(svc);
    const file = await uploadedAs(alice, form("private"));
    let before = gql.received.length;
    expect(await (await getAs("admin", file.id)).text()).toBe("private");
    expect((await presignAs("admin", file.id)).status).toBe(200);
    expect(newRequests(before)).toEqual([]);

    // Threat: the service's own admin secret (AUTH_ADMIN_SECRET) sent on to a third party. What Hasura receives is
    // HASURA_GRAPHQL_ADMIN_SECRET, and no caller's header.
    before = gql.received.length;
    const id = crypto.randomUUID();
    const published = await uploadedAs("admin", form("for everyone", { id, bucket: PUBLIC_BUCKET }));
    expect(published.uploadedByUserId).toBeUndefined();
    for (const request of newRequests(before)) {
      expect(request.role).toBe("admin");
      expect(request.headers.get("x-hasura-admin-secret")).toBe(ADMIN_SECRET);
      expect(request.headers.get("authorization")).toBeNull();
    }
    expect(gql.tables.files.get(id)).toMatchObject({ bucketId: PUBLIC_BUCKET, isUploaded: true });
    // Hasura's unauthorized role reads the public bucket (no Authorization sent): so does an anonymous download.
    expect(await (await getAs(null, id)).text()).toBe("for everyone");

    expect((await deleteAs("admin", file.id)).status).toBe(204);
    expect(gql.tables.files.has(file.id)).toBe(false);
    await expectNothingStored(file.id);
  });

  it("STORAGE_PERMISSIONS=rules (the default) never asks GraphQL, even with HASURA_GRAPHQL_GRAPHQL_URL set", async () => {
    const alice = await signUp(rulesSvc);
    const before = gql.received.length;
    const file = await uploadedAs(alice, form("rules"), rulesSvc);
    expect((await getAs(alice, file.id, "GET", rulesSvc)).status).toBe(200);
    expect((await presignAs(alice, file.id, rulesSvc)).status).toBe(200);
    expect((await replaceAs(alice, file.id, "rules 2", "text/plain", rulesSvc)).status).toBe(200);
    // The bucket's rules decide: the default bucket's read rule is the owner.
    const bob = await signUp(rulesSvc);
    expect((await getAs(bob, file.id, "GET", rulesSvc)).status).toBe(404);
    expect((await deleteAs(alice, file.id, rulesSvc)).status).toBe(204);
    expect(newRequests(before)).toEqual([]);
    expect(gql.tables.files.has(file.id)).toBe(false);
  });

  // Threat (several shards, src/storage/file-shards.ts): under Hasura the record is written after the app's row, so
  // an id the app's table no longer has (removed there by hand) but another shard's record does must still be refused,
  // and the row this upload inserted must go again.
  it("uploads of users in each shard land in their own; an id another shard's record holds is refused", async () => {
    const [first, second] = await signUpInEachShard(svc);
    const id = crypto.randomUUID();
    await uploadedAs(first!, form("first", { id }));
    const holding = async () =>
      (
        await Promise.all(
          allD1().map((d1) => d1.prepare("SELECT 1 AS one FROM files WHERE id = ?").bind(id).first()),
        )
      ).flatMap((row, index) => (row ? [index] : []));
    expect(await holding()).toEqual([testShards().indexOfUser(first!.user.id)]);

    gql.tables.files.delete(id);
    await expectStorageError(
      await uploadAs(second!, form("second", { id })),
      409,
      `a file with id ${id} already exists`,
    );
    expect(gql.tables.files.has(id)).toBe(false);
    expect(await holding()).toEqual([testShards().indexOfUser(first!.user.id)]);
    expect(await (await getAs("admin", id)).text()).toBe("first");

    const own = await uploadedAs(second!, form("own"));
    expect(await (await getAs(second!, own.id)).text()).toBe("own");
    const { record } = await stored(own.id);
    expect(record).toMatchObject({ is_uploaded: 1 });
    expect(
      await userD1(second!.user.id).prepare("SELECT 1 AS one FROM files WHERE id = ?").bind(own.id).first(),
    ).not.toBeNull();
  });
});
