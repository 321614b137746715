// The Postgres mirror's writer (src/mirror/) applied directly to a real Postgres, without the queue: the order and
// concurrency guarantees a queue cannot be made to show on demand (contract move-in §5: "queues don't keep order";
// a late delivery never brings back a deleted row), and the tables it creates against Nhost's own migrations. The
// database is the compatibility server's mirror (test/compat/mirror-database.ts); every row here has ids of its own.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { BucketRow } from "../../src/db/schema";
import type { EventType, StreamEvent } from "../../src/events/types";
import { type ApplyDeps, applyEvent } from "../../src/mirror/apply";
import { inTransaction } from "../../src/mirror/postgres";
import { userRowOf } from "../../src/mirror/rows";
import { ensureSchema, forgetSchema } from "../../src/mirror/schema";
import { releaseTakenIdentities, writeUsers } from "../../src/mirror/user-writes";
import { loadNhostSchema } from "../support/postgres";

const { url, adminUrl } = inject("mirrorDatabase");
const clients: pg.Client[] = [];

async function connect(connectionString = url): Promise<pg.Client> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  clients.push(client);
  return client;
}

let db: pg.Client;
beforeAll(async () => {
  db = await connect();
  forgetSchema();
  await ensureSchema(db);
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.end().catch(() => {})));
});

const NOW = "2026-01-02T03:04:05.678Z";
const noBuckets: ApplyDeps = { bucket: async () => null };

function userSnapshot(id: string, changes: Record<string, unknown> = {}) {
  return {
    id,
    createdAt: NOW,
    updatedAt: NOW,
    lastSeen: null,
    disabled: false,
    displayName: "",
    avatarUrl: "",
    locale: "en",
    email: `${id.slice(0, 8)}@example.com`,
    emailVerified: false,
    newEmail: null,
    phoneNumber: null,
    phoneNumberVerified: false,
    defaultRole: "user",
    roles: ["user", "me"],
    isAnonymous: false,
    activeMfaType: null,
    metadata: null,
    providers: [],
    ...changes,
  };
}

function event(
  type: EventType,
  subject: string,
  sequence: number,
  data: Record<string, unknown>,
): StreamEvent {
  return {
    id: `evt_${crypto.randomUUID().replace(/-/g, "")}`,
    type,
    timestamp: NOW,
    subject,
    sequence,
    data,
  };
}

const userEvent = (type: EventType, id: string, sequence: number, changes: Record<string, unknown> = {}) =>
  event(type, id, sequence, { user: userSnapshot(id, changes) });

async function mirroredUser(id: string) {
  const { rows } = await db.query("SELECT display_name FROM auth.users WHERE id = $1", [id]);
  return rows[0] as { display_name: string } | undefined;
}

