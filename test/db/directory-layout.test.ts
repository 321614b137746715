// The directory's old layout (migration 0042, src/db/slot-map.ts `directoryAtHome`, src/db/directory.ts): a
// deployment that ran several shards before the directory was sharded by key has every key in the home database.
// Threat: after the upgrade it looks a key up in the key's slot's shard, misses it, and a sign-up's claim there
// succeeds beside the old key at home: two accounts for one email. While the marker is there, keys stay at home.
import { env } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { slotOfKey } from "../../src/db/directory";
import { DIRECTORY_LAYOUT_KEY, loadSlotMap } from "../../src/db/slot-map";
import { fence } from "../../src/db/slot-moves";
import { sha256Hex } from "../../src/lib/crypto";
import { expectError, NO_VERIFICATION, PASSWORD, service, uniqueEmail } from "../helpers";
import { testShards, userIdByEmail } from "../support/shards";

const svc = service(NO_VERIFICATION);
const names = String(env.AUTH_D1_SHARDS).split(",");
const home = env.DB as D1Database;
const elsewhere = env[names[1]!] as D1Database;
const signIn = (email: string) => svc.post("/signin/email-password", { email, password: PASSWORD });
const keyOfEmail = (email: string) => sha256Hex(`email:${email}`);

/** An address whose directory key's slot is NOT in the home shard: the old layout and the new disagree on it. */
async function emailKeyedAway(): Promise<{ email: string; key: string }> {
  for (;;) {
    const email = uniqueEmail("layout");
    const key = await keyOfEmail(email);
    if (testShards().indexOfSlot(slotOfKey(key)) !== 0) return { email, key };
  }
}

const keyCount = async (d1: D1Database, key: string) =>
  (await d1.prepare("SELECT count(*) AS n FROM directory WHERE key = ?").bind(key).first<{ n: number }>())!.n;

/** The marker set or removed, and this isolate's map read again (it is otherwise kept up to a second). */
async function marker(present: boolean) {
  await (present
    ? home
        .prepare("INSERT INTO service_settings (key, value, updated_at) VALUES (?, '\"home\"', ?)")
        .bind(DIRECTORY_LAYOUT_KEY, Date.now())
    : home.prepare("DELETE FROM service_settings WHERE key = ?").bind(DIRECTORY_LAYOUT_KEY)
  ).run();
  await loadSlotMap(svc.env, names, { fresh: true });
}

const made: string[] = [];
/** Directory rows this file wrote by hand (the re-key's pages), removed at the end wherever they are. */
const synthetic: string[] = [];
const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
interface Step {
  map: { moving: unknown; ranges: [number, number, string][] };
  homeFrom: number;
  cursor: unknown;
  waitMs?: number;
}
const rekey = async (step: string, json: unknown = {}): Promise<Step> => {
  const response = await svc.request(
    step ? "POST" : "GET",
    `/admin/shards/directory${step ? `/${step}` : ""}`,
    {
      headers: ADMIN,
      json: step ? json : undefined,
    },
  );
  const body = (await response.json()) as Step;
  if (response.status !== 200) throw new Error(`${step}: ${response.status} ${JSON.stringify(body)}`);
  return body;
};

