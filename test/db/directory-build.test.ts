// Growing a populated one-shard deployment to two (docs/scaling.md, "Growing from one shard"; src/db/directory-build.ts):
// with one shard nothing writes directory keys, so the second shard would find none of the first's users. The pin
// (still one shard) leaves a marker; the Worker that lists DB_1 then writes keys for every change but reads the home
// shard; the build writes the existing rows' keys under load; then slots move as usual. Every answer 2xx, every
// user found by email, every key once where the map says. The map, the marker and the rows this file misplaced go.
import { env } from "cloudflare:test";
import { afterAll, describe, expect, it } from "vitest";
import { slotOfKey } from "../../src/db/directory";
import { type BuildCursor, buildCopy } from "../../src/db/directory-build";
import { slotOfUser } from "../../src/db/shards";
import { DIRECTORY_LAYOUT_KEY, loadSlotMap, SLOT_MAP_KEY } from "../../src/db/slot-map";
import { sha256Hex } from "../../src/lib/crypto";
import {
  expectError,
  follow,
  mailbox,
  NO_VERIFICATION,
  PASSWORD,
  service,
  signUp,
  type TestService,
  uniqueEmail,
  verifyPath,
  type WireSession,
} from "../helpers";
import { allD1, directoryKeysOf } from "../support/shards";

const settings = { ...NO_VERIFICATION, AUTH_RATE_LIMIT_ENABLE: "false" };
/** The deployment before (one shard) and after (DB_1 listed) the deploy that adds the shard. */
const one = service({ ...settings, AUTH_D1_SHARDS: "DB" });
const two = service(settings);
const NAMES = ["DB", "DB_1"];
const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };
const home = env.DB as D1Database;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Step {
  cursor: { retry: [number, number][] } | null;
  waitMs?: number;
  since: number | null;
  map: { ranges: unknown; moving: unknown; leftover: unknown };
}
async function admin(svc: TestService, path: string, json: unknown = {}): Promise<Step> {
  const response = await svc.request("POST", `/admin/shards/${path}`, { headers: ADMIN, json });
  const body = (await response.json()) as Step;
  if (response.status !== 200) throw new Error(`${path}: ${response.status} ${JSON.stringify(body)}`);
  return body;
}
/** A paged step called until its cursor is null (the waits of the fence's settling slept). */
async function pages(path: string, extra: object = {}, onWait?: (step: Step) => Promise<unknown>) {
  for (let cursor: unknown = null; ; ) {
    const step = await admin(two, path, { ...extra, cursor });
    if (step.waitMs) {
      if (onWait) await onWait(step);
      else await sleep(step.waitMs);
      cursor = step.cursor;
    } else if (step.cursor === null) return step;
    else cursor = step.cursor;
  }
}
async function move(first: number, last: number, to: string) {
  await admin(two, "slots/fence", { first, last, to });
  await pages("slots/copy", { graceMs: 0 });
  await admin(two, "slots/switch");
  await pages("slots/purge");
}

const keyOf = (kind: string, value: string) => sha256Hex(`${kind}:${value}`);
/** Where a key is: for each shard that holds it, `index:owner`. */
async function keyPlaces(key: string): Promise<string[]> {
  const rows = await Promise.all(
    allD1().map((d1) =>
      d1.prepare("SELECT user_id FROM directory WHERE key = ?").bind(key).all<{ user_id: string }>(),
    ),
  );
  return rows.flatMap((r, index) => r.results.map((row) => `${index}:${row.user_id}`));
}
async function usersHolding(userId: string): Promise<number[]> {
  const found = await Promise.all(
    allD1().map((d1) => d1.prepare("SELECT 1 AS one FROM users WHERE id = ?").bind(userId).first()),
  );
  return found.flatMap((row, index) => (row ? [index] : []));
}
/** After the move: slots 0–1023 in DB_1, the rest at home. */
const shardOfSlot = (slot: number) => (slot <= 1023 ? 1 : 0);

/**
 * `run` with one shard's map stored and a build's marker (begun long ago) in place, as a `copy` step finds them;
 * both go afterwards, whatever happened.
 */
async function underBuild(run: () => Promise<void>) {
  const version = JSON.stringify({ version: 1, ranges: [[0, 4095, "DB"]], moving: null, leftover: null });
  await home.batch([
    home
      .prepare("INSERT INTO service_settings (key, value, updated_at) VALUES (?, ?, 0)")
      .bind(SLOT_MAP_KEY, version),
    home
      .prepare("INSERT INTO service_settings (key, value, updated_at) VALUES (?, '{\"build\":1}', 0)")
      .bind(DIRECTORY_LAYOUT_KEY),
  ]);
  try {
    await run();
  } finally {
    await home
      .prepare("DELETE FROM service_settings WHERE key IN (?, ?)")
      .bind(SLOT_MAP_KEY, DIRECTORY_LAYOUT_KEY)
      .run();
    await loadSlotMap(env, NAMES, { fresh: true });
  }
}