describe("the mirror applies events in any order", () => {
  // Threat: a queue redelivers an older event after a newer one and the app's Postgres goes back in time.
  it("an older event applied after a newer one changes nothing", async () => {
    const id = crypto.randomUUID();
    expect(await applyEvent(db, userEvent("user.created", id, 1, { displayName: "one" }), noBuckets)).toBe(
      "written",
    );
    expect(await applyEvent(db, userEvent("user.updated", id, 3, { displayName: "three" }), noBuckets)).toBe(
      "written",
    );
    expect(await applyEvent(db, userEvent("user.updated", id, 2, { displayName: "two" }), noBuckets)).toBe(
      "stale",
    );
    expect(await mirroredUser(id)).toEqual({ display_name: "three" });
    // The same event twice (at-least-once delivery) is harmless.
    expect(await applyEvent(db, userEvent("user.updated", id, 3, { displayName: "three" }), noBuckets)).toBe(
      "written",
    );
    expect(await mirroredUser(id)).toEqual({ display_name: "three" });
  });

  // Threat: a late user.updated resurrects a user the service deleted (and the app's data hanging off them).
  it("a user.updated delivered after user.deleted does not bring the user back", async () => {
    const id = crypto.randomUUID();
    await applyEvent(db, userEvent("user.created", id, 1), noBuckets);
    const deleted = event("user.deleted", id, 3, {
      user: { id, email: null, phoneNumber: null, displayName: "" },
    });
    expect(await applyEvent(db, deleted, noBuckets)).toBe("written");
    expect(await applyEvent(db, userEvent("user.updated", id, 2, { displayName: "late" }), noBuckets)).toBe(
      "stale",
    );
    expect(await mirroredUser(id)).toBeUndefined();
    const { rows } = await db.query("SELECT count(*)::int AS n FROM auth.user_roles WHERE user_id = $1", [
      id,
    ]);
    expect(rows[0].n).toBe(0);
  });

  // Threat: a late file.uploaded shows the app a file the service deleted.
  it("a file.uploaded delivered after file.deleted does not bring the file back", async () => {
    const owner = crypto.randomUUID();
    const id = crypto.randomUUID();
    const file = {
      id,
      bucketId: "default",
      name: "late.txt",
      size: 4,
      mimeType: "text/plain",
      etag: '"abcd"',
      isUploaded: true,
      uploadedByUserId: owner,
      metadata: null,
      createdAt: NOW,
      updatedAt: NOW,
    };
    const bucket: ApplyDeps = { bucket: async () => defaultBucket };
    await applyEvent(
      db,
      event("file.deleted", owner, 5, { file: { id, bucketId: "default", name: "late.txt" } }),
      bucket,
    );
    expect(await applyEvent(db, event("file.uploaded", owner, 4, { file }), bucket)).toBe("stale");
    const { rows } = await db.query("SELECT id FROM storage.files WHERE id = $1", [id]);
    expect(rows).toEqual([]);
  });

  // Threat: a GitHub account unlinked and linked again (a new identity row, the same account) can never be mirrored:
  // Nhost's unique (provider_id, provider_user_id) refuses the new row while the old one is there.
  it("replaces a provider identity that came back under a new id", async () => {
    const id = crypto.randomUUID();
    const identity = () => ({
      id: crypto.randomUUID(),
      provider: "github",
      providerUserId: `gh-${id}`,
      createdAt: NOW,
      updatedAt: NOW,
    });
    const [before, after] = [identity(), identity()];
    await applyEvent(db, userEvent("user.created", id, 1, { providers: [before] }), noBuckets);
    expect(await applyEvent(db, userEvent("user.updated", id, 2, { providers: [after] }), noBuckets)).toBe(
      "written",
    );
    const { rows } = await db.query("SELECT id, access_token FROM auth.user_providers WHERE user_id = $1", [
      id,
    ]);
    expect(rows).toEqual([{ id: after.id, access_token: "" }]);
  });

  // Threat: two consumers (the platform runs several at once) interleave a check and a write, and the older event's
  // write lands last.
  it("two consumers applying an older and a newer event at once always leave the newer one", async () => {
    const [a, b] = [await connect(), await connect()];
    for (let round = 0; round < 10; round++) {
      const id = crypto.randomUUID();
      await applyEvent(db, userEvent("user.created", id, 1), noBuckets);
      const newer = applyEvent(a, userEvent("user.updated", id, 3, { displayName: "newer" }), noBuckets);
      const older = applyEvent(b, userEvent("user.updated", id, 2, { displayName: "older" }), noBuckets);
      await Promise.all(round % 2 ? [older, newer] : [newer, older]);
      expect(await mirroredUser(id)).toEqual({ display_name: "newer" });
    }
  });
});

describe("a resync page over a mirror that fell behind", () => {
  // Threat: a mirror that missed changes holds an address (or a provider identity) on the wrong user, and the
  // resync's page then fails on Nhost's unique constraints at every attempt: the mirror can never be rebuilt.
  it("writes two users who swapped addresses and an identity that moved, in one page", async () => {
    const [a, b] = [crypto.randomUUID(), crypto.randomUUID()];
    const [first, second] = [`${a.slice(0, 8)}-x@example.com`, `${b.slice(0, 8)}-y@example.com`];
    // The same GitHub account, under a new identity row of the other user (unlinked from one, linked to the other).
    const identity = () => ({
      id: crypto.randomUUID(),
      provider: "github",
      providerUserId: `gh-${a}`,
      createdAt: NOW,
      updatedAt: NOW,
    });
    const stale = [
      userRowOf(userSnapshot(a, { email: first, providers: [identity()] }))!,
      userRowOf(userSnapshot(b, { email: second }))!,
    ];
    await inTransaction(db, () => writeUsers(db, stale));
    const now = [
      userRowOf(userSnapshot(a, { email: second }))!,
      userRowOf(userSnapshot(b, { email: first, providers: [identity()] }))!,
    ];
    await inTransaction(db, async () => {
      await releaseTakenIdentities(db, now);
      await writeUsers(db, now);
    });
    const { rows } = await db.query(
      `SELECT u.id, u.email::text AS email, (SELECT count(*)::int FROM auth.user_providers p WHERE p.user_id = u.id) AS identities
         FROM auth.users u WHERE u.id = ANY($1) ORDER BY u.email`,
      [[a, b]],
    );
    expect(rows).toEqual(
      [
        { id: b, email: first, identities: 1 },
        { id: a, email: second, identities: 0 },
      ].sort((x, y) => (x.email < y.email ? -1 : 1)),
    );
  });
});

const defaultBucket: BucketRow = {
  id: "default",
  minUploadFileSize: 1,
  maxUploadFileSize: 50_000_000,
  cacheControl: "max-age=3600",
  presignedUrlsEnabled: true,
  downloadExpiration: 30,
  allowedMimeTypes: [],
  rules: {} as BucketRow["rules"],
  createdAt: Date.parse(NOW),
  updatedAt: Date.parse(NOW),
};

