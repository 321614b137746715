// The admin API and the console over two shards (vitest.config.ts): users live in the shard of their id's slot
// (src/db/shards.ts), so every list merges both, in the order one database would give, and pages through them with
// positions every shard understands (src/admin/across-shards.ts, user-order.ts).
import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import type { AdminUser, WireAuditEvent } from "../../src/admin/wire";
import {
  expectError,
  NO_VERIFICATION,
  PASSWORD,
  SERVER,
  service,
  uniqueAddress,
  uniqueEmail,
} from "../helpers";
import { allD1, allInShards, testShards, userD1 } from "../support/shards";

const svc = service(NO_VERIFICATION);
const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };
const admin = (method: string, path: string, json?: unknown) =>
  svc.request(method, `/admin${path}`, { headers: ADMIN, json });
const shardOf = (id: string) => testShards().indexOfUser(id);
const BASE = "/admin/console";
const ORIGIN = new URL(SERVER).origin;

async function createUser(body: Record<string, unknown>): Promise<AdminUser> {
  const response = await admin("POST", "/users", body);
  expect(response.status).toBe(201);
  return (await response.json()) as AdminUser;
}

/** At least `total` users tagged `tag`, and at least `each` in every shard (ids are random: create until so). */
async function usersInBothShards(tag: string, total: number, each: number): Promise<AdminUser[]> {
  const created: AdminUser[] = [];
  const count = (shard: number) => created.filter((user) => shardOf(user.id) === shard).length;
  while (created.length < total || count(0) < each || count(1) < each) {
    created.push(await createUser({ email: `${tag}-${created.length}@example.com` }));
  }
  return created;
}

/** Every page of the admin API's list for `search`, `limit` at a time, following `nextCursor`. */
async function pageThrough(search: string, limit: number): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const query: string = `/users?search=${search}&limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`;
    const response = await admin("GET", query);
    expect(response.status).toBe(200);
    const page = (await response.json()) as { items: AdminUser[]; nextCursor: string | null };
    expect(page.items.length).toBeLessThanOrEqual(limit);
    ids.push(...page.items.map((user) => user.id));
    cursor = page.nextCursor;
    pages++;
  } while (cursor && pages < 100);
  return { ids, pages };
}

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