describe("a deployment that ran several shards before the directory was sharded by key", () => {
  beforeAll(async () => {
    // The suite's databases were migrated with an empty directory: migration 0042 left no marker.
    expect(
      await home.prepare("SELECT 1 FROM service_settings WHERE key = ?").bind(DIRECTORY_LAYOUT_KEY).first(),
    ).toBeNull();
    await marker(true);
  });

  afterAll(async () => {
    // Put back the suite's layout; the keys written at home for this file's users go (their slots are elsewhere).
    await marker(false);
    await home.prepare("DELETE FROM service_settings WHERE key = 'shards.slot-map'").run();
    await loadSlotMap(svc.env, names, { fresh: true });
    for (const d1 of [home, elsewhere]) {
      for (let i = 0; i < synthetic.length; i += 90) {
        const part = synthetic.slice(i, i + 90);
        await d1
          .prepare(`DELETE FROM directory WHERE key IN (${part.map(() => "?").join(",")})`)
          .bind(...part)
          .run();
      }
    }
    for (const email of made)
      await home
        .prepare("DELETE FROM directory WHERE key = ?")
        .bind(await keyOfEmail(email))
        .run();
  });

  it("migration 0042 marks a home database whose directory holds rows, once", async () => {
    const migration = (env.TEST_MIGRATIONS as { name: string; queries: string[] }[]).find((m) =>
      m.name.includes("directory_layout"),
    )!;
    // On a non-home shard of the suite (its marker is never read), with a row of its own so the directory is not empty.
    const key = `layout-${crypto.randomUUID()}`;
    await elsewhere
      .prepare("INSERT INTO directory (key, kind, user_id, claimed_at) VALUES (?, 'email', ?, 0)")
      .bind(key, crypto.randomUUID())
      .run();
    try {
      for (let run = 0; run < 2; run++)
        for (const query of migration.queries) await elsewhere.prepare(query).run();
      const rows = await elsewhere
        .prepare("SELECT value FROM service_settings WHERE key = ?")
        .bind(DIRECTORY_LAYOUT_KEY)
        .all<{ value: string }>();
      expect(rows.results.map((row) => row.value)).toEqual(['"home"']);
    } finally {
      await elsewhere.batch([
        elsewhere.prepare("DELETE FROM directory WHERE key = ?").bind(key),
        elsewhere.prepare("DELETE FROM service_settings WHERE key = ?").bind(DIRECTORY_LAYOUT_KEY),
      ]);
    }
  });

  it("keys stay at home: a new user's, sign-in by email finds it, a second sign-up with the email is refused", async () => {
    const { email, key } = await emailKeyedAway();
    made.push(email);
    expect((await svc.post("/signup/email-password", { email, password: PASSWORD })).status).toBe(200);
    // The old layout: the key at home, none in its slot's shard.
    expect([await keyCount(home, key), await keyCount(testShards().d1OfSlot(slotOfKey(key)), key)]).toEqual([
      1, 0,
    ]);
    expect((await signIn(email)).status).toBe(200);
    const first = await userIdByEmail(email);
    await expectError(
      await svc.post("/signup/email-password", { email: email.toUpperCase(), password: PASSWORD }),
      409,
      "email-already-in-use",
    );
    expect(await userIdByEmail(email)).toBe(first);
    // Without the marker the same deployment would look in the slot's shard and miss the key (what this guards).
    await marker(false);
    try {
      await expectError(await signIn(email), 401, "invalid-email-password");
    } finally {
      await marker(true);
    }
    expect((await signIn(email)).status).toBe(200);
  });

  it("slots do not move while the keys are at home (a move would carry only its slots' keys)", async () => {
    await expect(
      fence({ env: svc.env, names, now: Date.now() }, { first: 0, last: 0, to: names[1]! }),
    ).rejects.toThrow(/old layout/);
  });

  it("the re-key moves home's keys to their slots' shards under a fence, then removes the marker", async () => {
    const away = await emailKeyedAway();
    let near: { email: string; key: string };
    do {
      const email = uniqueEmail("layout");
      near = { email, key: await keyOfEmail(email) };
    } while (testShards().indexOfSlot(slotOfKey(near.key)) !== 0);
    made.push(away.email, near.email);
    for (const { email } of [away, near]) {
      expect((await svc.post("/signup/email-password", { email, password: PASSWORD })).status).toBe(200);
    }
    // Old keys written straight at home, more than a page of the copy (96), at the range's edges: slots 2047 (the
    // home shard's last, stays), 2048 and 4095 (DB_1's first and last, move).
    const hex = () => crypto.randomUUID().replaceAll("-", "");
    const edges = ["7ff", ...Array.from({ length: 200 }, (_, i) => (i % 2 ? "800" : "fff"))].map((prefix) =>
      `${prefix}${hex()}${hex()}`.slice(0, 64),
    );
    synthetic.push(...edges);
    // Their claim time marks them (a re-key copies a row as it is).
    const stamp = 1_000_000 + Math.floor(Math.random() * 1e9);
    await home.batch(
      edges.map((key) =>
        home
          .prepare("INSERT INTO directory (key, kind, user_id, claimed_at) VALUES (?, 'file', ?, ?)")
          .bind(key, crypto.randomUUID(), stamp),
      ),
    );
    let signInDuringFence: Promise<Response> | undefined;
    for (let status = await rekey(""); status.homeFrom < 4096; status = await rekey("")) {
      const range = status.map.ranges.find(
        ([first, last]) => first <= status.homeFrom && status.homeFrom <= last,
      )!;
      const fenced = await rekey("fence", { last: range[1] });
      if (!fenced.map.moving) continue; // the home shard's range: its keys are in place, passed at once
      for (let cursor: unknown = null; ; ) {
        const page = await rekey("copy", { graceMs: 0, cursor });
        if (page.waitMs) await sleep(page.waitMs);
        else if (page.cursor === null) break;
        else cursor = page.cursor;
      }
      // The keys have left home and the switch is not made: a sign-in that needs one must wait inside the request
      // (reading home now would miss it) and go on in the shard the re-key put it in.
      await loadSlotMap(svc.env, names, { fresh: true });
      signInDuringFence = signIn(away.email);
      await sleep(50);
      await rekey("switch");
    }
    await loadSlotMap(svc.env, names, { fresh: true });
    expect(
      await home.prepare("SELECT 1 FROM service_settings WHERE key = ?").bind(DIRECTORY_LAYOUT_KEY).first(),
    ).toBeNull();
    // Every key in its slot's shard: the away key left home, the near one (home is its slot's shard) stayed.
    const shardOfKey = testShards().d1OfSlot(slotOfKey(away.key));
    expect([
      await keyCount(home, away.key),
      await keyCount(shardOfKey, away.key),
      await keyCount(home, near.key),
    ]).toEqual([0, 1, 1]);
    expect((await signInDuringFence!).status).toBe(200);
    const placed = async (d1: D1Database) =>
      (await d1
        .prepare("SELECT count(*) AS n FROM directory WHERE claimed_at = ?")
        .bind(stamp)
        .first<{ n: number }>())!.n;
    expect([await placed(home), await placed(elsewhere)]).toEqual([1, 200]);
    expect([(await signIn(away.email)).status, (await signIn(near.email)).status]).toEqual([200, 200]);
    await expectError(
      await svc.post("/signup/email-password", { email: away.email, password: PASSWORD }),
      409,
      "email-already-in-use",
    );
    await expect(rekey("fence", { last: 4095 })).rejects.toThrow(/re-keyed already/);
  });
});
