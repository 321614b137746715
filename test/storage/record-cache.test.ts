// The isolate's short memory of file records, with a movable clock: what it answers and when it forgets.
import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { currentFileWithBucket, forgetFile, recentFileWithBucket } from "../../src/storage/record-cache";
import { shardNames, signUpInShard } from "../db/shard-users";
import { NO_VERIFICATION, service, signUp, testDeps } from "../helpers";
import { countingDb } from "../support/counting-bindings";
import { laggingReplica } from "../support/replica";
import { routedD1 } from "../support/shards";
import { get, md5Etag, STORAGE, svc, uploaded, uploadForm } from "./helpers";

const depsAt = (clock: { now: number }) => testDeps(svc.env, clock);

describe("record cache", () => {
  it("answers from memory for five seconds, then reads D1 again; forgetting is immediate", async () => {
    const session = await signUp(svc);
    const [file] = await uploaded(uploadForm([{ bytes: "x" }]), session.accessToken);
    const clock = { now: 1_000_000 };
    const deps = depsAt(clock);
    expect((await recentFileWithBucket(deps, file!.id))?.file.name).toBe("file.bin");

    await routedD1(file!.id).prepare("UPDATE files SET name = 'renamed' WHERE id = ?").bind(file!.id).run();
    clock.now += 4_999;
    expect((await recentFileWithBucket(deps, file!.id))?.file.name).toBe("file.bin");
    clock.now += 1;
    expect((await recentFileWithBucket(deps, file!.id))?.file.name).toBe("renamed");

    await routedD1(file!.id).prepare("UPDATE files SET name = 'again' WHERE id = ?").bind(file!.id).run();
    forgetFile(file!.id);
    expect((await recentFileWithBucket(deps, file!.id))?.file.name).toBe("again");
    expect((await currentFileWithBucket(deps, file!.id))?.file.name).toBe("again");
  });

  it("never remembers a missing file", async () => {
    const deps = depsAt({ now: 5 });
    const id = crypto.randomUUID();
    expect(await recentFileWithBucket(deps, id)).toBeUndefined();
    const session = await signUp(svc);
    await uploaded(uploadForm([{ bytes: "y", metadata: { id } }]), session.accessToken);
    expect((await recentFileWithBucket(deps, id))?.file.id).toBe(id);
  });
});

// Downloads answer from a recent record or a nearby replica (src/storage/record-cache.ts). Threat: bytes served under
// another version's ETag or length, or a deleted file still served, when another isolate changed the file after this
// one remembered it. Those isolates are played here by changing D1 and R2 directly, as their requests would, without
// this isolate's `forgetFile`.
describe("downloads from a recent record", () => {
  async function cachedFile(bytes: string) {
    const session = await signUp(svc);
    const [file] = await uploaded(uploadForm([{ bytes }]), session.accessToken);
    const first = await get(file!.id, {}, session.accessToken);
    expect(await first.text()).toBe(bytes);
    return { session, file: file!, etag: first.headers.get("etag")! };
  }

  it("serves a file another isolate replaced from its new bytes, with their ETag and length", async () => {
    const { session, file, etag } = await cachedFile("version one");
    const row = await routedD1(file.id)
      .prepare("SELECT object_key AS key FROM files WHERE id = ?")
      .bind(file.id)
      .first<{ key: string }>();
    const newKey = `${file.bucketId}/${file.id}/${crypto.randomUUID()}`;
    const bytes = new TextEncoder().encode("version two, longer");
    const newEtag = await md5Etag(bytes);
    await env.FILES.put(newKey, bytes);
    await routedD1(file.id)
      .prepare("UPDATE files SET object_key = ?, etag = ?, size = ? WHERE id = ?")
      .bind(newKey, newEtag, bytes.length, file.id)
      .run();
    await env.FILES.delete(row!.key);

    const after = await get(file.id, {}, session.accessToken);
    expect(after.status).toBe(200);
    expect(await after.text()).toBe("version two, longer");
    expect(after.headers.get("etag")).toBe(newEtag);
    expect(after.headers.get("etag")).not.toBe(etag);
    expect(after.headers.get("content-length")).toBe(String(bytes.length));
  });

  it("answers 404 for a file another isolate deleted, and never bytes its record does not describe", async () => {
    const deleted = await cachedFile("soon gone");
    const key = async (id: string) =>
      (await routedD1(id)
        .prepare("SELECT object_key AS key FROM files WHERE id = ?")
        .bind(id)
        .first<{ key: string }>())!.key;
    const deletedKey = await key(deleted.file.id);
    await routedD1(deleted.file.id).prepare("DELETE FROM files WHERE id = ?").bind(deleted.file.id).run();
    await env.FILES.delete(deletedKey);
    expect((await get(deleted.file.id, {}, deleted.session.accessToken)).status).toBe(404);

    // Other bytes under the same key (never written by the service): the size gives them away, nothing is sent.
    const tampered = await cachedFile("twelve bytes");
    await env.FILES.put(await key(tampered.file.id), "thirteen bytes");
    expect((await get(tampered.file.id, {}, tampered.session.accessToken)).status).toBe(404);
  });

  it("reads no record from the primary for downloads", async () => {
    const replica = await laggingReplica();
    const routed = service({ ...NO_VERIFICATION, DB: replica.binding });
    // The lagging replica is the home database's: an uploader whose files are there.
    const session = await signUpInShard(svc, 0);
    const [warm, file] = await uploaded(
      uploadForm([{ bytes: "warm" }, { bytes: "near" }]),
      session.accessToken,
    );
    // The first request of a configuration reads the signing keys from the primary (src/signing-keys/keys.ts).
    await routed.request("GET", `${STORAGE}/files/${warm!.id}`, { token: session.accessToken });
    Object.assign(replica.counts, { primary: 0, replica: 0 });
    for (let i = 0; i < 3; i++) {
      const response = await routed.request("GET", `${STORAGE}/files/${file!.id}`, {
        token: session.accessToken,
      });
      expect(await response.text()).toBe("near");
    }
    // One replica read, then the record remembered for the next two.
    expect(replica.counts).toEqual({ primary: 0, replica: 1 });
  });

  // Threat: with several shards, a download paying a directory read, or a read of the bucket in the home database,
  // on every request, where one shard paid one read (src/storage/record-cache.ts).
  it("reads a file in another shard once, with no directory read, its bucket remembered", async () => {
    const [homeName, otherName] = shardNames(env);
    const [home, other] = [
      { reads: 0, writes: 0 },
      { reads: 0, writes: 0 },
    ];
    const routed = service({
      ...NO_VERIFICATION,
      [homeName!]: countingDb(home, env[homeName as "DB"]),
      [otherName!]: countingDb(other, env[otherName as "DB"]),
    });
    const session = await signUpInShard(svc, 1);
    const [warm, file] = await uploaded(
      uploadForm([{ bytes: "warm" }, { bytes: "far" }]),
      session.accessToken,
    );
    // The clock stands still: a slow machine must not outlast the few seconds things are remembered.
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
    await routed.request("GET", `${STORAGE}/files/${warm!.id}`, { token: session.accessToken });
    Object.assign(home, { reads: 0, writes: 0 });
    Object.assign(other, { reads: 0, writes: 0 });
    for (let i = 0; i < 3; i++) {
      const response = await routed.request("GET", `${STORAGE}/files/${file!.id}`, {
        token: session.accessToken,
      });
      expect(await response.text()).toBe("far");
    }
    expect({ home, other }).toEqual({ home: { reads: 0, writes: 0 }, other: { reads: 1, writes: 0 } });
  });
});