describe("the admin API's user list over two shards", () => {
  const tag = `shardlist${crypto.randomUUID().slice(0, 6)}`;
  let created: AdminUser[];
  beforeAll(async () => {
    created = await usersInBothShards(tag, 30, 8);
    // Equal creation times in both shards: the merge must fall back to the id exactly as SQLite orders it.
    const base = Date.now() - 60_000;
    for (const [index, user] of created.entries()) {
      await userD1(user.id)
        .prepare("UPDATE users SET created_at = ? WHERE id = ?")
        .bind(base + (index % 4), user.id)
        .run();
    }
  }, 60_000);

  // Threat: an operator paging through users to audit or export them silently misses the users of a shard, or sees
  // one twice, because the shards were paged apart.
  it("pages newest first through the users of both shards, 7 at a time, with no duplicate and no gap", async () => {
    const rows = await allInShards<{ id: string; created_at: number }>(
      `SELECT id, created_at FROM users WHERE instr(email, ?) > 0`,
      tag,
    );
    expect(new Set(rows.map((row) => shardOf(row.id)))).toEqual(new Set([0, 1]));
    const expected = rows
      .sort((a, b) => b.created_at - a.created_at || byText(b.id, a.id))
      .map((row) => row.id);
    const { ids, pages } = await pageThrough(tag, 7);
    expect(ids).toEqual(expected);
    expect(new Set(ids).size).toBe(created.length);
    expect(pages).toBe(Math.ceil(created.length / 7));
  });

  it("searches both shards: by the tag, and by the id of a user in either shard", async () => {
    for (const shard of [0, 1]) {
      const user = created.find((u) => shardOf(u.id) === shard)!;
      const found = (await (await admin("GET", `/users?search=${user.id}`)).json()) as { items: AdminUser[] };
      expect(found.items.map((u) => u.id)).toEqual([user.id]);
      const byEmail = (await (
        await admin("GET", `/users?search=${encodeURIComponent(user.email!)}`)
      ).json()) as {
        items: AdminUser[];
      };
      expect(byEmail.items.map((u) => u.id)).toEqual([user.id]);
    }
    const all = (await (await admin("GET", `/users?search=${tag}&limit=500`)).json()) as {
      items: AdminUser[];
    };
    expect(all.items).toHaveLength(created.length);
  });

  it("reads, changes and deletes a user of either shard in that shard only", async () => {
    for (const shard of [0, 1]) {
      const user = created.find((u) => shardOf(u.id) === shard)!;
      const other = testShards().allD1[1 - shard]!;
      expect((await admin("GET", `/users/${user.id}`)).status).toBe(200);
      const patched = await admin("PATCH", `/users/${user.id}`, { displayName: `In shard ${shard}` });
      expect(patched.status).toBe(200);
      const row = await userD1(user.id)
        .prepare("SELECT display_name AS name FROM users WHERE id = ?")
        .bind(user.id)
        .first<{ name: string }>();
      expect(row?.name).toBe(`In shard ${shard}`);
      expect(await other.prepare("SELECT id FROM users WHERE id = ?").bind(user.id).first()).toBeNull();
      expect((await admin("DELETE", `/users/${user.id}`)).status).toBe(204);
      await expectError(await admin("GET", `/users/${user.id}`), 404, "not-found");
      // The address is free again, for a new user in whichever shard its id falls.
      const again = await createUser({ email: user.email });
      expect(again.email).toBe(user.email);
      created[created.indexOf(user)] = again;
    }
  });
});

