// Moving a Nhost project in, end to end (contract move-in §1–3): a real Postgres loaded with Nhost's own migrations
// and rows written as Nhost writes them (test/fixtures/nhost/), the real command `npm run admin -- import-nhost`
// against the `wrangler dev` server, and then the app's own client, @nhost/nhost-js, with nothing else changed: the
// old password, the refresh token and PAT the client holds, TOTP, a security key, a provider sign-in, a link Nhost
// mailed before the move, every file, and an access token Nhost signed. A second run changes nothing; bad rows are
// reported and nothing of them is written; an interrupted run carried on gives the same end state.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import { generateTOTP } from "@oslojs/otp";
import { SignJWT } from "jose";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { SoftwareAuthenticator } from "../fakes/authenticator";
import { NHOST_ENCRYPTION_KEY, NHOST_JWT_SECRET } from "../fixtures/nhost/project";
import { type SeededUser, seedBucket, seedFile, seedUser } from "../fixtures/nhost/seed";
import { loadNhostSchema, type RunningPostgres, startPostgres } from "../support/postgres";
import { authUrl, browse, client, PASSWORD, REDIRECT, rejection, serverUrl, verifiedUser } from "./client";
import { mirrorWrites, nhostRefresh } from "./move-in-mirror";

const adminSecret = inject("adminSecret");

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  report: {
    tables: Record<string, Record<string, number>>;
    notCarried: { table: string; id: string; reason: string }[];
  };
}

/** The command as a person runs it against a deployment: `--server` and ADMIN_SECRET. */
function importNhost(
  args: string[],
  onStart?: (child: ChildProcess) => void,
  env: Record<string, string> = {},
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["scripts/admin.mjs", "import-nhost", ...args, "--server", authUrl, "--json"],
      {
        env: { ...process.env, ADMIN_SECRET: adminSecret, AUTH_URL: "", ...env },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (chunk) => (stdout += chunk));
    child.stderr!.on("data", (chunk) => (stderr += chunk));
    onStart?.(child);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      let report: Run["report"] = { tables: {}, notCarried: [] };
      try {
        report = JSON.parse(stdout);
      } catch {}
      resolve({ code, signal, stdout, stderr, report });
    });
  });
}