const made: string[] = [];
const signIn = (svc: TestService, email: string) =>
  svc.post("/signin/email-password", { email, password: PASSWORD });

afterAll(async () => {
  // Whatever happened: a move undone, slots 0–1023 back home, no map, no marker (the suite's default split again).
  await home.prepare("DELETE FROM service_settings WHERE key = ?").bind(DIRECTORY_LAYOUT_KEY).run();
  await loadSlotMap(env, NAMES, { fresh: true });
  const map = (await (
    await two.request("GET", "/admin/shards/slots", { headers: ADMIN })
  ).json()) as Step["map"];
  if (map.moving) await pages("slots/abort");
  else if (map.leftover) await pages("slots/purge");
  const now = (await (await two.request("GET", "/admin/shards/slots", { headers: ADMIN })).json()) as {
    ranges: [number, number, string][];
  };
  if (now.ranges.some(([first, , shard]) => first === 0 && shard === "DB_1")) await move(0, 1023, "DB");
  await home
    .prepare("DELETE FROM service_settings WHERE key IN (?, ?)")
    .bind(SLOT_MAP_KEY, DIRECTORY_LAYOUT_KEY)
    .run();
  await loadSlotMap(env, NAMES, { fresh: true });
  // This file's users whose slot the default split gives DB_1 lived at home: removed there (their rows cascade),
  // with the keys the build wrote at home for slots the default split gives DB_1 (never read there).
  const misplaced = made.filter((id) => slotOfUser(id) >= 2048);
  for (const d1 of allD1()) {
    await d1
      .prepare("DELETE FROM import_ledger WHERE kind = 'user' AND id IN (SELECT value FROM json_each(?))")
      .bind(JSON.stringify(made))
      .run();
  }
  await home.batch([
    home
      .prepare("DELETE FROM users WHERE id IN (SELECT value FROM json_each(?))")
      .bind(JSON.stringify(misplaced)),
    home
      .prepare(
        "DELETE FROM directory WHERE key >= '800' AND (claimed_at = 0 OR user_id IN (SELECT value FROM json_each(?)))",
      )
      .bind(JSON.stringify(made)),
  ]);
});

