// The Postgres mirror as an app beside Hasura meets it (contract move-in §5.1): `wrangler dev` bound to a real
// Postgres through MIRROR_DB (test/compat/mirror-database.ts), driven over HTTP with @nhost/nhost-js and the admin API,
// the events carried by wrangler's local queues with their retries. Each test reads the app's Postgres with a bounded
// wait: the mirror follows the service within a second or two, never inside the request.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  authUrl,
  client,
  followLink,
  mailedLink,
  PASSWORD,
  REDIRECT,
  serverUrl,
  uniqueEmail,
} from "./client";
import { allowMirrorConnections, refuseMirrorConnections } from "./mirror-database";

const { url, adminUrl } = inject("mirrorDatabase");
const adminSecret = inject("adminSecret");
let pool: pg.Pool;

/**
 * What an app keeps beside Nhost's tables: its own table with a foreign key to auth.users, and a trigger on auth.users
 * shaped like the ones Hasura's event triggers install (an AFTER … FOR EACH ROW trigger that logs the operation and
 * the new row).
 */
const APP_SQL = `
  CREATE TABLE IF NOT EXISTS public.posts (
    id serial PRIMARY KEY,
    author_id uuid NOT NULL REFERENCES auth.users (id) ON DELETE CASCADE,
    title text NOT NULL
  );
  CREATE SCHEMA IF NOT EXISTS app_events;
  CREATE TABLE IF NOT EXISTS app_events.event_log (
    id bigserial PRIMARY KEY, op text NOT NULL, row_id uuid NOT NULL, new_row jsonb, at timestamptz DEFAULT now()
  );
  CREATE OR REPLACE FUNCTION app_events.notify_users() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO app_events.event_log (op, row_id, new_row)
      VALUES (TG_OP, COALESCE(NEW.id, OLD.id), CASE WHEN TG_OP = 'DELETE' THEN NULL ELSE to_jsonb(NEW) END);
    RETURN NULL;
  END $$;
  DROP TRIGGER IF EXISTS notify_users ON auth.users;
  CREATE TRIGGER notify_users AFTER INSERT OR UPDATE OR DELETE ON auth.users
    FOR EACH ROW EXECUTE FUNCTION app_events.notify_users();
`;

const SECRET_COLUMNS = [
  "password_hash",
  "totp_secret",
  "otp_hash",
  "otp_method_last_used",
  "ticket",
  "webauthn_current_challenge",
];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `read` gives something truthy: the mirror is eventually consistent, within `ms`. */
async function until<T>(
  read: () => Promise<T | null | undefined | false>,
  what: string,
  ms = 15_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read().catch(() => null);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`not in the mirror within ${ms} ms: ${what}`);
    await sleep(150);
  }
}

interface MirroredUser {
  id: string;
  email: string;
  display_name: string;
  metadata: Record<string, unknown> | null;
  email_verified: boolean;
  default_role: string;
  last_seen: Date | null;
  roles: string[];
  [secret: string]: unknown;
}

async function mirroredUser(where: { email: string } | { id: string }): Promise<MirroredUser | undefined> {
  const [column, value] = "email" in where ? ["email", where.email] : ["id", where.id];
  const { rows } = await pool.query<MirroredUser>(
    `SELECT u.*, ARRAY(SELECT role FROM auth.user_roles r WHERE r.user_id = u.id ORDER BY role) AS roles
       FROM auth.users u WHERE u.${column} = $1`,
    [value],
  );
  return rows[0];
}

async function adminCall(method: string, path: string, body?: unknown): Promise<Response> {
  const response = await fetch(`${authUrl}/admin${path}`, {
    method,
    headers: { "x-hasura-admin-secret": adminSecret, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(response.ok, `${method} ${path}: ${response.status}`).toBe(true);
  return response;
}

const signUp = (email: string, options: Record<string, unknown> = {}) =>
  fetch(`${authUrl}/signup/email-password`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password: PASSWORD, options: { redirectTo: REDIRECT, ...options } }),
  });

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: url, max: 4 });
  // The fault test ends every connection to the database: the pool's idle ones report it here.
  pool.on("error", () => {});
  // The mirror creates its tables with its first event: one sign-up, mirrored, and the app's tables can refer to them.
  const email = uniqueEmail("mirror-setup");
  expect((await signUp(email)).status).toBe(200);
  await until(() => mirroredUser({ email }), email, 30_000);
  await pool.query(APP_SQL);
});

