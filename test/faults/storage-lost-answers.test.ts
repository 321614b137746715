// An upload's 503 after D1 or R2 did part of the work: each statement of the upload failing before it ran, and after
// it ran (D1 applied it, then the connection dropped: the answer is lost, the write is not). Threat: the 503 asks for
// a retry, and the retry is refused 409 ("The resource already exists", "a file with id … already exists") by what
// the failed attempt left (its reservation, its path's claim, or a file made visible whose bytes were removed), so the
// client cannot tell whether its file is there; or an undo wide enough to remove what another upload wrote.
import { env } from "cloudflare:test";
import type { JSONWebKeySet } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { CLAIM_WINDOW_MS, claim, ownerOf } from "../../src/db/directory";
import { fileEntry } from "../../src/storage/file-shards";
import { pathEntry } from "../../src/storage/object-paths";
import { signUpInEachShard } from "../db/shard-users";
import { STORAGE_FACE, uniqueBucket, userBucket } from "../faces/supabase/storage-support";
import { PUBLISHABLE_KEY, SECRET_KEY, supabaseService } from "../faces/supabase/support";
import { NO_VERIFICATION, service } from "../helpers";
import {
  GRAPHQL_URL,
  ADMIN_SECRET as HASURA_ADMIN_SECRET,
  hasuraStorageGraphql,
} from "../storage/hasura-storage-graphql";
import { pausingFiles, STORAGE, uploadForm } from "../storage/helpers";
import { failingR2, failingShards, wrapD1 } from "../support/faults";
import { allInShards, testShards } from "../support/shards";

const BYTES = "the bytes of a file uploaded once";
const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };
type Svc = ReturnType<typeof service>;

/** storage-js's `upload` without upsert: the service role's, or a user's (their token). */
const faceUpload = (svc: Svc, bucketId: string, path: string, token?: string) =>
  svc.request("POST", `${STORAGE_FACE}/object/${bucketId}/${path}`, {
    headers: {
      apikey: token ? PUBLISHABLE_KEY : SECRET_KEY,
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      "content-type": "text/plain",
    },
    body: BYTES,
  });

/** What is at a path: its records in every shard, the bucket's objects in R2, and who holds the path's claim. */
async function pathState(bucketId: string, path: string) {
  const records = await allInShards<{ id: string; is_uploaded: number }>(
    "SELECT id, is_uploaded FROM files WHERE bucket_id = ? AND path = ?",
    bucketId,
    path,
  );
  const objects = (await env.FILES.list({ prefix: `${bucketId}/` })).objects.length;
  return { records, objects, claimedBy: (await ownerOf(testShards(), pathEntry(bucketId, path))) ?? null };
}

const readBack = async (bucketId: string, path: string) =>
  (
    await supabaseService().request("GET", `${STORAGE_FACE}/object/${bucketId}/${path}`, {
      headers: { apikey: SECRET_KEY, authorization: `Bearer ${SECRET_KEY}` },
    })
  ).text();