const TABLES = ["users", "roles", "user_roles", "user_providers", "providers", "buckets", "files"];

/** Columns and constraints of the mirrored tables, as comparable rows (Nhost qualifies gen_random_uuid with public). */
async function shapeOf(client: pg.Client) {
  const columns = await client.query(
    `SELECT table_schema, table_name, column_name, data_type, domain_name, character_maximum_length, is_nullable,
            replace(column_default, 'public.', '') AS column_default
       FROM information_schema.columns
      WHERE table_schema IN ('auth', 'storage') AND table_name = ANY($1)
      ORDER BY table_schema, table_name, column_name`,
    [TABLES],
  );
  const constraints = await client.query(
    `SELECT c.conrelid::regclass::text AS on_table, c.conname, pg_get_constraintdef(c.oid) AS definition
       FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace
      WHERE n.nspname IN ('auth', 'storage') AND t.relname = ANY($1)
      ORDER BY 1, 2`,
    [TABLES],
  );
  const domain = await client.query(
    `SELECT format_type(t.typbasetype, NULL) AS base, pg_get_constraintdef(c.oid) AS check
       FROM pg_type t JOIN pg_constraint c ON c.contypid = t.oid WHERE t.typname = 'email'`,
  );
  return { columns: columns.rows, constraints: constraints.rows, domain: domain.rows };
}

describe("the mirror's tables are Nhost's", () => {
  let nhost: pg.Client;
  beforeAll(async () => {
    // A database as Nhost's own migrations leave it (auth 00001–00020, storage 000001–000005), beside the mirror's.
    const admin = await connect(adminUrl);
    const name = `nhost_${crypto.randomUUID().slice(0, 8)}`;
    await admin.query(`CREATE DATABASE ${name}`);
    const nhostUrl = new URL(adminUrl);
    nhostUrl.pathname = `/${name}`;
    await loadNhostSchema(nhostUrl.toString());
    nhost = await connect(nhostUrl.toString());
  });

  // Threat: Hasura's metadata, the app's relationships and permissions name Nhost's columns and types; a mirror that
  // differs breaks them.
  it("columns, types, nullability, defaults, keys and the email domain match Nhost's migrations", async () => {
    const [ours, theirs] = [await shapeOf(db), await shapeOf(nhost)];
    // 7 tables: 25 columns of users, 4 of user_roles, 8 of user_providers, 1 + 1 of roles and providers, 8 of
    // buckets, 11 of files.
    expect(ours.columns).toHaveLength(58);
    expect(ours.columns).toEqual(theirs.columns);
    expect(ours.constraints).toEqual(theirs.constraints);
    expect(ours.domain).toEqual(theirs.domain);
  });

  // Threat: a database where citext cannot be created (no such extension, or no right to create one) gets no mirror.
  it("falls back to an email domain over text when citext cannot be created", async () => {
    const admin = await connect(adminUrl);
    const name = `plain_${crypto.randomUUID().slice(0, 8)}`;
    await admin.query(`CREATE DATABASE ${name}`);
    const plainUrl = new URL(adminUrl);
    plainUrl.pathname = `/${name}`;
    const plain = await connect(plainUrl.toString());
    // CREATE EXTENSION … WITH SCHEMA public fails without the schema public.
    await plain.query("DROP SCHEMA public CASCADE");
    forgetSchema();
    await ensureSchema(plain);
    forgetSchema();
    const { rows } = await plain.query(
      "SELECT format_type(typbasetype, NULL) AS base FROM pg_type WHERE typname = 'email'",
    );
    expect(rows).toEqual([{ base: "text" }]);
    const id = crypto.randomUUID();
    expect(await applyEvent(plain, userEvent("user.created", id, 1), noBuckets)).toBe("written");
  });

  // Threat: switched on over a database Nhost left (the app's, after the cut-over), the mirror breaks or recreates it.
  it("writes into a database Nhost created, keeping its rows and tables", async () => {
    const existing = crypto.randomUUID();
    await nhost.query(
      "INSERT INTO auth.users (id, locale, email, password_hash) VALUES ($1, 'en', 'old@example.com', 'x')",
      [existing],
    );
    forgetSchema();
    await ensureSchema(nhost);
    const id = crypto.randomUUID();
    expect(
      await applyEvent(nhost, userEvent("user.created", id, 1, { roles: ["user", "editor"] }), noBuckets),
    ).toBe("written");
    const { rows } = await nhost.query("SELECT id, password_hash FROM auth.users ORDER BY email");
    expect(rows).toEqual(
      expect.arrayContaining([
        { id: existing, password_hash: "x" },
        { id, password_hash: null },
      ]),
    );
    const roles = await nhost.query("SELECT role FROM auth.user_roles WHERE user_id = $1 ORDER BY role", [
      id,
    ]);
    expect(roles.rows.map((row) => row.role)).toEqual(["editor", "user"]);
    forgetSchema();
  });
});