/** Another command of `npm run admin`, as a person runs it against a deployment, with --json. */
function admin(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["scripts/admin.mjs", ...args, "--server", authUrl, "--json"], {
      env: { ...process.env, ADMIN_SECRET: adminSecret, AUTH_URL: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (chunk) => (stdout += chunk));
    child.stderr!.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const adminGet = async (path: string) => {
  const response = await fetch(`${authUrl}/admin${path}`, {
    headers: { "x-hasura-admin-secret": adminSecret },
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

let postgres: RunningPostgres;
let db: pg.Client;
let filesDir: string;
let url: string;
const seeded = {} as Record<"alice" | "tom" | "vera" | "oddHash" | "caseTwin", SeededUser>;
const files: { id: string; etag: string; bytes: Uint8Array }[] = [];
let missingFile: string;
let danglingToken: string;
const githubId = String(Math.floor(Math.random() * 1e12));
const caseTwinEmail = `casey-${crypto.randomUUID().slice(0, 6)}@example.com`;

beforeAll(async () => {
  postgres = await startPostgres();
  url = postgres.url;
  await loadNhostSchema(url);
  db = new pg.Client({ connectionString: url });
  await db.connect();
  const tag = crypto.randomUUID().slice(0, 8);
  seeded.alice = await seedUser(db, {
    email: `alice-${tag}@example.com`,
    password: PASSWORD,
    displayName: "Alice Moved",
    emailVerified: true,
    metadata: { plan: "team" },
    providers: [{ providerId: "github", providerUserId: githubId }],
    securityKeys: [{ nickname: "yubikey" }],
    pat: {},
  });
  seeded.tom = await seedUser(db, {
    email: `tom-${tag}@example.com`,
    password: PASSWORD,
    emailVerified: true,
    totp: { encryptionKey: NHOST_ENCRYPTION_KEY },
  });
  seeded.vera = await seedUser(db, {
    email: `vera-${tag}@example.com`,
    password: PASSWORD,
    emailVerified: false,
    ticket: { type: "verifyEmail" },
  });
  // Bad input, each reported with its table, id and reason, and nothing of it written.
  seeded.oddHash = await seedUser(db, { email: `odd-${tag}@example.com`, password: PASSWORD });
  await db.query("UPDATE auth.users SET password_hash = $1 WHERE id = $2", [
    "pbkdf2_sha256$600000$salt$hash",
    seeded.oddHash.id,
  ]);
  seeded.caseTwin = await seedUser(db, { email: caseTwinEmail.toUpperCase(), password: PASSWORD });
  // A token row for a user that isn't there (foreign keys switched off for the insert, as a damaged dump has it).
  danglingToken = crypto.randomUUID();
  await db.query("SET session_replication_role = replica");
  await db.query(
    `INSERT INTO auth.refresh_tokens (id, user_id, expires_at, refresh_token_hash, type)
     VALUES ($1, $2, now() + interval '30 days', '\\x' || encode(sha256('x'::bytea), 'hex'), 'regular')`,
    [danglingToken, crypto.randomUUID()],
  );
  await db.query("SET session_replication_role = DEFAULT");

  await seedBucket(db, { id: "avatars", maxUploadFileSize: 2_000_000, downloadExpiration: 60 });
  filesDir = mkdtempSync(join(tmpdir(), "nhost-files-"));
  // As `aws s3 sync` of Nhost's bucket leaves them: under the root folder, named by file id.
  mkdirSync(join(filesDir, "project-root"));
  for (const [bucketId, bytes] of [
    ["default", new Uint8Array(200_000).map((_, i) => i % 253)],
    ["avatars", new TextEncoder().encode("a small avatar")],
  ] as const) {
    const file = await seedFile(db, {
      bucketId,
      bytes,
      uploadedByUserId: seeded.alice.id,
      name: `${bucketId}.bin`,
    });
    writeFileSync(join(filesDir, "project-root", file.id), file.bytes);
    files.push(file);
  }
  missingFile = (await seedFile(db, { bucketId: "default", bytes: "never synced" })).id;
}, 60_000);

afterAll(async () => {
  await db?.end();
  await postgres?.stop();
  if (filesDir) rmSync(filesDir, { recursive: true, force: true });
});

// The key from the environment, as the guide has it (a flag would be printed by npm with the command line).
const fullImport = () =>
  importNhost(["--database-url", url, "--files-dir", filesDir], undefined, { NHOST_ENCRYPTION_KEY });

describe("npm run admin -- import-nhost", () => {
  it("a dry run reports what it would do and writes nothing", async () => {
    const run = await importNhost(["--database-url", url, "--files-dir", filesDir, "--dry-run"]);
    expect(run.code, run.stderr).toBe(1);
    expect(run.report.tables["auth.users"]).toMatchObject({ read: 5 });
    const alice = await rejection(
      client().auth.signInEmailPassword({ email: seeded.alice.email!, password: PASSWORD }),
    );
    expect(alice.status).toBe(401);
  });

  it("imports the project: every bad row reported with its table, id and reason, and exit 1", async () => {
    // A user of the service already has the address Nhost holds in other case: one address here.
    const native = await fetch(`${authUrl}/admin/users`, {
      method: "POST",
      headers: { "x-hasura-admin-secret": adminSecret, "content-type": "application/json" },
      body: JSON.stringify({ email: caseTwinEmail }),
    });
    expect(native.status).toBe(201);

    const run = await fullImport();
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toMatch(/auth\.users/);
    expect(run.report.tables["auth.users"]).toMatchObject({ read: 5, imported: 3, skipped: 2 });
    const reasons = Object.fromEntries(run.report.notCarried.map((row) => [row.id, row]));
    expect(reasons[seeded.oddHash.id]).toMatchObject({
      table: "auth.users",
      reason: expect.stringMatching(/unknown format/),
    });
    expect(reasons[seeded.caseTwin.id]).toMatchObject({
      reason: expect.stringMatching(/differing only in case/),
    });
    expect(reasons[missingFile]).toMatchObject({
      table: "storage.files",
      reason: expect.stringMatching(/not found/),
    });
    expect(reasons[danglingToken]).toMatchObject({
      table: "auth.refresh_tokens",
      reason: expect.stringMatching(/user/),
    });
    const odd = await adminGet(`/users/${seeded.oddHash.id}`);
    expect(odd.status).toBe(404);
  });

  it("the old password, the client's refresh token and the PAT work through @nhost/nhost-js", async () => {
    const alice = seeded.alice;
    const signedIn = await client().auth.signInEmailPassword({ email: alice.email!, password: PASSWORD });
    expect(signedIn.body.session?.user).toMatchObject({
      id: alice.id,
      displayName: "Alice Moved",
      metadata: { plan: "team" },
    });

    const nhost = client();
    const { body: renewed } = await nhost.auth.refreshToken({ refreshToken: alice.refreshTokens[0]! });
    expect(renewed.user?.id).toBe(alice.id);
    nhost.sessionStorage.set(renewed);
    const { body: me } = await nhost.auth.getUser();
    expect(me.email).toBe(alice.email);

    const pat = await client().auth.signInPAT({ personalAccessToken: alice.pat! });
    expect(pat.body.session?.user?.id).toBe(alice.id);
  });

  it("TOTP decrypted with Nhost's key completes the sign-in", async () => {
    const tom = seeded.tom;
    const nhost = client();
    const first = await nhost.auth.signInEmailPassword({ email: tom.email!, password: PASSWORD });
    expect(first.body.session).toBeFalsy();
    const otp = generateTOTP(decodeBase32IgnorePadding(tom.totpSecret!), 30, 6);
    const second = await nhost.auth.verifySignInMfaTotp({ ticket: first.body.mfa!.ticket, otp });
    expect(second.body.session?.user?.id).toBe(tom.id);
  });

  it("a security key registered with Nhost signs in; a GitHub sign-in finds the same user", async () => {
    const alice = seeded.alice;
    const key = new SoftwareAuthenticator(`http://localhost:${inject("pagePort")}`, "localhost");
    key.credentials.push(alice.securityKeys[0]!.credential as never);
    const nhost = client();
    const request = await nhost.auth.signInWebauthn({ email: alice.email! });
    const signedIn = await nhost.auth.verifySignInWebauthn({ credential: await key.get(request.body) });
    expect(signedIn.body.session?.user?.id).toBe(alice.id);

    const back = await browse(client().auth.signInProviderURL("github", { redirectTo: REDIRECT }), {
      fake_id: githubId,
    });
    const { body: session } = await client().auth.refreshToken({
      refreshToken: back.searchParams.get("refreshToken")!,
    });
    expect(session.user?.id).toBe(alice.id);
  });

  it("the verify link Nhost mailed before the move works, at Nhost's path on the auth host now pointed here", async () => {
    const vera = seeded.vera;
    const link = `${serverUrl}/v1/verify?ticket=${encodeURIComponent(vera.ticket!)}&type=emailVerify&redirectTo=${encodeURIComponent(REDIRECT)}`;
    const onward = await fetch(link, { redirect: "manual" });
    expect(onward.status).toBe(302);
    const response = await fetch(new URL(onward.headers.get("location")!, serverUrl), { redirect: "manual" });
    expect(response.status).toBe(302);
    const refreshToken = new URL(response.headers.get("location")!).searchParams.get("refreshToken")!;
    const { body: session } = await client().auth.refreshToken({ refreshToken });
    expect(session.user).toMatchObject({ id: vera.id, emailVerified: true });
  });

  it("every file downloads with the same id, bytes and ETag", async () => {
    for (const file of files) {
      const response = await fetch(`${serverUrl}/storage/v1/files/${file.id}`, {
        headers: { "x-hasura-admin-secret": adminSecret },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get("etag")).toBe(file.etag);
      expect(new Uint8Array(await response.arrayBuffer())).toEqual(new Uint8Array(file.bytes));
    }
  });

  it("an access token Nhost signed before the cut-over is accepted at GET /user once it is recorded, to read only", async () => {
    const alice = seeded.alice;
    const mint = (iat: number) =>
      new SignJWT({
        "https://hasura.io/jwt/claims": {
          "x-hasura-allowed-roles": ["user", "me"],
          "x-hasura-default-role": "user",
          "x-hasura-user-id": alice.id,
          "x-hasura-user-is-anonymous": "false",
        },
      })
        .setProtectedHeader({ alg: "HS256", typ: "JWT" })
        .setSubject(alice.id)
        .setIssuer("hasura-auth")
        .setIssuedAt(iat)
        .setExpirationTime(iat + 900)
        .sign(new TextEncoder().encode(NHOST_JWT_SECRET.key));
    const getUser = (token: string) =>
      fetch(`${authUrl}/user`, { headers: { authorization: `Bearer ${token}` } });
    const beforeSwitch = await mint(Math.floor(Date.now() / 1000) - 60);
    // Before the switch is recorded, no token of the old project is accepted (its key was shared widely).
    expect((await getUser(beforeSwitch)).status).toBe(401);
    const recorded = await admin(["cut-over"]);
    expect(recorded.code, recorded.stderr).toBe(0);
    expect(JSON.parse(recorded.stdout)).toMatchObject({ system: "nhost", secretSet: true });
    const response = await getUser(beforeSwitch);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { id: string }).id).toBe(alice.id);
    // Read only: the email of the account cannot be changed with it.
    const change = await fetch(`${authUrl}/user/email/change`, {
      method: "POST",
      headers: { authorization: `Bearer ${beforeSwitch}`, "content-type": "application/json" },
      body: JSON.stringify({ newEmail: "taken@example.com" }),
    });
    expect(change.status).toBe(403);
    // Issued by the old project after the switch: refused.
    expect((await getUser(await mint(Math.floor(Date.now() / 1000) + 5))).status).toBe(401);
  });

  it("a second run changes nothing", async () => {
    const run = await fullImport();
    expect(run.code).toBe(1); // the same bad rows, still reported
    for (const [table, counts] of Object.entries(run.report.tables)) {
      expect(counts.imported ?? 0, table).toBe(0);
      expect(counts.updated ?? 0, table).toBe(0);
    }
    expect(run.report.tables["auth.users"]).toMatchObject({ unchanged: 3, skipped: 2 });
  });

  it("a delta run removes a user deleted in Nhost and ends a session signed out there", async () => {
    const { vera, tom } = seeded;
    await db.query("DELETE FROM auth.users WHERE id = $1", [vera.id]);
    await db.query("DELETE FROM auth.refresh_tokens WHERE user_id = $1 AND type = 'regular'", [tom.id]);
    const run = await fullImport();
    // Tom signed in here (his bcrypt hash moved to argon2id): his row is kept as it is here, his session still ends.
    expect(run.report.tables["auth.users"]).toMatchObject({ deleted: 1, kept: 1 });
    expect((await adminGet(`/users/${vera.id}`)).status).toBe(404);
    const signedOut = await rejection(client().auth.refreshToken({ refreshToken: tom.refreshTokens[0]! }));
    expect(signedOut.status).toBe(401);
  });

  it("a database that doesn't answer: a clear message and exit 1", async () => {
    const run = await importNhost(["--database-url", "postgres://nobody@127.0.0.1:1/none"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/127\.0\.0\.1:1|connect/i);
  });
});

describe("an interrupted import", () => {
  it("killed mid-way and run again ends where an uninterrupted run ends", async () => {
    // 3,000 more users since the last run: the run is killed once its first batch has been written.
    const before = (await fullImport()).report.notCarried.map((row) => row.id).sort();
    const tag = crypto.randomUUID().slice(0, 6);
    const { rows } = await db.query<{ id: string }>(
      `INSERT INTO auth.users (email, locale, email_verified, display_name)
       SELECT 'bulk-' || g || '-' || $1::text || '@example.com', 'en', true, 'Bulk ' || g
       FROM generate_series(1, 3000) g
       RETURNING id`,
      [tag],
    );
    const ids = rows.map((row) => row.id);
    const killed = await importNhost(["--database-url", url], (child) => {
      child.stderr!.on("data", (chunk: Buffer) => {
        if (/auth\.users: [1-9]/.test(String(chunk))) child.kill("SIGKILL");
      });
    });
    expect(killed.signal).toBe("SIGKILL");
    const resumed = await fullImport();
    // It carried on: some of the 3,000 were written before the kill, the rest now; only the rows that were bad all
    // along are still reported.
    expect(resumed.report.tables["auth.users"]!.imported).toBeGreaterThan(0);
    expect(resumed.report.tables["auth.users"]!.imported).toBeLessThan(3000);
    expect(resumed.report.notCarried.map((row) => row.id).sort()).toEqual(before);
    const again = await fullImport();
    for (const [table, counts] of Object.entries(again.report.tables)) {
      expect(counts.imported ?? 0, table).toBe(0);
      expect(counts.updated ?? 0, table).toBe(0);
    }
    expect(again.report.tables["auth.users"]).toMatchObject({ read: 3004, unchanged: 3002 });
    for (const id of [ids[0]!, ids[1500]!, ids[2999]!])
      expect((await adminGet(`/users/${id}`)).status).toBe(200);
  }, 120_000);
});

describe("a wrong --database-url", () => {
  it("another project's database removes nothing and writes nothing (most of what was imported is missing there)", async () => {
    await db.query("CREATE DATABASE other_project");
    const other = url.replace(/\/[^/]+$/, "/other_project");
    await loadNhostSchema(other);
    const otherDb = new pg.Client({ connectionString: other });
    await otherDb.connect();
    const stranger = await seedUser(otherDb, {
      email: `stranger-${crypto.randomUUID().slice(0, 6)}@example.com`,
    });
    await seedFile(otherDb, { bucketId: "default", bytes: "not this project's" });
    await otherDb.end();

    const run = await importNhost(["--database-url", other]);
    expect(run.code).toBe(1);
    expect(run.stderr, run.stderr).toMatch(/of auth\.users are not in this database.*--allow-mass-removal/s);
    expect((await adminGet(`/users/${seeded.alice.id}`)).status).toBe(200);
    expect((await adminGet(`/users/${stranger.id}`)).status).toBe(404);
  });
});

describe("the Postgres mirror writing into this database (Hasura stays on Nhost)", () => {
  // Before: the mirror's writes came back as "updated" users and its users created here as "not imported" (exit 1).
  it("a delta run takes the mirror's rows for this service's own: no user 'updated', none reported; Nhost's new token still comes", async () => {
    const moved = await seedUser(db, { email: `mirrored-${crypto.randomUUID().slice(0, 6)}@example.com` });
    const first = await fullImport();
    const bad = first.report.notCarried.map((row) => row.id).sort();
    const signedUp = await verifiedUser("signed-up-here");
    const payload = JSON.parse(Buffer.from(signedUp.accessToken.split(".")[1]!, "base64url").toString());
    await mirrorWrites(db, { id: payload.sub, email: signedUp.email }, { id: moved.id, email: moved.email! });

    const delta = await fullImport();
    expect(delta.report.notCarried.map((row) => row.id).sort()).toEqual(bad);
    expect(delta.report.tables["auth.users"]).toMatchObject({ imported: 0, updated: 0 });
    expect(JSON.stringify(delta.report)).toMatch(
      /a user of this service, written to this database by its Postgres mirror/,
    );

    const token = await nhostRefresh(db, moved.id);
    const later = await fullImport();
    expect(later.report.tables["auth.refresh_tokens"]).toMatchObject({ imported: 1 });
    expect(later.report.tables["auth.users"]).toMatchObject({ updated: 0 });
    const { body: session } = await client().auth.refreshToken({ refreshToken: token });
    expect(session.user?.id).toBe(moved.id);
  }, 240_000);
});
