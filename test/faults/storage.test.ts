// R2 and D1 failing under uploads and downloads. Threat: a file record without its bytes or bytes without their
// record (storage.md: every file listed can be read, every object belongs to a file), a 500 where the contract
// promises 503 with Retry-After, an id the failed upload keeps so that its retry meets a 409.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ownerOf } from "../../src/db/directory";
import { fileEntry } from "../../src/storage/file-shards";
import { signUpInEachShard } from "../db/shard-users";
import { NO_VERIFICATION, service } from "../helpers";
import { STORAGE, uploadForm } from "../storage/helpers";
import { failingR2, failingShards } from "../support/faults";
import { firstInAnyShard, testShards } from "../support/shards";
import { expectStorageUnavailable } from "./support";

const BYTES = "the bytes of a file that must not be half kept";

/** A file's record (in whichever shard holds it), its bytes, and who holds its id in the directory. */
async function stateOf(id: string) {
  const row = await firstInAnyShard<{ object_key: string; is_uploaded: number }>(
    "SELECT object_key, is_uploaded FROM files WHERE id = ?",
    id,
  );
  const objects = await env.FILES.list({ prefix: `default/${id}` });
  return {
    row,
    objects: objects.objects.length,
    claimedBy: (await ownerOf(testShards(), fileEntry(id))) ?? null,
  };
}

function uploadWith(overrides: Record<string, unknown>, token: string) {
  const svc = service({ ...NO_VERIFICATION, ...overrides });
  const id = crypto.randomUUID();
  const send = () =>
    svc.request("POST", `${STORAGE}/files`, {
      body: uploadForm([{ bytes: BYTES, metadata: { id } }]),
      token,
    });
  return { id, send };
}

describe("upload with a binding failing", () => {
  it.each([
    ["R2 refusing the put", () => ({ FILES: failingR2(env.FILES, { match: /^put$/, times: 1 }).binding })],
    [
      "R2 losing the put's answer after it stored the bytes",
      () => ({
        FILES: failingR2(env.FILES, { match: /^put$/, when: "after", times: 1 }).binding,
      }),
    ],
    // D1 in whichever shard the uploader's record goes to (failingShards wraps them all under one plan).
    [
      "D1 failing as the record is reserved",
      () => failingShards(env, { match: /insert into "files"/i, times: 1 }).bindings,
    ],
    [
      "D1 failing as the record is completed",
      () => failingShards(env, { match: /^update "files"/i, times: 1 }).bindings,
    ],
    [
      "D1 failing as the upload is published",
      () => failingShards(env, { match: /update "files" set "is_uploaded"/i, times: 1 }).bindings,
    ],
    // With several shards, the directory (home) claims a client-chosen id before the record is written.
    [
      "D1 failing as the id is claimed",
      () => failingShards(env, { match: /"directory"/i, times: 1 }).bindings,
    ],
  ])(
    "%s: 503 with Retry-After, no record, no bytes, no claim; the retry stores the file",
    async (_, bindings) => {
      for (const { accessToken, user } of await signUpInEachShard(service(NO_VERIFICATION))) {
        const { id, send } = uploadWith(bindings(), accessToken);
        await expectStorageUnavailable(await send());
        expect(await stateOf(id)).toEqual({ row: null, objects: 0, claimedBy: null });
        const again = await send();
        expect(again.status, await again.clone().text()).toBe(201);
        expect(await stateOf(id)).toMatchObject({
          row: { is_uploaded: 1 },
          objects: 1,
          claimedBy: testShards().count > 1 ? user.id : null,
        });
      }
    },
  );
});

describe("an upload of two files, the second failing", () => {
  // Threat: the first file kept unpublished (a record and bytes no one was told of), so the retry of the same request
  // meets a 409 on its id and the client can never complete it.
  it.each([
    [
      "R2 refusing its put",
      () => ({ FILES: failingR2(env.FILES, { match: /^put$/, after: 1, times: 1 }).binding }),
    ],
    [
      "D1 failing as its record is reserved",
      () => failingShards(env, { match: /insert into "files"/i, after: 1, times: 1 }).bindings,
    ],
  ])("%s: 503, neither file kept; the retry stores both", async (_, bindings) => {
    const [first] = await signUpInEachShard(service(NO_VERIFICATION));
    const accessToken = first!.accessToken;
    const ids = [crypto.randomUUID(), crypto.randomUUID()];
    const send = (svc: ReturnType<typeof service>) =>
      svc.request("POST", `${STORAGE}/files`, {
        body: uploadForm(ids.map((id) => ({ bytes: BYTES, metadata: { id } }))),
        token: accessToken,
      });
    await expectStorageUnavailable(await send(service({ ...NO_VERIFICATION, ...bindings() })));
    for (const id of ids) expect(await stateOf(id)).toEqual({ row: null, objects: 0, claimedBy: null });
    const again = await send(service(NO_VERIFICATION));
    expect(again.status, await again.clone().text()).toBe(201);
    for (const id of ids) expect(await stateOf(id)).toMatchObject({ row: { is_uploaded: 1 }, objects: 1 });
  });
});

describe("download with a binding failing", () => {
  it.each([
    ["R2", () => ({ FILES: failingR2(env.FILES, { match: /^get$/, times: 1 }).binding })],
    ["D1", () => failingShards(env, { match: /from "files"/i, times: 1 }).bindings],
    ["D1's directory", () => failingShards(env, { match: /from "directory"/i, times: 1 }).bindings],
  ])("%s failing: 503 with Retry-After; the retry reads the file", async (name, bindings) => {
    for (const { accessToken } of await signUpInEachShard(service(NO_VERIFICATION))) {
      const { id, send } = uploadWith({}, accessToken);
      expect((await send()).status).toBe(201);
      const svc = service({ ...NO_VERIFICATION, ...bindings() });
      const read = () => svc.request("GET", `${STORAGE}/files/${id}`, { token: accessToken });
      // One shard: no directory to fail, the read goes on.
      if (name !== "D1's directory" || testShards().count > 1) await expectStorageUnavailable(await read());
      const again = await read();
      expect(again.status).toBe(200);
      expect(await again.text()).toBe(BYTES);
    }
  });
});
