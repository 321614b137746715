// The Nhost import over two shards (vitest.config.ts): each imported user is written whole in the shard of their id,
// beside the ledger rows that say so, with the directory keys that find them from an email, an identity, a token or
// a ticket claimed first (src/move-in/user-entries.ts). Files go to their uploader's shard with their id's key.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { CLAIM_WINDOW_MS, claim } from "../../src/db/directory";
import { sha256Hex } from "../../src/lib/crypto";
import { expectError, PASSWORD, service, sessionFromRefresh } from "../helpers";
import { STORAGE } from "../storage/helpers";
import { failingShards, platformErrors, wrapD1 } from "../support/faults";
import {
  allInShards,
  directoryKeysOf,
  directoryOwner,
  directorySize,
  testShards,
  userD1,
} from "../support/shards";
import { admin, sha256Hex as hexOf, importUsers, iso, nhostBcrypt, nhostUser } from "./support";

const svc = service({ AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "false" });
const hash = await nhostBcrypt(PASSWORD);
const shardOf = (id: string) => testShards().indexOfUser(id);

type Nhost = Awaited<ReturnType<typeof nhostUser>>;

/** Nhost users until `each` of them fall in every shard (ids are random). */
async function nhostUsersInBothShards(each: number, overrides: () => Record<string, unknown> = () => ({})) {
  const users: Nhost[] = [];
  const count = (shard: number) => users.filter((u) => shardOf(u.id) === shard).length;
  while (count(0) < each || count(1) < each) {
    const user = await nhostUser(overrides(), hash);
    if (count(shardOf(user.id)) < each) users.push(user);
  }
  return users;
}

/** The owner the directory names for a key, as src/db/directory.ts keys it. */
async function ownerOf(kind: string, value: string): Promise<string | null> {
  return directoryOwner(await sha256Hex(`${kind}:${value}`));
}

const tokenHash = async (token: string) => hexOf(token);
const inShard = async (shard: number, sql: string, ...values: unknown[]) =>
  (await testShards()
    .allD1[shard]!.prepare(sql)
    .bind(...values)
    .first<{ n: number }>())!.n;