afterAll(async () => {
  await allowMirrorConnections(adminUrl).catch(() => {});
  await pool?.end();
});

describe("the Postgres mirror behind wrangler dev", () => {
  // Threats: the app's Hasura (relationships, permissions, claims) reads users the service no longer agrees with;
  // secrets (password hashes, tickets) leak into the app's database; an app table's foreign key to auth.users breaks
  // because rows are dropped and recreated; Hasura's event triggers do not fire for users the service creates.
  it("follows a sign-up, verification, profile and role changes, a sign-in and a sign-out; no secret is written", async () => {
    const nhost = client();
    const email = uniqueEmail("mirror");
    const signUpAnswer = await nhost.auth.signUpEmailPassword({
      email,
      password: PASSWORD,
      options: { displayName: "Mirror One", metadata: { plan: "free" }, redirectTo: REDIRECT },
    });
    expect(signUpAnswer.status).toBe(200);
    const created = await until(() => mirroredUser({ email }), "the sign-up");
    expect(created).toMatchObject({
      display_name: "Mirror One",
      metadata: { plan: "free" },
      email_verified: false,
      default_role: "user",
      roles: ["me", "user"],
    });
    // The service holds a password hash and a pending verification ticket for this user right now.
    for (const column of SECRET_COLUMNS) expect(created[column], column).toBeNull();
    const id = created.id;

    // The app's trigger on auth.users fired for the service's sign-up, with the row as written.
    const inserted = await pool.query(
      "SELECT new_row FROM app_events.event_log WHERE row_id = $1 AND op = 'INSERT'",
      [id],
    );
    expect(inserted.rows.map((row) => row.new_row.email)).toEqual([email]);
    await pool.query("INSERT INTO posts (author_id, title) VALUES ($1, 'hello')", [id]);

    await followLink(await mailedLink(email));
    await until(async () => (await mirroredUser({ id }))?.email_verified, "the verification");

    await adminCall("PATCH", `/users/${id}`, { displayName: "Mirror Two", metadata: { plan: "pro" } });
    await until(
      async () => (await mirroredUser({ id }))?.display_name === "Mirror Two",
      "the profile change",
    );
    expect((await mirroredUser({ id }))?.metadata).toEqual({ plan: "pro" });

    await adminCall("PATCH", `/users/${id}`, { roles: ["user", "editor"], defaultRole: "editor" });
    const regranted = await until(async () => {
      const user = await mirroredUser({ id });
      return user?.default_role === "editor" && user;
    }, "the role change");
    expect(regranted.roles).toEqual(["editor", "user"]);

    const before = (await mirroredUser({ id }))?.last_seen?.getTime() ?? 0;
    await sleep(5);
    const signIn = await nhost.auth.signInEmailPassword({ email, password: PASSWORD });
    await until(
      async () => ((await mirroredUser({ id }))?.last_seen?.getTime() ?? 0) > before,
      "the sign-in",
    );

    // A sign-out has no place in Nhost's mirrored tables (sessions are refresh tokens there, never mirrored): it
    // changes nothing, and the stream goes on past it.
    await nhost.auth.signOut({ refreshToken: signIn.body.session!.refreshToken, all: true });
    await adminCall("PATCH", `/users/${id}`, { displayName: "Mirror Three" });
    const last = await until(async () => {
      const user = await mirroredUser({ id });
      return user?.display_name === "Mirror Three" && user;
    }, "the change after the sign-out");
    for (const column of SECRET_COLUMNS) expect(last[column], column).toBeNull();

    // Updated in place all along: the post still refers to the user, and no DELETE ever reached the trigger.
    const posts = await pool.query("SELECT title FROM posts WHERE author_id = $1", [id]);
    expect(posts.rows).toEqual([{ title: "hello" }]);
    const ops = await pool.query(
      "SELECT DISTINCT op FROM app_events.event_log WHERE row_id = $1 ORDER BY op",
      [id],
    );
    expect(ops.rows.map((row) => row.op)).toEqual(["INSERT", "UPDATE"]);

    // Deleted by the admin: the mirror deletes the user, and the app's foreign key does what the app chose.
    await adminCall("DELETE", `/users/${id}`);
    await until(async () => !(await mirroredUser({ id })), "the deletion");
    expect((await pool.query("SELECT 1 FROM posts WHERE author_id = $1", [id])).rows).toEqual([]);
  });

  // Threat: the app's storage.files (Hasura relationships to files, Nhost Storage's permissions) misses uploads or
  // keeps deleted files.
  it("mirrors an upload into storage.files with its bucket, and its deletion", async () => {
    const nhost = client();
    const email = uniqueEmail("mirror-files");
    await nhost.auth.signUpEmailPassword({ email, password: PASSWORD, options: { redirectTo: REDIRECT } });
    const verified = await followLink(await mailedLink(email));
    await nhost.auth.refreshToken({ refreshToken: verified.searchParams.get("refreshToken")! });
    const uploaded = await nhost.storage.uploadFiles({
      "file[]": [new File(["mirrored bytes"], "notes.txt", { type: "text/plain" })],
      "metadata[]": [{ name: "notes.txt", metadata: { kind: "notes" } }],
    });
    const file = uploaded.body.processedFiles![0]!;
    const row = await until(async () => {
      const { rows } = await pool.query("SELECT * FROM storage.files WHERE id = $1", [file.id]);
      return rows[0];
    }, "the upload");
    expect(row).toMatchObject({
      bucket_id: "default",
      name: "notes.txt",
      size: 14,
      mime_type: "text/plain",
      etag: file.etag,
      is_uploaded: true,
      uploaded_by_user_id: nhost.getUserSession()!.user!.id,
      metadata: { kind: "notes" },
    });
    expect(row.etag).toMatch(/^"[0-9a-f]{32}"$/);
    const bucket = await pool.query("SELECT max_upload_file_size FROM storage.buckets WHERE id = 'default'");
    expect(bucket.rows).toHaveLength(1);

    expect((await nhost.storage.deleteFile(file.id)).status).toBe(204);
    await until(async () => {
      const { rows } = await pool.query("SELECT 1 FROM storage.files WHERE id = $1", [file.id]);
      return rows.length === 0;
    }, "the file's deletion");
  });

  // Threat: the app's Postgres is down (maintenance, failover) and sign-ups fail with it, or the users signed up
  // meanwhile never reach it.
  it("sign-ups succeed while its Postgres refuses connections, and arrive once it is back", async () => {
    const emails = Array.from({ length: 5 }, () => uniqueEmail("mirror-down"));
    await refuseMirrorConnections(adminUrl);
    try {
      const answers = await Promise.all(emails.map((email) => signUp(email)));
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
      // The resync says so rather than failing obscurely.
      const resync = await fetch(`${authUrl}/admin/mirror/resync`, {
        method: "POST",
        headers: { "x-hasura-admin-secret": adminSecret, "content-type": "application/json" },
        body: "{}",
      });
      expect(resync.status).toBe(503);
      expect(await resync.json()).toMatchObject({
        error: "service-unavailable",
        message: /cannot be reached/,
      });
      // Long enough for the queue to hand the events over and the mirror to fail them (retried 1 s, 2 s, … later).
      await sleep(2_500);
    } finally {
      await allowMirrorConnections(adminUrl);
    }
    const backAt = (await pool.query<{ now: Date }>("SELECT now()")).rows[0]!.now;
    const users = await until(
      async () => {
        const all = await Promise.all(emails.map((email) => mirroredUser({ email })));
        return all.every(Boolean) && (all as MirroredUser[]);
      },
      "the users signed up while Postgres was down",
      30_000,
    );
    // Written by a retry after the database came back, not before it went away.
    const { rows } = await pool.query<{ applied_at: Date }>(
      "SELECT applied_at FROM edge_auth_mirror.versions WHERE row_kind = 'user' AND row_id = ANY($1)",
      [users.map((user) => user.id)],
    );
    expect(rows).toHaveLength(5);
    for (const row of rows) expect(row.applied_at.getTime()).toBeGreaterThanOrEqual(backAt.getTime());
  }, 60_000);

  // Threat: a mirror that fell behind or was damaged by hand cannot be rebuilt without dropping the app's tables.
  it("npm run admin -- mirror-resync rebuilds rows deleted, changed or added by hand", async () => {
    const email = uniqueEmail("mirror-resync");
    const created = (await (
      await adminCall("POST", "/users", {
        email,
        password: PASSWORD,
        displayName: "Resynced",
        emailVerified: true,
      })
    ).json()) as { id: string };
    const other = uniqueEmail("mirror-resync-other");
    const second = (await (
      await adminCall("POST", "/users", { email: other, displayName: "Kept" })
    ).json()) as {
      id: string;
    };
    await until(
      async () => (await mirroredUser({ id: created.id })) && (await mirroredUser({ id: second.id })),
      "both",
    );
    // A user soft-deleted through the Supabase face (GoTrue's deleteUser(id, true)): its row stays, its address
    // hidden. The mirror's email column is Nhost's auth.email domain: the hidden address must still be one in form,
    // or Postgres refuses the row and the resync stops at its page (it did).
    const gone = uniqueEmail("mirror-soft-deleted");
    const goneId = ((await (await adminCall("POST", "/users", { email: gone })).json()) as { id: string }).id;
    const softDeleted = await fetch(`${serverUrl}/supabase/auth/v1/admin/users/${goneId}`, {
      method: "DELETE",
      headers: {
        apikey: inject("supabaseKeys").secret,
        authorization: `Bearer ${inject("supabaseKeys").secret}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ should_soft_delete: true }),
    });
    expect(softDeleted.status).toBe(200);
    const ghost = crypto.randomUUID();
    await pool.query("DELETE FROM auth.users WHERE id = $1", [created.id]);
    await pool.query("UPDATE auth.users SET display_name = 'tampered' WHERE id = $1", [second.id]);
    await pool.query("INSERT INTO auth.users (id, locale, email) VALUES ($1, 'en', $2)", [
      ghost,
      uniqueEmail("mirror-ghost"),
    ]);

    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["scripts/admin.mjs", "mirror-resync", "--server", authUrl, "--json"],
      { env: { ...process.env, ADMIN_SECRET: adminSecret } },
    );
    const report = JSON.parse(stdout) as { tables: { table: string; written: number; deleted: number }[] };
    const users = report.tables.find((table) => table.table === "auth.users")!;
    expect(users.written).toBeGreaterThanOrEqual(2);
    expect(users.deleted).toBeGreaterThanOrEqual(1);

    expect(await mirroredUser({ id: created.id })).toMatchObject({ email, display_name: "Resynced" });
    expect((await mirroredUser({ id: second.id }))?.display_name).toBe("Kept");
    expect(await mirroredUser({ id: ghost })).toBeUndefined();
    expect((await mirroredUser({ id: goneId }))?.email).toMatch(/^deleted-[0-9a-f]{32}@deleted\.invalid$/);

    // The stream carries on from the resync's versions: the next change arrives.
    await adminCall("PATCH", `/users/${created.id}`, { displayName: "After the resync" });
    await until(
      async () => (await mirroredUser({ id: created.id }))?.display_name === "After the resync",
      "the change after the resync",
    );
  }, 60_000);
});