describe("the face's upload: a 503 leaves nothing, and the same upload retried stores one file", () => {
  for (const when of ["before", "after"] as const) {
    it(`each D1 statement failing ${when} it ran, for the service role and a user in each shard`, async () => {
      const users = await signUpInEachShard(service(NO_VERIFICATION));
      const callers = [undefined, ...users.map((session) => session.accessToken)];
      let faults = 0;
      for (const token of callers) {
        const bucketId = await userBucket("lost");
        const watched = failingShards(env, { after: Number.POSITIVE_INFINITY });
        expect(
          (await faceUpload(supabaseService(watched.bindings), bucketId, "seen.txt", token)).status,
        ).toBe(200);
        const userId = token ? users.find((s) => s.accessToken === token)!.user.id : undefined;
        for (let step = 0; step < watched.fault.seen.length; step++) {
          const context = `${userId ?? "service role"}, step ${step} (${when}): ${watched.fault.seen[step]!.slice(0, 80)}`;
          const path = `step-${step}.txt`;
          const { objects } = await pathState(bucketId, path);
          const failing = failingShards(env, { after: step, times: 1, when }).bindings;
          const answer = await faceUpload(supabaseService(failing), bucketId, path, token);
          if (answer.status === 200) continue;
          expect(answer.status, `${context}: ${await answer.text()}`).toBe(503);
          faults++;
          // Nothing of the attempt: no record, no bytes; a user's own claim may stay (their retry takes it).
          expect(await pathState(bucketId, path), context).toEqual({
            records: [],
            objects,
            claimedBy: userId === undefined ? null : expect.toBeOneOf([null, userId]),
          });
          const retried = await faceUpload(supabaseService(), bucketId, path, token);
          expect(retried.status, `${context}: ${await retried.clone().text()}`).toBe(200);
          const after = await pathState(bucketId, path);
          expect(after.records, context).toEqual([{ id: expect.any(String), is_uploaded: 1 }]);
          expect(after.objects, context).toBe(objects + 1);
          expect(await readBack(bucketId, path), context).toBe(BYTES);
        }
      }
      expect(faults).toBeGreaterThan(10);
    }, 120_000);
  }

  it("R2 failing after it stored the bytes: 503, no record, no bytes; the retry stores one file", async () => {
    const bucketId = await userBucket("lost");
    const { binding } = failingR2(env.FILES, { match: /^put$/, when: "after", times: 1 });
    expect((await faceUpload(supabaseService({ FILES: binding }), bucketId, "r2.txt")).status).toBe(503);
    expect(await pathState(bucketId, "r2.txt")).toEqual({ records: [], objects: 0, claimedBy: null });
    expect((await faceUpload(supabaseService(), bucketId, "r2.txt")).status).toBe(200);
    expect(await pathState(bucketId, "r2.txt")).toMatchObject({ records: [{ is_uploaded: 1 }], objects: 1 });
    expect(await readBack(bucketId, "r2.txt")).toBe(BYTES);
  });
});

/** A file's record (in any shard), its bytes under `default/<id>`, and who holds its id in the directory. */
async function fileState(id: string) {
  const records = await allInShards<{ is_uploaded: number }>(
    "SELECT is_uploaded FROM files WHERE id = ?",
    id,
  );
  const objects = (await env.FILES.list({ prefix: `default/${id}` })).objects.length;
  return { records, objects, claimedBy: (await ownerOf(testShards(), fileEntry(id))) ?? null };
}

/** POST /files with one file under the id the client chose, as the admin secret or a user. */
const uploadWithId = (svc: Svc, id: string, token?: string) =>
  svc.request("POST", `${STORAGE}/files`, {
    body: uploadForm([{ bytes: BYTES, metadata: { id } }]),
    token,
    headers: token ? {} : ADMIN,
  });

describe("POST /files with a client-chosen id: a 503 leaves nothing, and the same upload retried stores one file", () => {
  for (const when of ["before", "after"] as const) {
    it(`each D1 statement failing ${when} it ran, for the admin secret and a user in each shard`, async () => {
      const users = await signUpInEachShard(service(NO_VERIFICATION));
      let faults = 0;
      for (const token of [undefined, ...users.map((session) => session.accessToken)]) {
        const userId = token ? users.find((s) => s.accessToken === token)!.user.id : undefined;
        const watched = failingShards(env, { after: Number.POSITIVE_INFINITY });
        const seen = await uploadWithId(
          service({ ...NO_VERIFICATION, ...watched.bindings }),
          crypto.randomUUID(),
          token,
        );
        expect(seen.status).toBe(201);
        for (let step = 0; step < watched.fault.seen.length; step++) {
          const context = `${userId ?? "admin"}, step ${step} (${when}): ${watched.fault.seen[step]!.slice(0, 80)}`;
          const id = crypto.randomUUID();
          const failing = failingShards(env, { after: step, times: 1, when }).bindings;
          const answer = await uploadWithId(service({ ...NO_VERIFICATION, ...failing }), id, token);
          if (answer.status === 201) continue;
          expect(answer.status, `${context}: ${await answer.text()}`).toBe(503);
          faults++;
          expect(await fileState(id), context).toEqual({ records: [], objects: 0, claimedBy: null });
          const retried = await uploadWithId(service(NO_VERIFICATION), id, token);
          expect(retried.status, `${context}: ${await retried.clone().text()}`).toBe(201);
          expect(await fileState(id), context).toEqual({
            records: [{ is_uploaded: 1 }],
            objects: 1,
            claimedBy: testShards().count > 1 ? (userId ?? `file:${id}`) : null,
          });
        }
      }
      expect(faults).toBeGreaterThan(10);
    }, 120_000);
  }

  // The form's second file is refused (too large): the first is published with the refusal's answer. That publishing
  // failing left the first reserved, with its bytes, under its id: the retry met it (409).
  it("a refused second file, and D1 failing as the first is published: 503, nothing kept; the retry answers as the first would have", async () => {
    const bucketId = uniqueBucket("small");
    const made = await service(NO_VERIFICATION).request("POST", `${STORAGE}/buckets`, {
      headers: ADMIN,
      json: { id: bucketId, maxUploadFileSize: 100 },
    });
    expect(made.status).toBe(201);
    const [first, second] = [crypto.randomUUID(), crypto.randomUUID()];
    const send = (svc: Svc) =>
      svc.request("POST", `${STORAGE}/files`, {
        body: uploadForm(
          [
            { bytes: "small", metadata: { id: first } },
            { bytes: "x".repeat(200), metadata: { id: second } },
          ],
          bucketId,
        ),
        headers: ADMIN,
      });
    const publishing = /update "files" set "is_uploaded"/i;
    for (const when of ["before", "after"] as const) {
      const failing = failingShards(env, { match: publishing, times: 1, when }).bindings;
      const answer = await send(service({ ...NO_VERIFICATION, ...failing }));
      expect(answer.status, `${when}: ${await answer.clone().text()}`).toBe(503);
      const records = await allInShards("SELECT id FROM files WHERE id IN (?, ?)", first, second);
      expect(records, when).toEqual([]);
      expect((await env.FILES.list({ prefix: `${bucketId}/` })).objects, when).toEqual([]);
    }
    const retried = await send(service(NO_VERIFICATION));
    expect(retried.status).toBe(400);
    expect(((await retried.json()) as { processedFiles: { id: string }[] }).processedFiles).toEqual([
      expect.objectContaining({ id: first }),
    ]);
  });
});