describe("users imported over two shards", () => {
  // Threat: a user written half in one database, half in another (or their lookups pointing nowhere) signs in to
  // someone else's account or to none.
  it("writes each user, their sessions, PATs, identities, ticket and ledger in their own shard, with every key at home", async () => {
    let phone = 0;
    const users = await nhostUsersInBothShards(3, () => ({
      phoneNumber: `+1415555${String(++phone).padStart(4, "0")}`,
    }));
    const { results } = await importUsers(
      svc,
      users.map((u) => u.bundle),
    );
    expect(
      results.map((r) => r.outcome),
      JSON.stringify(results),
    ).toEqual(users.map(() => "imported"));
    for (const user of users) {
      const mine = shardOf(user.id);
      const other = 1 - mine;
      for (const [table, column] of [
        ["users", "id"],
        ["sessions", "user_id"],
        ["personal_access_tokens", "user_id"],
        ["user_providers", "user_id"],
        ["tickets", "user_id"],
      ] as const) {
        const sql = `SELECT count(*) AS n FROM ${table} WHERE ${column} = ?`;
        expect(await inShard(mine, sql, user.id), `${table} in its shard`).toBeGreaterThan(0);
        expect(await inShard(other, sql, user.id), `${table} not in the other`).toBe(0);
      }
      const ledger = "SELECT count(*) AS n FROM import_ledger WHERE (kind = 'user' AND id = ?) OR owner = ?";
      expect(await inShard(mine, ledger, user.id, user.id)).toBe(3);
      expect(await inShard(other, ledger, user.id, user.id)).toBe(0);

      const bundle = user.bundle as {
        phoneNumber: string;
        providers: { providerId: string; providerUserId: string }[];
        refreshTokens: { id: string; type: string }[];
      };
      const [session, pat] = bundle.refreshTokens;
      expect(await ownerOf("email", user.email)).toBe(user.id);
      expect(await ownerOf("phone", bundle.phoneNumber)).toBe(user.id);
      const { providerId, providerUserId } = bundle.providers[0]!;
      expect(await ownerOf("provider", `${providerId}:${providerUserId}`)).toBe(user.id);
      expect(await ownerOf("refresh", await tokenHash(user.secrets.refreshToken))).toBe(user.id);
      expect(await ownerOf("session", session!.id)).toBe(user.id);
      expect(await ownerOf("pat", await tokenHash(user.secrets.pat))).toBe(user.id);
      expect(await ownerOf("ticket", await tokenHash(user.secrets.ticket))).toBe(user.id);
      expect(pat!.type).toBe("pat");
    }

    // A second run: nothing written, nothing claimed or given back.
    const keys = await directorySize();
    const rows = await allInShards<Record<string, unknown>>(
      `SELECT * FROM users WHERE id IN (${users.map(() => "?").join(",")}) ORDER BY id`,
      ...users.map((u) => u.id),
    );
    const again = await importUsers(
      svc,
      users.map((u) => u.bundle),
    );
    expect(again.results.map((r) => r.outcome)).toEqual(users.map(() => "unchanged"));
    expect(
      await allInShards(
        `SELECT * FROM users WHERE id IN (${users.map(() => "?").join(",")}) ORDER BY id`,
        ...users.map((u) => u.id),
      ),
    ).toEqual(rows);
    expect(await directorySize()).toEqual(keys);

    // The ledger lists the users of both shards, in order, a page at a time.
    const listed: string[] = [];
    let after: string | null = null;
    do {
      const query: string = `kind=user&limit=2${after ? `&after=${after}` : ""}`;
      const page = (await (
        await svc.request("GET", `/admin/import/nhost/ledger?${query}`, { headers: admin() })
      ).json()) as { items: string[]; next: string | null };
      listed.push(...page.items);
      after = page.next;
    } while (after);
    expect(listed).toEqual([...listed].sort());
    for (const user of users) expect(listed.filter((id) => id === user.id)).toHaveLength(1);
  });

  it("a user of the second shard signs in with their Nhost password, refresh token, PAT and mailed ticket", async () => {
    const [user] = (await nhostUsersInBothShards(1)).filter((u) => shardOf(u.id) === 1);
    const { bundle, secrets, id, email } = user!;
    expect((await importUsers(svc, [bundle])).results).toEqual([{ id, outcome: "imported" }]);

    const renewed = await sessionFromRefresh(svc, secrets.refreshToken);
    expect(renewed.user.id).toBe(id);
    expect((await sessionFromRefresh(svc, renewed.refreshToken)).user.id).toBe(id);
    expect((await svc.post("/signin/pat", { personalAccessToken: secrets.pat })).status).toBe(200);
    const link = await svc.request(
      "GET",
      `/verify?ticket=${encodeURIComponent(secrets.ticket)}&type=emailVerify&redirectTo=${encodeURIComponent("http://localhost:3000/welcome")}`,
    );
    expect(new URL(link.headers.get("location")!).searchParams.get("refreshToken")).toMatch(
      /^[0-9a-f-]{36}$/,
    );
    const signedIn = await svc.post("/signin/email-password", { email, password: PASSWORD });
    expect(signedIn.status).toBe(200);
    expect(await inShard(0, "SELECT count(*) AS n FROM users WHERE id = ?", id)).toBe(0);
  });

  // Threat: the take of a link imported from Nhost (found through its directory entry) ran and D1 lost its answer, or
  // what followed it failed: the ticket was deleted with nothing to put back (and its entry released), so the retry
  // the 503 asks for was refused (invalid-ticket): the user's mailed link spent for nothing.
  it("an imported link whose take's answer was lost works on the retry, once, and its key goes with it", async () => {
    const { bundle, secrets, id } = await nhostUser({ emailVerified: false }, hash);
    expect((await importUsers(svc, [bundle])).results).toEqual([{ id, outcome: "imported" }]);
    const path = `/verify?ticket=${encodeURIComponent(secrets.ticket)}&type=emailVerify&redirectTo=${encodeURIComponent("http://localhost:3000/welcome")}`;
    /** A redirect's query; any other answer as its status, for `error` to name. */
    const outcome = (answer: Response) =>
      answer.status === 302
        ? new URL(answer.headers.get("location")!).searchParams
        : new URLSearchParams({ error: String(answer.status) });
    // Only the take (the claim's UPDATE; before the fix a DELETE), applied and then its answer lost.
    const take = /^(update|delete from) "tickets"/;
    const { bindings, fault } = failingShards(env, { match: take, when: "after", times: 1 });
    const failing = service({ AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "false", ...bindings });

    const first = outcome(await failing.request("GET", path));
    expect(fault.failures).toBe(1);
    // The fault: the handler's 503, or the redirect naming it.
    expect(["503", "service-unavailable"]).toContain(first.get("error"));
    // Put back: the row and the key that finds it.
    expect(await ownerOf("ticket", await tokenHash(secrets.ticket))).toBe(id);
    const retry = outcome(await failing.request("GET", path));
    expect(retry.get("error"), `${retry}`).toBeNull();
    expect(retry.get("refreshToken")).toMatch(/^[0-9a-f-]{36}$/);
    const third = outcome(await svc.request("GET", path));
    expect(third.get("error"), `${third}`).toBe("invalid-ticket");
    // Spent for good: no row under any key (a claim's `taken:…` included), and its key given back.
    expect(await inShard(shardOf(id), "SELECT count(*) AS n FROM tickets WHERE user_id = ?", id)).toBe(0);
    expect(await ownerOf("ticket", await tokenHash(secrets.ticket))).toBeNull();
  });
});