describe("the console over two shards", () => {
  const tag = `shardconsole${crypto.randomUUID().slice(0, 6)}`;
  let created: AdminUser[];
  let cookie: string;
  beforeAll(async () => {
    created = await usersInBothShards(tag, 60, 20);
    // Seen at one of three times, or never: ties and users without the key, in both shards.
    for (const [index, user] of created.entries()) {
      if (index % 4 === 3) continue;
      await userD1(user.id)
        .prepare("UPDATE users SET last_seen = ? WHERE id = ?")
        .bind(1_700_000_000_000 + (index % 3), user.id)
        .run();
    }
    const login = await svc.request("POST", `${BASE}/login`, {
      body: new URLSearchParams({ secret: String(env.AUTH_ADMIN_SECRET) }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN },
    });
    cookie = login.headers.get("set-cookie")!.split(";")[0]!;
  }, 120_000);

  const getPage = async (path: string) => {
    const response = await svc.request("GET", `${BASE}${path}`, { headers: { cookie } });
    expect(response.status).toBe(200);
    return response.text();
  };
  const idsOn = (page: string) => [...page.matchAll(/\/users\/([0-9a-f-]{36})">/g)].map((match) => match[1]!);
  const linkOn = (page: string, label: string) => {
    const href = new RegExp(`<a href="\\?([^"]*)">${label}</a>`).exec(page)?.[1];
    return href?.replace(/&amp;/g, "&");
  };

  // Threat: the console's list, filtered and ordered, skips or repeats users of one shard at a page boundary.
  it.each([
    ["email", (a: Row, b: Row) => byText(a.email ?? "", b.email ?? "") || byText(a.id, b.id)],
    [
      "last-seen",
      (a: Row, b: Row) =>
        (a.last_seen === null ? 1 : 0) - (b.last_seen === null ? 1 : 0) ||
        (b.last_seen ?? 0) - (a.last_seen ?? 0) ||
        byText(a.id, b.id),
    ],
    ["oldest", (a: Row, b: Row) => a.created_at - b.created_at || byText(a.id, b.id)],
  ] as const)("pages forwards and back in the %s order across both shards", async (sort, order) => {
    const rows = await allInShards<Row>(
      "SELECT id, email, last_seen, created_at FROM users WHERE instr(email, ?) > 0",
      tag,
    );
    const expected = rows.sort(order).map((row) => row.id);
    const first = await getPage(`/users?search=${tag}&sort=${sort}`);
    expect(linkOn(first, "← Previous page")).toBeUndefined();
    const next = linkOn(first, "Next page →");
    expect(next).toBeDefined();
    const second = await getPage(`/users?${next}`);
    expect(linkOn(second, "Next page →")).toBeUndefined();
    expect([...idsOn(first), ...idsOn(second)]).toEqual(expected);
    const back = await getPage(`/users?${linkOn(second, "← Previous page")}`);
    expect(idsOn(back)).toEqual(idsOn(first));
    expect(linkOn(back, "← Previous page")).toBeUndefined();
  });

  it("exports the users of both shards as one CSV, in the list's order", async () => {
    const response = await svc.request("GET", `${BASE}/users.csv?search=${tag}&sort=email`, {
      headers: { cookie },
    });
    const lines = (await response.text()).trim().split("\r\n").slice(1);
    const ids = lines.map((line) => line.split(",")[0]!);
    expect(ids).toEqual(
      [...created].sort((a, b) => byText(a.email!, b.email!) || byText(a.id, b.id)).map((u) => u.id),
    );
  });

  it("pages a bucket's files of both shards, newest first, with no duplicate and no gap", async () => {
    const tag = `shardfile${crypto.randomUUID().slice(0, 6)}`;
    // A bucket of its own: the default one holds whatever the other files of this worker uploaded. Home holds the
    // bucket; each shard a copy of its row, as an upload there writes one (files.bucket_id's foreign key).
    for (const d1 of allD1()) {
      await d1
        .prepare(
          "INSERT INTO buckets (id, min_upload_file_size, max_upload_file_size, cache_control, presigned_urls_enabled, download_expiration, allowed_mime_types, rules, created_at, updated_at) SELECT ?, min_upload_file_size, max_upload_file_size, cache_control, presigned_urls_enabled, download_expiration, allowed_mime_types, rules, created_at, updated_at FROM buckets WHERE id = 'default'",
        )
        .bind(tag)
        .run();
    }
    const rows: { name: string; id: string; at: number }[] = [];
    // Records of uploaders of both shards, written where they live; equal times across shards.
    for (let i = 0; i < 56; i++) {
      const id = crypto.randomUUID();
      const uploader = created[i % created.length]!.id;
      await userD1(uploader)
        .prepare(
          "INSERT INTO files (id, bucket_id, name, size, mime_type, etag, is_uploaded, uploaded_by_user_id, created_at, updated_at, object_key, metadata) VALUES (?, ?, ?, 1, 'text/plain', '\"x\"', 1, ?, ?, 0, ?, '{}')",
        )
        .bind(id, tag, `${tag}-${i}`, uploader, 1_600_000_000_000 + (i % 5), `${tag}/${id}`)
        .run();
      rows.push({ name: `${tag}-${i}`, id, at: 1_600_000_000_000 + (i % 5) });
    }
    const namesOn = (page: string) =>
      [...page.matchAll(new RegExp(`<td>(${tag}-\\d+)</td>`, "g"))].map((m) => m[1]!);
    const first = await getPage(`/storage/${tag}`);
    expect(first).not.toContain("← Newest");
    const older = /<a href="\?after=([^"]+)">Older →<\/a>/.exec(first)?.[1];
    expect(older).toBeDefined();
    const second = await getPage(`/storage/${tag}?after=${older}`);
    expect(second).toContain("← Newest");
    expect(second).not.toContain("Older →");
    const listed = [...namesOn(first), ...namesOn(second)];
    expect(new Set(listed).size).toBe(listed.length);
    expect(listed).toEqual(rows.sort((a, b) => b.at - a.at || byText(b.id, a.id)).map((row) => row.name));
  });

  it("counts the users of both shards on the overview", async () => {
    const total = (text: string) =>
      Number(/<span class="value"><a [^>]*>(\d+)<\/a><\/span><span class="label">users</.exec(text)![1]);
    const counted = await allInShards<{ n: number }>("SELECT count(*) AS n FROM users");
    const before = total(await getPage("/overview"));
    expect(before).toBe(counted.reduce((sum, row) => sum + row.n, 0));
    const more = await usersInBothShards(`${tag}-more`, 2, 1);
    expect(total(await getPage("/overview"))).toBe(before + more.length);
  });
});

