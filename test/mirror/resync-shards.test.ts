// `mirror-resync` with several shards (src/mirror/resync.ts, src/mirror/d1-reads.ts): every shard's users and files
// are read, in one id order, each with its stream's sequence from its own shard; rows the mirror has that no shard has
// are pruned, and rows some shard has are not. Postgres is a stand-in here that records what the resync writes (the
// resync against a real Postgres, with one shard, is test/compat/mirror.test.ts).
import { describe, expect, it } from "vitest";
import type { Sql } from "../../src/mirror/postgres";
import { type Phase, resyncPage } from "../../src/mirror/resync";
import { signUpInEachShard } from "../db/shard-users";
import { NO_VERIFICATION, service } from "../helpers";
import { STORAGE, uploadForm } from "../storage/helpers";
import { testShards, userD1 } from "../support/shards";

const svc = service(NO_VERIFICATION);

interface Claimed {
  row_id: string;
  subject: string;
  sequence: number;
  deleted: boolean;
}

/** A Postgres that holds `users` and `files` already, claims every version, and records what is written. */
function standInMirror(mirrored: { users: string[]; files: { id: string; uploader: string | null }[] }) {
  const written = { users: new Set<string>(), files: new Set<string>() };
  const deleted = { users: new Set<string>(), files: new Set<string>() };
  const versions: Claimed[] = [];
  const page = <T extends { id: string }>(rows: T[], values: unknown[]) =>
    rows
      .filter((row) => values[0] === "" || row.id > String(values[0]))
      .sort((a, b) => (a.id < b.id ? -1 : 1))
      .slice(0, Number(values[1]));
  const sql: Sql = {
    async query<Row>(text: string, values: unknown[] = []) {
      const answer = (rows: unknown[]) => ({ rows: rows as Row[], rowCount: rows.length });
      if (/^SELECT id::text AS id FROM auth\.users/.test(text))
        return answer(
          page(
            mirrored.users.map((id) => ({ id })),
            values,
          ),
        );
      if (/^SELECT id::text AS id, uploaded_by_user_id/.test(text))
        return answer(page(mirrored.files, values));
      if (/INSERT INTO edge_auth_mirror\.versions/.test(text)) {
        const claimed = JSON.parse(String(values[1])) as Claimed[];
        versions.push(...claimed);
        return answer(claimed.map(({ row_id }) => ({ row_id })));
      }
      if (/INSERT INTO auth\.roles/.test(text)) {
        for (const user of JSON.parse(String(values[0])) as { id: string }[]) written.users.add(user.id);
      } else if (/INSERT INTO storage\.files/.test(text)) {
        for (const file of JSON.parse(String(values[0])) as { id: string }[]) written.files.add(file.id);
      } else if (/DELETE FROM auth\.users/.test(text)) {
        for (const id of values[0] as string[]) deleted.users.add(id);
      } else if (/DELETE FROM storage\.files/.test(text)) {
        for (const id of values[0] as string[]) deleted.files.add(id);
      }
      return answer([]);
    },
  };
  return { sql, written, deleted, versions };
}

async function resyncAll(sql: Sql): Promise<Phase[]> {
  const phases: Phase[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 10_000; pages++) {
    const page = await resyncPage({ sql, shards: testShards(), now: Date.now }, cursor);
    phases.push(page.phase);
    if (page.next === null) return phases;
    cursor = page.next;
  }
  throw new Error("the resync did not end");
}

const lastSequence = async (userId: string) =>
  (await userD1(userId)
    .prepare("SELECT last FROM event_sequences WHERE subject = ?")
    .bind(userId)
    .first<{ last: number }>())!.last;

describe("mirror resync with several shards", () => {
  // Threat: a resync that reads the home database only: the mirror loses every user of the other shards (pruned as
  // gone), or never gets them; or it records a user's version from another shard's sequence, so the stream's next
  // events are skipped or replayed.
  it("writes the users and files of every shard at their own sequence, and prunes only what no shard has", async () => {
    const sessions = await signUpInEachShard(svc);
    const fileIds: string[] = [];
    for (const session of sessions) {
      const uploaded = await svc.request("POST", `${STORAGE}/files`, {
        body: uploadForm([{ bytes: "mirrored", type: "text/plain" }]),
        token: session.accessToken,
      });
      fileIds.push(((await uploaded.json()) as { processedFiles: { id: string }[] }).processedFiles[0]!.id);
    }
    const [goneUser, goneFile] = [crypto.randomUUID(), crypto.randomUUID()];
    const mirror = standInMirror({
      users: [...sessions.map((session) => session.user.id), goneUser],
      files: [
        ...fileIds.map((id, index) => ({ id, uploader: sessions[index]!.user.id })),
        { id: goneFile, uploader: null },
      ],
    });

    const phases = await resyncAll(mirror.sql);
    expect(phases.at(-1)).toBe("files");
    for (const session of sessions) expect(mirror.written.users).toContain(session.user.id);
    for (const id of fileIds) expect(mirror.written.files).toContain(id);
    expect([...mirror.deleted.users]).toEqual([goneUser]);
    expect([...mirror.deleted.files]).toEqual([goneFile]);

    for (const session of sessions) {
      const version = mirror.versions.find((v) => v.row_id === session.user.id && !v.deleted)!;
      expect(version.sequence).toBe(await lastSequence(session.user.id));
      expect(version.sequence).toBeGreaterThanOrEqual(3);
    }
    expect(testShards().count).toBe(2);
  });
});