describe("keys another user holds", () => {
  // Threat: two shards each holding an account for one address, so that whoever signs up second reads the other's.
  it("an email held by a user of the other shard skips the imported user, as the unique index did", async () => {
    const [inShard1] = (await nhostUsersInBothShards(1)).filter((u) => shardOf(u.id) === 1);
    // A user created here, whose id (random) lands wherever: the import must see them across shards.
    let nativeId: string;
    let email: string;
    do {
      email = `native-${crypto.randomUUID().slice(0, 8)}@example.com`;
      const created = await svc.request("POST", "/admin/users", { json: { email }, headers: admin() });
      nativeId = ((await created.json()) as { id: string }).id;
    } while (shardOf(nativeId) !== 0);
    const { results } = await importUsers(svc, [{ ...inShard1!.bundle, email }]);
    expect(results[0]).toMatchObject({
      outcome: "skipped",
      reasons: [{ reason: expect.stringMatching(/belongs to another user/) }],
    });
    expect(await inShard(1, "SELECT count(*) AS n FROM users WHERE id = ?", inShard1!.id)).toBe(0);
    expect(await ownerOf("email", email)).toBe(nativeId);
    // Nothing of the skipped user was claimed.
    expect(await directoryKeysOf(inShard1!.id)).toBe(0);
  });

  it("a young claim of another user (a sign-up in flight) skips the user; a stale one is taken over", async () => {
    const shards = testShards();
    const [young, stale] = await nhostUsersInBothShards(1);
    const now = Date.now();
    await claim(shards, crypto.randomUUID(), [{ kind: "email", value: young!.email }], now);
    await claim(
      shards,
      crypto.randomUUID(),
      [{ kind: "email", value: stale!.email }],
      now - CLAIM_WINDOW_MS - 1000,
    );
    const { results } = await importUsers(svc, [young!.bundle, stale!.bundle]);
    expect(results[0]).toMatchObject({
      outcome: "skipped",
      reasons: [{ reason: `email ${young!.email} belongs to another user` }],
    });
    expect(results[1]).toEqual({ id: stale!.id, outcome: "imported" });
    expect(await ownerOf("email", stale!.email)).toBe(stale!.id);
    expect(await ownerOf("provider", `github:gh-${young!.id.slice(0, 8)}`)).toBeNull();
  });

  it("an email changed in Nhost is claimed anew and the old one given back; a removal gives back every key", async () => {
    const [user] = (await nhostUsersInBothShards(1)).filter((u) => shardOf(u.id) === 1);
    await importUsers(svc, [user!.bundle]);
    const newEmail = `renamed-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const renamed = { ...user!.bundle, email: newEmail, updatedAt: iso(Date.now()) };
    expect((await importUsers(svc, [renamed])).results[0]!.outcome).toBe("updated");
    expect(await ownerOf("email", newEmail)).toBe(user!.id);
    expect(await ownerOf("email", user!.email)).toBeNull();
    // The old address is free: a new user takes it, in whichever shard.
    const taken = await svc.request("POST", "/admin/users", {
      json: { email: user!.email },
      headers: admin(),
    });
    expect(taken.status).toBe(201);

    const removal = await svc.request("POST", "/admin/import/nhost/removals", {
      json: { kind: "user", ids: [user!.id] },
      headers: admin(),
    });
    expect(await removal.json()).toEqual({ results: [{ id: user!.id, outcome: "deleted" }] });
    expect(
      await userD1(user!.id).prepare("SELECT id FROM users WHERE id = ?").bind(user!.id).first(),
    ).toBeNull();
    expect(await ownerOf("email", newEmail)).toBeNull();
    await expectError(
      await svc.post("/token", { refreshToken: user!.secrets.refreshToken }),
      401,
      "invalid-refresh-token",
    );
    // Listed by Nhost again, the user comes back; its tokens stay tombstoned in its shard's ledger.
    const later = await importUsers(svc, [renamed]);
    expect(later.results[0]!.outcome).toBe("imported");
    await expectError(
      await svc.post("/token", { refreshToken: user!.secrets.refreshToken }),
      401,
      "invalid-refresh-token",
    );
  });
});

describe("a user's batch and a fault at it", () => {
  const writeLedger = /insert into "import_ledger"/;
  const readLedger = /^select .* from "import_ledger"/;
  const importThrough = (bindings: Record<string, D1Database>, users: unknown[]) =>
    service({ AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "false", ...bindings }).request(
      "POST",
      "/admin/import/nhost/users",
      { json: { users, dryRun: false }, headers: admin() },
    );
  /** Every shard with its statements and batches through `run` (one hook across the shards, as `failingShards`). */
  const shardsThrough = (run: Parameters<typeof wrapD1>[1]) =>
    Object.fromEntries(
      String(env.AUTH_D1_SHARDS)
        .split(",")
        .map((name) => [name, wrapD1((env as Record<string, unknown>)[name] as D1Database, run)]),
    );
  const accountsWith = async (email: string) =>
    (await allInShards<{ n: number }>("SELECT count(*) AS n FROM users WHERE email = ?", email)).reduce(
      (sum, row) => sum + row.n,
      0,
    );
  /** The user's address, identity and token find them; it signs in; no one else signs up with it. */
  async function onlyAccountOf(user: Nhost): Promise<void> {
    const { providerId, providerUserId } = (
      user.bundle as { providers: { providerId: string; providerUserId: string }[] }
    ).providers[0]!;
    expect(await ownerOf("email", user.email)).toBe(user.id);
    expect(await ownerOf("provider", `${providerId}:${providerUserId}`)).toBe(user.id);
    expect(await ownerOf("refresh", await tokenHash(user.secrets.refreshToken))).toBe(user.id);
    const signedIn = await svc.post("/signin/email-password", { email: user.email, password: PASSWORD });
    expect(signedIn.status).toBe(200);
    expect(((await signedIn.json()) as { session: { user: { id: string } } }).session.user.id).toBe(user.id);
    expect((await sessionFromRefresh(svc, user.secrets.refreshToken)).user.id).toBe(user.id);
    // Random ids: at least one of four sign-ups falls in the other shard, but for one run in sixteen.
    for (let attempt = 0; attempt < 4; attempt++)
      await expectError(
        await svc.post("/signup/email-password", { email: user.email, password: `${PASSWORD}-someone-else` }),
        409,
        "email-already-in-use",
      );
    expect(await accountsWith(user.email)).toBe(1);
  }

  // Threat: a shard's batch ran and D1 lost its answer: the import gave the users' keys back while their rows held
  // them, and the retry, idempotent through the ledger ("unchanged"), claimed nothing again: the address signed in to
  // no account, and anyone's sign-up whose user fell in the other shard made a second account for it.
  it("its answer lost: the rows are read back, the import completes, and every key stays its user's", async () => {
    const users = await nhostUsersInBothShards(1);
    const { bindings, fault } = failingShards(env, { match: writeLedger, when: "after", times: 1 });
    const first = await importThrough(
      bindings,
      users.map((u) => u.bundle),
    );
    expect(fault.failures).toBe(1);
    expect(first.status).toBe(200);
    expect(((await first.json()) as { results: unknown[] }).results).toEqual(
      users.map((u) => ({ id: u.id, outcome: "imported" })),
    );
    const again = await importUsers(
      svc,
      users.map((u) => u.bundle),
    );
    expect(again.results.map((r) => r.outcome)).toEqual(["unchanged", "unchanged"]);
    for (const user of users) await onlyAccountOf(user);
  });

  // Threat: as above, and the read that would tell whether the rows are there fails too: given back then, the keys
  // may leave rows unreachable and their address free for a second account; kept, they cost nothing once the retry
  // finds the user here, and a key whose user never arrived is taken over after the claim window.
  it("its answer lost and the ledger unreadable: a 503, the keys kept, the retry finds the user here", async () => {
    const [user] = await nhostUsersInBothShards(1);
    const failed: string[] = [];
    const bindings = shardsThrough(async (sql, work) => {
      if (failed.length === 0 && writeLedger.test(sql)) {
        failed.push(sql);
        await work();
        throw platformErrors.d1();
      }
      if (failed.length === 1 && readLedger.test(sql)) {
        failed.push(sql);
        throw platformErrors.d1();
      }
      return work();
    });
    const first = await importThrough(bindings, [user!.bundle]);
    expect(first.status).toBe(503);
    expect(first.headers.get("retry-after")).not.toBeNull();
    expect(await ownerOf("email", user!.email)).toBe(user!.id);
    expect((await importUsers(svc, [user!.bundle])).results).toEqual([
      { id: user!.id, outcome: "unchanged" },
    ]);
    await onlyAccountOf(user!);
    // The two statements failed were the user's batch and the ledger's read after it.
    expect(failed).toHaveLength(2);
  });

  // Threat: the other way, keys kept after a batch that did not run: the address refused to everyone for the claim
  // window, with no account behind it.
  it("failed before it ran: nothing written, the keys given back, the retry imports", async () => {
    const [user] = await nhostUsersInBothShards(1);
    const { bindings, fault } = failingShards(env, { match: writeLedger, when: "before", times: 1 });
    const first = await importThrough(bindings, [user!.bundle]);
    expect(first.status).toBe(503);
    expect(fault.failures).toBe(1);
    expect(await inShard(shardOf(user!.id), "SELECT count(*) AS n FROM users WHERE id = ?", user!.id)).toBe(
      0,
    );
    expect(await directoryKeysOf(user!.id)).toBe(0);
    expect((await importUsers(svc, [user!.bundle])).results).toEqual([{ id: user!.id, outcome: "imported" }]);
    await onlyAccountOf(user!);
  });
});

describe("files imported over two shards", () => {
  const b64url = (value: unknown) =>
    btoa(String.fromCharCode(...new TextEncoder().encode(JSON.stringify(value))))
      .replace(/\+/g, "-")
      .replace(/\//g, "_")
      .replace(/=+$/, "");

  it("go to their uploader's shard (or the file's own) with their id's key, download, and are removed whole", async () => {
    const bytes = new TextEncoder().encode("a file of the second shard");
    let uploader: string;
    do uploader = crypto.randomUUID();
    while (shardOf(uploader) !== 1);
    const records = [uploader, null].map((uploadedByUserId) => ({
      id: crypto.randomUUID(),
      bucketId: "default",
      name: "moved.txt",
      size: bytes.length,
      mimeType: "text/plain",
      etag: null,
      isUploaded: true,
      uploadedByUserId,
      metadata: {},
      createdAt: iso(Date.now() - 1000),
      updatedAt: iso(Date.now() - 1000),
    }));
    for (const record of records) {
      const owner = record.uploadedByUserId ?? `file:${record.id}`;
      const put = await svc.request("PUT", `/admin/import/nhost/files/${record.id}`, {
        body: bytes,
        headers: { ...admin(), "content-type": "application/octet-stream", "x-import-file": b64url(record) },
      });
      expect(await put.json()).toEqual({ id: record.id, outcome: "imported" });
      const sql = "SELECT count(*) AS n FROM files WHERE id = ?";
      expect(await inShard(shardOf(owner), sql, record.id)).toBe(1);
      expect(await inShard(1 - shardOf(owner), sql, record.id)).toBe(0);
      expect(await ownerOf("file", record.id)).toBe(owner);
      const download = await svc.request("GET", `${STORAGE}/files/${record.id}`, { headers: admin() });
      expect(download.status).toBe(200);
      expect(await download.text()).toBe("a file of the second shard");
    }
    const plan = await svc.request("POST", "/admin/import/nhost/files/plan", {
      json: { files: records },
      headers: admin(),
    });
    expect(((await plan.json()) as { results: { outcome: string }[] }).results.map((r) => r.outcome)).toEqual(
      ["unchanged", "unchanged"],
    );
    const removal = await svc.request("POST", "/admin/import/nhost/removals", {
      json: { kind: "file", ids: records.map((r) => r.id) },
      headers: admin(),
    });
    expect(
      ((await removal.json()) as { results: { outcome: string }[] }).results.map((r) => r.outcome),
    ).toEqual(["deleted", "deleted"]);
    for (const record of records) {
      expect(await ownerOf("file", record.id)).toBeNull();
      expect((await svc.request("GET", `${STORAGE}/files/${record.id}`, { headers: admin() })).status).toBe(
        404,
      );
    }
  });
});