type Row = { id: string; email: string | null; last_seen: number | null; created_at: number };

describe("the audit log over two shards", () => {
  // Threat: an operator investigating an incident reads a log that leaves out the events of half of the users.
  it("merges both shards newest first, pages them without duplicates, and reads one user's from their shard", async () => {
    const tag = `shardaudit${crypto.randomUUID().slice(0, 6)}`;
    const created = await usersInBothShards(tag, 6, 3);
    const events: WireAuditEvent[] = [];
    let cursor: string | null = null;
    do {
      const response = await admin(
        "GET",
        `/audit?type=admin.user.create&limit=5${cursor ? `&cursor=${cursor}` : ""}`,
      );
      expect(response.status).toBe(200);
      const page = (await response.json()) as { items: WireAuditEvent[]; nextCursor: string | null };
      events.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    expect(new Set(events.map((event) => event.id)).size).toBe(events.length);
    const sorted = [...events].sort((a, b) => byText(b.at, a.at) || byText(b.id, a.id));
    expect(events.map((event) => event.id)).toEqual(sorted.map((event) => event.id));
    const named = events.flatMap((event) => (event.userId ? [event.userId] : []));
    for (const user of created) expect(named.filter((id) => id === user.id)).toHaveLength(1);
    const rows = await allInShards<{ n: number }>(
      "SELECT count(*) AS n FROM audit_events WHERE type = 'admin.user.create'",
    );
    expect(events).toHaveLength(rows.reduce((sum, row) => sum + row.n, 0));

    for (const shard of [0, 1]) {
      const user = created.find((u) => shardOf(u.id) === shard)!;
      const mine = (await (await admin("GET", `/audit?userId=${user.id}`)).json()) as {
        items: WireAuditEvent[];
      };
      expect(mine.items.map((event) => event.type).sort()).toEqual(["admin.user.create", "signup"]);
    }
  });

  it("names the users of both shards by email, and a user's page shows their failed sign-ins kept at home", async () => {
    const tag = `shardnames${crypto.randomUUID().slice(0, 6)}`;
    const created = await usersInBothShards(tag, 2, 1);
    const login = await svc.request("POST", `${BASE}/login`, {
      body: new URLSearchParams({ secret: String(env.AUTH_ADMIN_SECRET) }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN },
    });
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    const page = await (
      await svc.request("GET", `${BASE}/audit?type=admin.user.create`, { headers: { cookie } })
    ).text();
    for (const user of created) expect(page).toContain(user.email!);

    // A user of the second shard: their own events are there, a failed sign-in with their address at home.
    let user: AdminUser;
    let email: string;
    do {
      email = uniqueEmail("shard-failure");
      user = await createUser({ email, password: PASSWORD });
    } while (shardOf(user.id) !== 1);
    // From an address no other test uses: a shared one may be past its ten individual failures in this window, when
    // failures are folded into one `signin.failure.repeated` event without a user (src/audit/sign-in-failures.ts).
    await svc.request("POST", "/signin/email-password", {
      headers: { "cf-connecting-ip": uniqueAddress() },
      json: { email, password: "not the password" },
    });
    const userPage = await (
      await svc.request("GET", `${BASE}/audit?user=${encodeURIComponent(email)}`, { headers: { cookie } })
    ).text();
    expect(userPage).toContain(`<td class="tight">signin.failure</td>`);
    expect(userPage).toContain(`<td class="tight">admin.user.create</td>`);
  });
});