/** nhost-js 3.x's `storage.upload` of one file: its file[] first, then its metadata[] naming the id (no bucket-id). */
function lateIdForm(id: string): FormData {
  const form = new FormData();
  form.append("file[]", new Blob([BYTES], { type: "text/plain" }), `late-${id}.txt`);
  form.append("metadata[]", new Blob([JSON.stringify({ id })], { type: "application/json" }), "");
  return form;
}

const uploadLateId = (svc: Svc, id: string, token?: string) =>
  svc.request("POST", `${STORAGE}/files`, { body: lateIdForm(id), token, headers: token ? {} : ADMIN });

/** How many objects `default` holds in R2 (the file part's bytes go there before its metadata[] is read). */
async function defaultObjects(): Promise<number> {
  let count = 0;
  let cursor: string | undefined;
  do {
    const page = await env.FILES.list({ prefix: "default/", cursor });
    count += page.objects.length;
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return count;
}

/** The upload's records by its file's name: the one first reserved under a drawn id, and the one the id moved to. */
const lateIdRecords = (id: string) =>
  allInShards<{ id: string; is_uploaded: number }>(
    "SELECT id, is_uploaded FROM files WHERE name = ?",
    `late-${id}.txt`,
  );

// Threat: the file part comes first (nhost-js 3.x), reserved under a drawn id; its metadata[] after it names the id
// the client chose, and the record moves there once the form is read (upload-settle.ts). That move's answer lost
// (D1 inserted the record under the chosen id, then the connection dropped) left the record: the 503's retry of the
// same form was refused 409 "a file with id … already exists", and the client could not tell whether its file is there.
describe("POST /files with the file before its metadata[] naming an id: a 503 leaves nothing, the retry stores one file", () => {
  for (const when of ["before", "after"] as const) {
    it(`each D1 statement failing ${when} it ran, for the admin secret and a user in each shard`, async () => {
      const faults = await lateIdStepsLeaveNothing(NO_VERIFICATION, when, {
        // Nor the chosen id's claim.
        afterFault: async (id, context) =>
          expect(await fileState(id), context).toEqual({ records: [], objects: 0, claimedBy: null }),
        afterRetry: async () => {},
      });
      expect(faults).toBeGreaterThan(10);
    }, 120_000);
  }
});

/** What one deployment's late-id upload must leave after a fault, and after the retry, beside the records' checks. */
interface LateIdChecks {
  afterFault(id: string, context: string): Promise<void>;
  afterRetry(id: string, context: string): Promise<void>;
}

/**
 * The late-id upload under `vars`, for the admin secret and a user in each shard: each D1 statement it runs fails
 * once `when` it ran; every 503 leaves neither record (the drawn id's, the chosen id's) nor bytes, and the same form
 * retried stores one file, its id claimed by its owner. Answers how many steps faulted.
 */
async function lateIdStepsLeaveNothing(
  vars: Record<string, unknown>,
  when: "before" | "after",
  checks: LateIdChecks,
): Promise<number> {
  const users = await signUpInEachShard(service(NO_VERIFICATION));
  let faults = 0;
  for (const token of [undefined, ...users.map((session) => session.accessToken)]) {
    const userId = token ? users.find((s) => s.accessToken === token)!.user.id : undefined;
    const watched = failingShards(env, { after: Number.POSITIVE_INFINITY });
    const seen = await uploadLateId(service({ ...vars, ...watched.bindings }), crypto.randomUUID(), token);
    expect(seen.status, await seen.clone().text()).toBe(201);
    for (let step = 0; step < watched.fault.seen.length; step++) {
      const context = `${userId ?? "admin"}, step ${step} (${when}): ${watched.fault.seen[step]!.slice(0, 80)}`;
      const id = crypto.randomUUID();
      const objects = await defaultObjects();
      const failing = failingShards(env, { after: step, times: 1, when }).bindings;
      const answer = await uploadLateId(service({ ...vars, ...failing }), id, token);
      if (answer.status === 201) continue;
      expect(answer.status, `${context}: ${await answer.text()}`).toBe(503);
      faults++;
      expect(await lateIdRecords(id), context).toEqual([]);
      expect(await defaultObjects(), context).toBe(objects);
      await checks.afterFault(id, context);
      const retried = await uploadLateId(service(vars), id, token);
      expect(retried.status, `${context}: ${await retried.clone().text()}`).toBe(201);
      expect(await lateIdRecords(id), context).toEqual([{ id, is_uploaded: 1 }]);
      expect((await fileState(id)).claimedBy, context).toBe(
        testShards().count > 1 ? (userId ?? `file:${id}`) : null,
      );
      expect(await defaultObjects(), context).toBe(objects + 1);
      await checks.afterRetry(id, context);
    }
  }
  return faults;
}

/** The app's Hasura, deciding storage's permissions (test/storage/hasura-permissions.test.ts sets it up alike). */
const gql = hasuraStorageGraphql();
const UNDER_HASURA = {
  ...NO_VERIFICATION,
  OUTBOUND: { fetch: (input: RequestInfo | URL, init?: RequestInit) => gql.fetch(input, init) },
  HASURA_GRAPHQL_GRAPHQL_URL: GRAPHQL_URL,
  HASURA_GRAPHQL_ADMIN_SECRET: HASURA_ADMIN_SECRET,
  STORAGE_PERMISSIONS: "hasura",
};

// Threat: under Hasura's permissions the file part that comes first (nhost-js 3.x) is only staged; its row in the
// app's table and its record are written once the form is read, under the id its metadata[] names (upload-settle.ts).
// That record's answer lost (D1 inserted it, then the connection dropped) left the record and its id's claim: the
// 503's retry of the same form was refused 409 "a file with id … already exists", and the client could not tell
// whether its file is there.
describe("POST /files under Hasura, the file before its metadata[] naming an id: a 503 leaves nothing, the retry stores one file", () => {
  beforeAll(async () => {
    // Hasura trusts the service's keys (its jwk_url): the callers' tokens are forwarded to it.
    gql.trust((await (await service(UNDER_HASURA).get("/.well-known/jwks.json")).json()) as JSONWebKeySet);
  });

  for (const when of ["before", "after"] as const) {
    it(`each D1 statement failing ${when} it ran, for the admin secret and a user in each shard`, async () => {
      const faults = await lateIdStepsLeaveNothing(UNDER_HASURA, when, {
        // No claim of the id, no row in the app's table.
        afterFault: async (id, context) => {
          expect((await fileState(id)).claimedBy, context).toBeNull();
          expect(gql.tables.files.has(id), context).toBe(false);
        },
        afterRetry: async (id, context) => {
          expect(gql.tables.files.get(id)?.isUploaded, context).toBe(true);
        },
      });
      expect(faults).toBeGreaterThan(5);
    }, 120_000);
  }
});

/**
 * Every shard's D1 with `hook` run once just before the first statement whose SQL matches `match` (alone or in a
 * batch): another request's whole upload, between a request's steps. `failAfter`: that statement then runs and
 * fails, as `failingShards`' `when: "after"` does.
 */
function interleaved(
  match: RegExp,
  hook: () => Promise<unknown>,
  failAfter = false,
): Record<string, D1Database> {
  let pending = true;
  const gate = async <T>(sql: string, work: () => Promise<T>): Promise<T> => {
    if (!pending || !match.test(sql)) return work();
    pending = false;
    await hook();
    const result = await work();
    if (failAfter) throw new Error("D1_ERROR: Network connection lost.");
    return result;
  };
  const names = String(env.AUTH_D1_SHARDS ?? "DB").split(",");
  const wrap = (db: D1Database) => wrapD1(db, gate);
  return Object.fromEntries(
    names.map((name) => [name, wrap((env as unknown as Record<string, D1Database>)[name]!)]),
  );
}

describe("the undo removes only what the failed upload wrote", () => {
  // Two uploads of one user to one path at once: the second's record is refused by the path's unique index (409).
  // Its undo gave back the path's claim, which is the user's for both: the first file stayed, found by its path by
  // nobody (with several shards the path's claim says which shard holds it), and free for another user to take.
  it("a user's second upload to a path their first took meanwhile: 409, and the first stays found by its path", async () => {
    const [user] = await signUpInEachShard(service(NO_VERIFICATION));
    const bucketId = await userBucket("lost");
    const firstUpload = () => faceUpload(supabaseService(), bucketId, "race.txt", user!.accessToken);
    let first: Response | undefined;
    const shards = interleaved(/insert into "files"/i, async () => {
      first = await firstUpload();
    });
    const second = await faceUpload(supabaseService(shards), bucketId, "race.txt", user!.accessToken);
    expect(first?.status).toBe(200);
    expect(second.status, await second.clone().text()).toBe(400);
    expect(await second.json()).toMatchObject({ statusCode: "409", error: "Duplicate" });
    const state = await pathState(bucketId, "race.txt");
    expect(state.records).toEqual([{ id: expect.any(String), is_uploaded: 1 }]);
    if (testShards().count > 1) expect(state.claimedBy).toBe(user!.user.id);
    expect(await readBack(bucketId, "race.txt")).toBe(BYTES);
  });

  // The service role's claim is its file's own (`file:<id>`, a fresh id): one whose answer was lost is given back.
  // Another upload's claim of the same path, met by that statement, is another owner's and stays.
  it("the service role's claim lost after another upload claimed the path: 503, and the other file stays", async () => {
    const bucketId = await userBucket("lost");
    let first: Response | undefined;
    const shards = interleaved(
      /insert into "directory"/i,
      async () => {
        first = await faceUpload(supabaseService(), bucketId, "taken.txt");
      },
      true,
    );
    const second = await faceUpload(supabaseService(shards), bucketId, "taken.txt");
    expect(first?.status).toBe(200);
    // One shard: no directory, and the upload goes on to meet the first file's record (409).
    expect(second.status).toBe(testShards().count > 1 ? 503 : 400);
    const state = await pathState(bucketId, "taken.txt");
    expect(state.records).toEqual([{ id: expect.any(String), is_uploaded: 1 }]);
    if (testShards().count > 1) expect(state.claimedBy).toBe(`file:${state.records[0]!.id}`);
    expect(await readBack(bucketId, "taken.txt")).toBe(BYTES);
  });

  // Threat: two uploads of one user under one client-chosen id. The first names it after its file (nhost-js 3.x): its
  // record moves to the id once the form is read, refused there (the second holds it), and that answer is lost. Its
  // undo took the second's reservation, still being uploaded, for its own (the id, not uploaded, the same uploader,
  // created since it began) and deleted it with the id's claim: the second, whose upload was fine, failed 500 with
  // its bytes left in R2 and no record.
  it("a user's late id whose move was lost while their other upload of the id was in progress: that upload is kept", async () => {
    // The move: the record reserved under a drawn id deleted, and one inserted under the chosen id, in one batch.
    await otherUploadKept(/delete from "files"[\s\S]*insert into "files"/i, uploadLateId);
  });

  // Threat: the same with the metadata[] first (nhost-js 4.x): the first's reservation under the chosen id is
  // refused and its answer lost, and its undo took the second's reservation (the same values but its ETag).
  it("a user's chosen id whose reservation was lost while their other upload of the id was in progress: that upload is kept", async () => {
    await otherUploadKept(/insert into "files"/i, uploadWithId);
  });
});

describe("a delete landing just before an upload is made visible", () => {
  // Threat: the record deleted between the upload's last write and its publish (a DELETE of the file under way): the
  // publish updated nothing and the upload answered 201 for a file that 404s. Now 409, nothing left of it.
  it("the upload is refused 409, and nothing of the file is left", async () => {
    const [user] = await signUpInEachShard(service(NO_VERIFICATION));
    const id = crypto.randomUUID();
    let deleted: Response | undefined;
    const shards = interleaved(/update "files" set "is_uploaded"/i, async () => {
      deleted = await service(NO_VERIFICATION).request("DELETE", `${STORAGE}/files/${id}`, {
        token: user!.accessToken,
      });
    });
    const answer = await uploadWithId(service({ ...NO_VERIFICATION, ...shards }), id, user!.accessToken);
    expect(deleted?.status).toBe(204);
    expect(answer.status, await answer.clone().text()).toBe(409);
    expect(await fileState(id)).toEqual({ records: [], objects: 0, claimedBy: null });
  });
});

describe("a user's own old claim of a path", () => {
  // Threat: a claim kept from a lost answer (or any claim of the user's older than the claim window, with no file at
  // the path) was left as old as it was when its owner uploaded there again; until that upload's record was written,
  // another user's upload took the claim over as stale and wrote its own record: one path, a file in each shard.
  it("is renewed by the owner's next upload: another user's upload meanwhile is refused, and one file stays", async () => {
    const [owner, other] = await signUpInEachShard(service(NO_VERIFICATION));
    if (testShards().count === 1 || !other) return; // One shard: no directory, one database's unique path.
    const bucketId = await userBucket("lost");
    await claim(
      testShards(),
      owner!.user.id,
      [pathEntry(bucketId, "kept.txt")],
      Date.now() - 2 * CLAIM_WINDOW_MS,
    );
    let theOthers: Response | undefined;
    const shards = interleaved(/insert into "files"/i, async () => {
      theOthers = await faceUpload(supabaseService(), bucketId, "kept.txt", other.accessToken);
    });
    const owners = await faceUpload(supabaseService(shards), bucketId, "kept.txt", owner!.accessToken);
    expect(owners.status, await owners.clone().text()).toBe(200);
    expect(theOthers?.status).toBe(400);
    expect(await theOthers!.json()).toMatchObject({ statusCode: "409", error: "Duplicate" });
    const state = await pathState(bucketId, "kept.txt");
    expect(state.records).toEqual([{ id: expect.any(String), is_uploaded: 1 }]);
    expect(state.claimedBy).toBe(owner!.user.id);
  });
});

/**
 * Two uploads of one user under one chosen id, in each shard: `upload` (the first) has its statement `write` refused
 * (the second, sent from inside it, reserved the id first) and its answer lost (503); the second, whose bytes are held
 * until then, must still store its file, readable and claimed by the user, and the first's retry meets it (409).
 */
async function otherUploadKept(
  write: RegExp,
  upload: (svc: Svc, id: string, token: string) => Promise<Response>,
): Promise<void> {
  const users = await signUpInEachShard(service(NO_VERIFICATION));
  for (const user of users) {
    const id = crypto.randomUUID();
    const held = pausingFiles((key) => key.startsWith(`default/${id}`));
    let second: Promise<Response> | undefined;
    const shards = interleaved(
      write,
      async () => {
        second = uploadWithId(service({ ...NO_VERIFICATION, FILES: held.files }), id, user.accessToken);
        await held.arrived;
      },
      true,
    );
    const first = await upload(service({ ...NO_VERIFICATION, ...shards }), id, user.accessToken);
    expect(first.status, await first.clone().text()).toBe(503);
    held.release();
    const answer = await second!;
    expect(answer.status, `${user.user.id}: ${await answer.clone().text()}`).toBe(201);
    expect(await fileState(id), user.user.id).toEqual({
      records: [{ is_uploaded: 1 }],
      objects: 1,
      claimedBy: testShards().count > 1 ? user.user.id : null,
    });
    expect(await lateIdRecords(id), user.user.id).toEqual([]);
    const read = await service(NO_VERIFICATION).request("GET", `${STORAGE}/files/${id}`, {
      token: user.accessToken,
    });
    expect(await read.text()).toBe(BYTES);
    expect((await upload(service(NO_VERIFICATION), id, user.accessToken)).status).toBe(409);
  }
}