describe("growing a populated one-shard deployment to two", () => {
  // Threat: the build reads a page, a user's address changes (or the user goes) before the page's keys are written,
  // and the build writes the old address's key after the change gave it back: the old address stays locked to a
  // user who no longer holds it, or, once the user is gone, names nobody. The write checks the row in its statement.
  it("a row that changes between the page's read and its write gets no key for what it gave up", async () => {
    const [moved, gone] = [await signUp(one, uniqueEmail("race")), await signUp(one, uniqueEmail("race"))];
    made.push(moved.user.id, gone.user.id);
    const newEmail = uniqueEmail("raced");
    // The page is read; then, before its keys are written, one user's address changes as a confirmed change does
    // (the new address claimed, the row written) and the other user is deleted.
    const afterRead = async (rows: { id?: string }[]) => {
      if (!rows.some((row) => row.id === moved.user.id)) return;
      await home.batch([
        home
          .prepare("INSERT INTO directory (key, kind, user_id, claimed_at) VALUES (?, 'email', ?, ?)")
          .bind(await keyOf("email", newEmail), moved.user.id, Date.now()),
        home.prepare("UPDATE users SET email = ? WHERE id = ?").bind(newEmail, moved.user.id),
        home.prepare("DELETE FROM users WHERE id = ?").bind(gone.user.id),
      ]);
    };
    const racing = new Proxy(home, {
      get(target, property) {
        if (property !== "prepare") return Reflect.get(target, property).bind(target);
        return (sql: string) => {
          const statement = target.prepare(sql);
          if (!sql.startsWith("SELECT t.rowid AS r, t.id, t.email")) return statement;
          return {
            bind: (...values: unknown[]) => {
              const bound = statement.bind(...values);
              return {
                all: async () => {
                  const read = await bound.all<{ id: string }>();
                  await afterRead(read.results);
                  return read;
                },
              };
            },
          };
        };
      },
    });
    await underBuild(async () => {
      const scope = { env: { ...env, DB: racing }, names: NAMES, now: Date.now() };
      for (let cursor: BuildCursor | null = null, first = true; first || cursor; first = false) {
        cursor = (await buildCopy(scope, { graceMs: 0, cursor })).cursor;
      }
      expect(await keyPlaces(await keyOf("email", moved.user.email))).toEqual([]);
      expect(await keyPlaces(await keyOf("email", gone.user.email))).toEqual([]);
      expect(await keyPlaces(await keyOf("email", newEmail))).toEqual([`0:${moved.user.id}`]);
    });
  });

  // Threat: D1 fails in the middle of a build call, after some of its keys were written: the call answers an error
  // and gives no cursor, so the operator runs it again with the cursor from before. A key written twice must not be
  // counted as held by someone else (the pass would retry it forever) nor written for a second owner; the marker
  // must go only once every row has its key.
  it("a D1 fault in the middle of a call: the call is run again from the cursor before it, every key once", async () => {
    const owners = [await signUp(one, uniqueEmail("fault")), await signUp(one, uniqueEmail("fault"))];
    made.push(...owners.map((session) => session.user.id));
    // The identities' scan (the second source, after the users' page wrote its keys) fails once.
    let failed = 0;
    const faulty = new Proxy(home, {
      get(target, property) {
        if (property !== "prepare") return Reflect.get(target, property).bind(target);
        return (sql: string) => {
          if (failed === 0 && sql.includes("FROM user_providers t")) {
            failed++;
            throw new Error("D1_ERROR: Network connection lost.");
          }
          return target.prepare(sql);
        };
      },
    });
    await underBuild(async () => {
      const scope = (d1: D1Database) => ({ env: { ...env, DB: d1 }, names: NAMES, now: Date.now() });
      await expect(buildCopy(scope(faulty), { graceMs: 0, cursor: null })).rejects.toThrow(/Network/);
      expect(failed).toBe(1);
      // The failed call wrote the users' keys before the fault, and left the marker.
      for (const { user } of owners) {
        expect(await keyPlaces(await keyOf("email", user.email))).toEqual([`0:${user.id}`]);
      }
      expect(
        await home.prepare("SELECT 1 FROM service_settings WHERE key = ?").bind(DIRECTORY_LAYOUT_KEY).first(),
      ).not.toBeNull();
      // Again from the cursor before the failed call (null: the start), to the end of the pass.
      let calls = 0;
      for (let cursor: BuildCursor | null = null, first = true; first || cursor; first = false) {
        const step = await buildCopy(scope(home), { graceMs: 0, cursor });
        expect(step.waitMs, "no key of these rows is held by a young claim").toBeUndefined();
        cursor = step.cursor;
        calls++;
      }
      expect(calls).toBeLessThan(50);
      for (const { user } of owners) {
        expect(await keyPlaces(await keyOf("email", user.email))).toEqual([`0:${user.id}`]);
      }
      expect(
        await home.prepare("SELECT 1 FROM service_settings WHERE key = ?").bind(DIRECTORY_LAYOUT_KEY).first(),
      ).toBeNull();
    });
  });

  // Threat: after the second shard is added, the first shard's users cannot sign in (no keys), an address is held
  // twice, or a change made while the keys are written leaves a key that names the wrong user or none.
  it("pin with one shard, build the directory under load, move slots: every user signs in, every key once", async () => {
    expect(
      await home.prepare("SELECT 1 FROM service_settings WHERE key = ?").bind(SLOT_MAP_KEY).first(),
    ).toBeNull();
    // One shard, populated: 24 users, one of them with a provider identity, an imported session and a file under a
    // client's id and a path (the rows the import and the storage API write), all in DB whatever their slot.
    const users = await Promise.all(
      Array.from({ length: 24 }, async () => {
        const email = uniqueEmail("grow");
        const session = await signUp(one, email);
        made.push(session.user.id);
        return { email, session };
      }),
    );
    const owner = users[0]!.session.user.id;
    const [subject, sessionId, fileId, path] = [
      crypto.randomUUID(),
      crypto.randomUUID(),
      crypto.randomUUID(),
      `grow/${crypto.randomUUID()}.txt`,
    ];
    const hex = () => sha256Hex(crypto.randomUUID());
    const [phone, patHash, refreshHash, ticketHash] = [
      `+1555${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`,
      await hex(),
      await hex(),
      await hex(),
    ];
    await home.batch([
      home.prepare("UPDATE users SET phone_number = ? WHERE id = ?").bind(phone, owner),
      // What the import writes: a PAT and a session under Nhost's ids, a refresh token by hash, a pending ticket
      // that the user's ledger row names.
      home
        .prepare(
          "INSERT INTO personal_access_tokens (id, user_id, token_hash, created_at, expires_at, metadata) VALUES (?, ?, ?, 0, ?, '{}')",
        )
        .bind(crypto.randomUUID(), owner, patHash, Date.now() + 86_400_000),
      home
        .prepare(
          "INSERT INTO tickets (user_id, type, ticket_hash, expires_at) VALUES (?, 'passwordReset', ?, ?)",
        )
        .bind(owner, ticketHash, Date.now() + 86_400_000),
      home
        .prepare(
          "INSERT INTO import_ledger (kind, id, system, fingerprint, parts, imported_at) VALUES ('user', ?, 'nhost', 'x', ?, 0)",
        )
        .bind(owner, JSON.stringify({ ticketHash })),
      home
        .prepare(
          "INSERT INTO user_providers (id, user_id, provider, provider_user_id, created_at, updated_at) VALUES (?, ?, 'github', ?, 0, 0)",
        )
        .bind(crypto.randomUUID(), owner, subject),
      home
        .prepare(
          "INSERT INTO sessions (id, user_id, created_at, last_used_at, expires_at) VALUES (?, ?, 0, 0, ?)",
        )
        .bind(sessionId, owner, Date.now() + 86_400_000),
      home
        .prepare(
          "INSERT INTO files (id, bucket_id, name, size, mime_type, etag, is_uploaded, uploaded_by_user_id, created_at, updated_at, object_key, metadata, path) VALUES (?, 'default', 'a.txt', 1, 'text/plain', '\"x\"', 1, ?, 0, 0, ?, '{}', ?)",
        )
        .bind(fileId, owner, `default/${fileId}`, path),
      home
        .prepare("INSERT INTO refresh_tokens (token_hash, session_id, expires_at) VALUES (?, ?, ?)")
        .bind(refreshHash, sessionId, Date.now() + 86_400_000),
    ]);
    expect(
      await home.prepare("SELECT count(*) AS n FROM directory WHERE user_id = ?").bind(owner).first("n"),
    ).toBe(0);

    // Pinned with one shard: the map holds every slot at home, and the marker asks for a build.
    await admin(one, "slots/pin");
    expect(
      await home
        .prepare("SELECT value FROM service_settings WHERE key = ?")
        .bind(DIRECTORY_LAYOUT_KEY)
        .first("value"),
    ).toBe('{"build":0}');

    // Deployed with DB_1 listed, before the build: lookups read the home shard (no key exists yet), and an address
    // one of them holds is refused by the shard's unique index, its claim given back.
    await loadSlotMap(env, NAMES, { fresh: true });
    expect(
      (await Promise.all(users.slice(0, 6).map((u) => signIn(two, u.email)))).map((r) => r.status),
    ).toEqual(Array(6).fill(200));
    await expectError(
      await two.post("/signup/email-password", { email: users[1]!.email, password: PASSWORD }),
      409,
      "email-already-in-use",
    );
    expect(await keyPlaces(await keyOf("email", users[1]!.email))).toEqual([]);
    // No slot moves before the build: a move carries the keys of its slots, and none are there yet.
    await expectError(
      await two.request("POST", "/admin/shards/slots/fence", {
        headers: ADMIN,
        json: { first: 0, last: 1023, to: "DB_1" },
      }),
      400,
      "invalid-request",
    );

    // Email changes asked for before the build, confirmed during it; six asked for and confirmed during it.
    const changing = users.slice(2, 14).map((u) => ({ ...u, newEmail: uniqueEmail("grown") }));
    const ask = (u: (typeof changing)[number]) =>
      two.post("/user/email/change", { newEmail: u.newEmail }, u.session.accessToken);
    const confirm = async (u: (typeof changing)[number]) => {
      const [mail] = await mailbox(two, u.newEmail);
      return follow(two, verifyPath(mail!));
    };
    expect((await Promise.all(changing.slice(0, 6).map(ask))).map((r) => r.status)).toEqual(
      Array(6).fill(200),
    );

    // Races the build must end right: a sign-up in flight (a young claim of another user's on an address a user
    // holds: it fails on the unique index and gives the claim back), and a claim left by a request that died long ago.
    const [young, stale] = [users[14]!, users[15]!];
    const claimOf = async (u: typeof young, at: number) =>
      home
        .prepare("INSERT INTO directory (key, kind, user_id, claimed_at) VALUES (?, 'email', ?, ?)")
        .bind(await keyOf("email", u.email), crypto.randomUUID(), at)
        .run();
    await claimOf(young, Date.now());
    await claimOf(stale, Date.now() - 6 * 60_000);

    await admin(two, "directory/build/begin");
    await sleep(2000);
    const signUps = Array.from({ length: 12 }, () => uniqueEmail("grew"));
    let held: [number, number][] = [];
    const [answers, changed] = await Promise.all([
      Promise.all([
        ...signUps.map((email) => two.post("/signup/email-password", { email, password: PASSWORD })),
        ...users.slice(16).map((u) => signIn(two, u.email)),
        ...changing.slice(6).map(ask),
      ]),
      Promise.all(changing.slice(0, 6).map(confirm)),
      pages("directory/build/copy", { graceMs: 0 }, async (step) => {
        // The young claim holds the pass at its end; its sign-up then fails and gives it back.
        if (held.length > 0 || !step.cursor?.retry.length) return sleep(step.waitMs!);
        held = step.cursor.retry;
        await home
          .prepare("DELETE FROM directory WHERE key = ?")
          .bind(await keyOf("email", young.email))
          .run();
      }),
    ]);
    const bad = answers.flatMap((r, i) => (r.status === 200 ? [] : [i]));
    expect(
      await Promise.all(bad.map(async (i) => `${i} ${answers[i]!.status} ${await answers[i]!.text()}`)),
    ).toEqual([]);
    expect(changed.every((params) => params.get("refreshToken"))).toBe(true);
    expect(held.length).toBeGreaterThan(0);
    expect(
      await Promise.all(changing.slice(6).map(confirm)).then((all) =>
        all.every((p) => p.get("refreshToken")),
      ),
    ).toBe(true);
    const status = (await (
      await two.request("GET", "/admin/shards/directory/build", { headers: ADMIN })
    ).json()) as Step;
    expect(status.since).toBeNull();

    const newcomers = await Promise.all(
      answers.slice(0, 12).map(async (r) => ((await r.json()) as { session: WireSession }).session.user.id),
    );
    made.push(...newcomers);
    const everyone = [
      ...users.map((u, i) => ({
        id: u.session.user.id,
        email: changing.find((c) => c.email === u.email)?.newEmail ?? users[i]!.email,
      })),
      ...signUps.map((email, i) => ({ id: newcomers[i]!, email })),
    ];

    // Slots 0–1023 move to DB_1 while sign-ins run.
    await loadSlotMap(env, NAMES, { fresh: true });
    const during = everyone.slice(0, 12).map((u) => signIn(two, u.email));
    await move(0, 1023, "DB_1");
    expect((await Promise.all(during)).map((r) => r.status)).toEqual(Array(12).fill(200));
    await loadSlotMap(env, NAMES, { fresh: true });

    // Every user signs in by their address; their row and their address's key are each once, where the map says.
    expect((await Promise.all(everyone.map((u) => signIn(two, u.email)))).map((r) => r.status)).toEqual(
      Array(everyone.length).fill(200),
    );
    expect(await Promise.all(everyone.map((u) => usersHolding(u.id)))).toEqual(
      everyone.map((u) => [shardOfSlot(slotOfUser(u.id))]),
    );
    const places = async (kind: string, value: string) => {
      const key = await keyOf(kind, value);
      return { key: shardOfSlot(slotOfKey(key)), places: await keyPlaces(key) };
    };
    for (const u of everyone) {
      const { key, places: found } = await places("email", u.email);
      expect([u.email, found]).toEqual([u.email, [`${key}:${u.id}`]]);
    }
    // Addresses changed away have no key left; the other kinds' keys are once, with their owner.
    for (const c of changing)
      expect([c.email, await keyPlaces(await keyOf("email", c.email))]).toEqual([c.email, []]);
    for (const [kind, value] of [
      ["phone", phone],
      ["provider", `github:${subject}`],
      ["pat", patHash],
      ["session", sessionId],
      ["refresh", refreshHash],
      ["ticket", ticketHash],
      ["file", fileId],
      ["path", `default/${path}`],
    ]) {
      const { key, places: found } = await places(kind!, value!);
      expect([kind, found]).toEqual([kind, [`${key}:${owner}`]]);
    }
    // Nothing else: what the service minted (sessions, tickets, PATs with their slot) has no key, so the owner holds
    // those nine and every other user its address's alone.
    expect(await Promise.all(everyone.map((u) => directoryKeysOf(u.id)))).toEqual(
      everyone.map((u) => (u.id === owner ? 9 : 1)),
    );
    // The file 20 s on the shared machine at most (a noisy measure: see the report).
  }, 120_000);
});
