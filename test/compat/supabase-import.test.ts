// Moving a Supabase project's users in, end to end (contract supabase.md §5–6): a real Postgres loaded with Supabase
// Auth's own migrations and rows written as GoTrue writes them (test/fixtures/supabase/), the real command `npm run
// admin -- import-supabase` against the `wrangler dev` server, and then the app's own client, @supabase/supabase-js,
// with only its URL and key changed: the old password signs in as the same user, metadata, a TOTP factor (sealed
// under GoTrue's DB encryption key), a linked identity, and a confirmation link mailed before the move. A banned user
// stays banned, a soft-deleted one stays behind; a second run changes nothing, a dry run writes nothing, bad rows are
// report lines with nothing of them written. Storage too: Storage's own migrations, buckets and objects as it writes
// them and their bytes in its file backend's layout (`--files-dir`), then storage-js (download, list, getPublicUrl)
// and the Nhost API by the object's id read the same bytes; a private bucket stays closed to clients; a missing byte
// file is a report line, fetched by a later run from the old Storage API (`--files-from`, a local stand-in).
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import { generateTOTP } from "@oslojs/otp";
import { createClient } from "@supabase/supabase-js";
import { decodeJwt, SignJWT } from "jose";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  type SupabaseSeededUser,
  seedSupabaseSession,
  seedSupabaseSsoProvider,
  seedSupabaseUser,
} from "../fixtures/supabase/seed";
import { type SeededObject, seedBucket, seedObject } from "../fixtures/supabase/seed-storage";
import { IDP_ENTITY_ID, idpMetadataXml } from "../sso/saml-support/idp";
import {
  loadSupabaseSchema,
  loadSupabaseStorageSchema,
  type RunningPostgres,
  startPostgres,
} from "../support/postgres";
import { authUrl, type CommandRun, PASSWORD, runAdminCommand, serverUrl } from "./client";

const adminSecret = inject("adminSecret");
const keys = inject("supabaseKeys");
const options = { auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false } };
const ENCRYPTION_KEY = randomBytes(32).toString("base64url");
/** The old project's anon key: a JWT with `role: anon`, signed with the old project's secret (never needed here). */
const OLD_ANON_KEY = await new SignJWT({ role: "anon" })
  .setProtectedHeader({ alg: "HS256" })
  .setIssuer("supabase")
  .sign(randomBytes(32));

type Run = CommandRun<{
  tables: Record<string, Record<string, number>>;
  leftOut: { table: string; reason: string; count: number }[];
  notCarried: { table: string; id: string; reason: string }[];
}>;

/**
 * The command as a person runs it against a deployment: `--server`, ADMIN_SECRET, the database URL and key; the
 * bytes from `--files-dir` unless `args` name another source.
 */
function importSupabase(args: string[] = [], env: Record<string, string> = {}): Promise<Run> {
  const source = args.includes("--files-from") ? [] : ["--files-dir", filesDir];
  const secrets = {
    SUPABASE_DATABASE_URL: postgres.url,
    SUPABASE_ENCRYPTION_KEY: `key-1:${ENCRYPTION_KEY}`,
    SUPABASE_ANON_KEY: OLD_ANON_KEY,
    ...env,
  };
  return runAdminCommand("import-supabase", [...args, ...source], secrets, {
    tables: {},
    leftOut: [],
    notCarried: [],
  });
}

const supabase = () => createClient(`${serverUrl}/supabase`, keys.publishable, options);
const adminClient = () => createClient(`${serverUrl}/supabase`, keys.secret, options);

let postgres: RunningPostgres;
let db: pg.Client;
const tag = crypto.randomUUID().slice(0, 8);
const githubId = String(Math.floor(Math.random() * 1e12));
const users = {} as Record<
  "ana" | "pending" | "banned" | "gone" | "badHash" | "caseA" | "caseB" | "sso",
  SupabaseSeededUser
>;
let oldSession: { id: string; token: string };
let steppedSession: { id: string; parent: string };
const TOTP_AT = Math.floor(Date.now() / 1000) - 30;
let dryRun: Run;
let first: Run;
let ssoProviderId: string;
/** Storage's file backend root (FILE_STORAGE_BACKEND_PATH) with the objects' bytes. */
let filesDir: string;
const buckets = { open: `avatars-${tag}`, closed: `private-${tag}` };
const objects = {} as Record<"cat" | "report" | "missing", SeededObject>;
const CAT = Buffer.from(`a cat picture ${tag}`);
const REPORT = randomBytes(70_000);

beforeAll(async () => {
  postgres = await startPostgres();
  await loadSupabaseSchema(postgres.url);
  await loadSupabaseStorageSchema(postgres.url);
  db = new pg.Client({ connectionString: postgres.url });
  await db.connect();
  filesDir = await mkdtemp(join(tmpdir(), "supabase-storage-"));
  users.ana = await seedSupabaseUser(db, {
    email: `ana-${tag}@example.com`,
    password: PASSWORD,
    userMetadata: { full_name: "Ana Moved", plan: "team" },
    appMetadata: { tier: "gold" },
    identities: [{ provider: "github", subject: githubId }],
    totp: { friendlyName: "phone app", encryptionKey: ENCRYPTION_KEY, keyId: "key-1" },
  });
  // Signed in at Supabase before the move, with GoTrue's v1 refresh token.
  oldSession = await seedSupabaseSession(db, users.ana.id);
  // Another of hers, stepped up with her TOTP code at Supabase.
  steppedSession = await seedSupabaseSession(db, users.ana.id, new Date(TOTP_AT * 1000));
  users.pending = await seedSupabaseUser(db, {
    email: `pending-${tag}@example.com`,
    password: PASSWORD,
    emailConfirmed: false,
    pending: { type: "confirmation" },
  });
  users.banned = await seedSupabaseUser(db, {
    email: `banned-${tag}@example.com`,
    password: PASSWORD,
    bannedUntil: new Date(Date.now() + 86_400_000),
  });
  users.gone = await seedSupabaseUser(db, { email: `gone-${tag}@example.com`, deletedAt: new Date() });
  users.badHash = await seedSupabaseUser(db, { email: `bad-${tag}@example.com`, password: "$2a$10$short" });
  // GoTrue lower-cases addresses, but a row written by hand need not be: two addresses that are one here.
  users.caseA = await seedSupabaseUser(db, { email: `Case-${tag}@example.com` });
  users.caseB = await seedSupabaseUser(db, { email: `case-${tag}@example.com` });
  // A user of an SSO connection, with its provider: the provider becomes an org here, the user comes with it.
  ssoProviderId = await seedSupabaseSsoProvider(db, {
    metadataXml: idpMetadataXml(),
    entityId: IDP_ENTITY_ID,
    domains: [`corp-${tag}.test`],
    attributeMapping: { keys: { email: { name: "mail" } } },
  });
  users.sso = await seedSupabaseUser(db, {
    email: `sso-${tag}@corp-${tag}.test`,
    password: null,
    isSsoUser: true,
    identities: [{ provider: `sso:${ssoProviderId}`, subject: "00u1-nameid" }],
  });
  await seedBucket(db, { id: buckets.open, public: true, allowedMimeTypes: ["image/*", "text/plain"] });
  await seedBucket(db, { id: buckets.closed, fileSizeLimit: 1_000_000 });
  await db.query(
    `CREATE POLICY "owners read their reports" ON storage.objects FOR SELECT TO authenticated
     USING (bucket_id = '${buckets.closed}' AND owner_id = (auth.uid())::text)`,
  );
  objects.cat = await seedObject(db, {
    bucket: buckets.open,
    name: "pets/cat.txt",
    bytes: CAT,
    contentType: "text/plain",
    owner: users.ana.id,
    userMetadata: { caption: "the cat" },
    filesDir,
  });
  objects.report = await seedObject(db, {
    bucket: buckets.closed,
    name: "2026/report.bin",
    bytes: REPORT,
    owner: users.ana.id,
    filesDir,
  });
  objects.missing = await seedObject(db, {
    bucket: buckets.closed,
    name: "2026/lost.bin",
    bytes: Buffer.from("never copied"),
    filesDir: null,
  });
  dryRun = await importSupabase(["--dry-run"]);
  first = await importSupabase();
}, 120_000);

afterAll(async () => {
  await db?.end();
  await postgres?.stop();
  if (filesDir) await rm(filesDir, { recursive: true, force: true });
});

describe("import-supabase, then supabase-js against the service", () => {
  it("a dry run writes nothing and says what a run would do", async () => {
    expect(dryRun.report.tables["auth.users"]).toMatchObject({
      read: 8,
      imported: 5,
      skipped: 2,
      leftOut: 1,
    });
    // The dry run's checks ran, but nobody was written: the first real run imported them.
    expect(first.report.tables["auth.users"]).toMatchObject({ read: 8, imported: 5, skipped: 2, leftOut: 1 });
  });

  it("the old password signs in as the same user, with user_metadata and app_metadata; the identity is listed", async () => {
    const client = supabase();
    const signedIn = await client.auth.signInWithPassword({ email: users.ana.email!, password: PASSWORD });
    expect(signedIn.error).toBeNull();
    expect(signedIn.data.user?.id).toBe(users.ana.id);
    expect(signedIn.data.user?.user_metadata).toMatchObject({ full_name: "Ana Moved", plan: "team" });
    expect(signedIn.data.user?.app_metadata).toMatchObject({ tier: "gold" });
    const identities = await client.auth.getUserIdentities();
    expect(identities.data?.identities.map((i) => [i.provider, i.id])).toContainEqual(["github", githubId]);
  });

  it("the TOTP factor, sealed under GoTrue's DB encryption key, steps the session up by its own id", async () => {
    const client = supabase();
    await client.auth.signInWithPassword({ email: users.ana.email!, password: PASSWORD });
    const factors = await client.auth.mfa.listFactors();
    expect(factors.data?.totp.map((f) => f.id)).toEqual([users.ana.totpFactorId]);
    const code = await generateTOTP(decodeBase32IgnorePadding(users.ana.totpSecret!), 30, 6);
    const verified = await client.auth.mfa.challengeAndVerify({ factorId: users.ana.totpFactorId!, code });
    expect(verified.error).toBeNull();
    expect((await client.auth.mfa.getAuthenticatorAssuranceLevel()).data?.currentLevel).toBe("aal2");
  });

  it("a confirmation link mailed before the move confirms once through verifyOtp({ token_hash })", async () => {
    const client = supabase();
    const verified = await client.auth.verifyOtp({ token_hash: users.pending.tokenHash!, type: "signup" });
    expect(verified.error).toBeNull();
    expect(verified.data.user?.id).toBe(users.pending.id);
    expect(verified.data.user?.email_confirmed_at).toEqual(expect.any(String));
    // Single use: the same link again is refused as GoTrue refuses a spent one.
    const again = await supabase().auth.verifyOtp({ token_hash: users.pending.tokenHash!, type: "signup" });
    expect(again.error).toMatchObject({ status: 403, code: "otp_expired" });
  });

  it("a banned user stays banned; a soft-deleted one is not carried and the report says so", async () => {
    const banned = await supabase().auth.signInWithPassword({
      email: users.banned.email!,
      password: PASSWORD,
    });
    expect(banned.error).toMatchObject({ code: "user_banned" });
    const found = await adminClient().auth.admin.getUserById(users.gone.id);
    expect(found.data.user).toBeNull();
    expect(first.report.leftOut).toContainEqual(
      expect.objectContaining({ table: "auth.users", reason: expect.stringMatching(/soft-deleted/) }),
    );
  });

  it("bad rows are report lines, exit 1, and nothing of them is written", async () => {
    expect(first.code).toBe(1);
    const lines = first.report.notCarried.map((row) => `${row.id} ${row.reason}`);
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^${users.badHash.id} .*password hash`)));
    expect(lines).toContainEqual(expect.stringMatching(/differing only in case/));
    const admin = adminClient();
    expect((await admin.auth.admin.getUserById(users.badHash.id)).data.user).toBeNull();
    const twins = await Promise.all(
      [users.caseA, users.caseB].map((u) => admin.auth.admin.getUserById(u.id)),
    );
    expect(twins.filter((t) => t.data.user !== null)).toHaveLength(1);
  });

  it("an SSO provider is an org with its verified domain; its SSO user comes with it", async () => {
    expect(first.report.tables["auth.sso_providers"]).toMatchObject({ read: 1, imported: 1 });
    const org = await fetch(`${authUrl}/admin/orgs/${ssoProviderId}/domains`, {
      headers: { "x-hasura-admin-secret": adminSecret },
    });
    expect(((await org.json()) as { items: unknown[] }).items).toEqual([
      expect.objectContaining({ domain: `corp-${tag}.test`, verified: true }),
    ]);
    expect((await adminClient().auth.admin.getUserById(users.sso.id)).data.user?.email).toBe(users.sso.email);
  });

  // Threat: the move signs every user out (a client holding Supabase's refresh token must not need a password).
  it("a session signed in before the move refreshes through supabase-js as the same user and session", async () => {
    expect(first.report.tables["auth.sessions"]).toMatchObject({ read: 2, imported: 2 });
    expect(first.report.tables["auth.refresh_tokens"]).toMatchObject({ read: 2, imported: 2 });
    const claims = { sub: users.ana.id, session_id: oldSession.id };
    const refreshed = await supabase().auth.refreshSession({ refresh_token: oldSession.token });
    expect(decodeJwt(refreshed.data.session!.access_token)).toMatchObject(claims);
    // Within the reuse interval (10 s here) the old token answers the same session again, as GoTrue's; a replay after
    // it is refused (test/move-in/supabase-sessions.test.ts, interval 0: no 10 s wait here).
    const race = await supabase().auth.refreshSession({ refresh_token: oldSession.token });
    expect(decodeJwt(race.data.session!.access_token)).toMatchObject(claims);
    // Loss closed (issue 44): a session stepped up with TOTP at Supabase (mfa_amr_claims) came out aal1; a client that
    // lost GoTrue's last answer and retries with the live token's `parent` (which GoTrue takes) was signed out.
    const stepped = await supabase().auth.refreshSession({ refresh_token: steppedSession.parent });
    expect(decodeJwt(stepped.data.session!.access_token)).toMatchObject({
      session_id: steppedSession.id,
      aal: "aal2",
      amr: [{ method: "totp", timestamp: TOTP_AT }],
    });
  });

  it("the old anon key is recorded, and taken as a publishable key once the supabase cut-over is recorded", async () => {
    expect(first.report.tables["project.api_keys"]).toMatchObject({ imported: 1 });
    const settings = () =>
      fetch(`${serverUrl}/supabase/auth/v1/settings`, { headers: { apikey: OLD_ANON_KEY } });
    const before = await settings();
    expect(before.status).toBe(401);
    await before.body?.cancel();
    const recorded = await fetch(`${authUrl}/admin/import/cut-over`, {
      method: "POST",
      headers: { "x-hasura-admin-secret": adminSecret, "content-type": "application/json" },
      body: JSON.stringify({ system: "supabase" }),
    });
    expect(recorded.status, await recorded.text()).toBe(200);
    const after = await settings();
    expect(after.status).toBe(200);
    await after.body?.cancel();
  });

  it("a second run changes nothing", async () => {
    const second = await importSupabase();
    expect(second.report.tables["auth.users"]).toMatchObject({
      read: 8,
      unchanged: 5,
      imported: 0,
      updated: 0,
    });
    // Every identity read is accounted for: the email ones are the accounts themselves, and go with their user.
    expect(second.report.tables["auth.identities"]).toEqual(
      expect.objectContaining({ read: 9, unchanged: 6, skipped: 2, leftOut: 1, imported: 0 }),
    );
    expect(second.report.tables["auth.mfa_factors"]).toMatchObject({ read: 1, unchanged: 1 });
    // The session spent here is not brought back: nothing of it is written again.
    expect(second.report.tables["auth.sessions"]).toMatchObject({ read: 2, imported: 0, updated: 0 });
    // No byte moves again: buckets and objects are as the first run left them; the lost object is listed again.
    expect(second.report.tables["storage.buckets"]).toMatchObject({ read: 2, unchanged: 2, imported: 0 });
    expect(second.report.tables["storage.objects"]).toMatchObject({
      read: 3,
      unchanged: 2,
      skipped: 1,
      imported: 0,
      updated: 0,
    });
  });

  // Loss closed (issue 44) with the users' rule: an SSO provider deleted at Supabase before the cut-over stayed an
  // org here, its IdP still signing people in to the verified domain.
  it("a user soft-deleted, or an SSO provider deleted, in Supabase after an earlier run is deleted here by the next", async () => {
    await db.query("UPDATE auth.users SET deleted_at = now() WHERE id = $1", [users.banned.id]);
    // Its SAML provider and domains go with it (GoTrue's foreign keys cascade, as its Eager().Destroy deletes them).
    await db.query("DELETE FROM auth.sso_providers WHERE id = $1", [ssoProviderId]);
    const delta = await importSupabase();
    expect(delta.report.tables["auth.users"]).toMatchObject({ deleted: 1, leftOut: 2 });
    expect((await adminClient().auth.admin.getUserById(users.banned.id)).data.user).toBeNull();
    expect(delta.report.tables["auth.sso_providers"]).toMatchObject({ deleted: 1 });
    const org = await fetch(`${authUrl}/admin/orgs/${ssoProviderId}`, {
      headers: { "x-hasura-admin-secret": adminSecret },
    });
    expect(org.status).toBe(404);
    await org.body?.cancel();
    // Its user stays, as in Supabase.
    expect((await adminClient().auth.admin.getUserById(users.sso.id)).data.user?.email).toBe(users.sso.email);
  });
});

describe("import-supabase storage, then storage-js and the Nhost API against the service", () => {
  it("storage-js downloads, lists and links an object of a public bucket by its bucket and name", async () => {
    const open = supabase().storage.from(buckets.open);
    const downloaded = await open.download("pets/cat.txt");
    expect(downloaded.error).toBeNull();
    expect(Buffer.from(await downloaded.data!.arrayBuffer())).toEqual(CAT);
    const listed = await adminClient().storage.from(buckets.open).list("pets");
    expect(listed.error).toBeNull();
    expect(
      listed.data?.map((o) => [
        o.id,
        o.name,
        o.metadata?.mimetype,
        o.metadata?.eTag,
        (o as { user_metadata?: unknown }).user_metadata,
      ]),
    ).toEqual([[objects.cat.id, "cat.txt", "text/plain", objects.cat.etag, { caption: "the cat" }]]);
    const response = await fetch(open.getPublicUrl("pets/cat.txt").data.publicUrl);
    expect(response.status).toBe(200);
    expect(Buffer.from(await response.arrayBuffer())).toEqual(CAT);
  });

  it("an object keeps its storage.objects id: the Nhost API serves it at /storage/v1/files/{id}", async () => {
    const response = await fetch(`${serverUrl}/storage/v1/files/${objects.report.id}`, {
      headers: { "x-hasura-admin-secret": adminSecret },
    });
    expect(response.status).toBe(200);
    expect(Buffer.from(await response.arrayBuffer())).toEqual(REPORT);
  });

  // Threat: a private Supabase bucket opened to everyone by the move. Its RLS policies are not run here, so it starts
  // with every client rule `none` (as a bucket the face makes), and the report lists its policies to set rules from.
  it("a private bucket is refused to a client, served to the service role; its policies are listed", async () => {
    const client = supabase();
    await client.auth.signInWithPassword({ email: users.ana.email!, password: PASSWORD });
    const refused = await client.storage.from(buckets.closed).download("2026/report.bin");
    expect(refused.data).toBeNull();
    expect(refused.error).not.toBeNull();
    const served = await adminClient().storage.from(buckets.closed).download("2026/report.bin");
    expect(served.error).toBeNull();
    expect(Buffer.from(await served.data!.arrayBuffer())).toEqual(REPORT);
    expect(first.report.leftOut).toContainEqual(
      expect.objectContaining({
        table: "storage.policies",
        reason: expect.stringMatching(
          new RegExp(`^bucket ${buckets.closed}: policy "owners read their reports"`),
        ),
      }),
    );
  });

  it("an object whose bytes are missing is a report line, exit 1, and nothing of it is written", async () => {
    expect(first.code).toBe(1);
    expect(first.report.notCarried).toContainEqual(
      expect.objectContaining({ id: objects.missing.id, reason: expect.stringMatching(/bytes not found/) }),
    );
    const lost = await adminClient().storage.from(buckets.closed).download("2026/lost.bin");
    expect(lost.data).toBeNull();
    const byId = await fetch(`${serverUrl}/storage/v1/files/${objects.missing.id}`, {
      headers: { "x-hasura-admin-secret": adminSecret },
    });
    expect(byId.status).toBe(404);
    await byId.body?.cancel();
    expect(first.report.tables["storage.objects"]).toMatchObject({ read: 3, imported: 2, skipped: 1 });
    expect(dryRun.report.tables["storage.objects"]).toMatchObject({ read: 3, imported: 2, skipped: 1 });
  });

  it("a delta run with --files-from fetches the missing object from the old Storage API with the service key", async () => {
    // The old project's Storage, as it answers `GET /object/authenticated/{bucket}/{name}`: the bytes to the service
    // role's key, Storage's 400 with its own 404 for anything else.
    const lost = Buffer.from("never copied");
    const old = createServer((request, response) => {
      const wanted = `/storage/v1/object/authenticated/${buckets.closed}/2026/lost.bin`;
      if (request.url === wanted && request.headers.apikey === "old-service-key") {
        response.writeHead(200, {
          "content-type": "application/octet-stream",
          "content-length": lost.length,
        });
        return response.end(lost);
      }
      response.writeHead(400, { "content-type": "application/json" });
      response.end('{"statusCode":"404","error":"not_found","message":"Object not found"}');
    });
    await new Promise<void>((resolve) => old.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(old.address() as AddressInfo).port}/storage/v1`;
      const delta = await importSupabase(["--files-from", url], { SUPABASE_SERVICE_KEY: "old-service-key" });
      // Exit 1 still, for the users listed since the first run; no object is among them now.
      expect(
        delta.report.notCarried.filter((row) => row.table === "storage.objects"),
        delta.stderr,
      ).toEqual([]);
      expect(delta.report.tables["storage.objects"]).toMatchObject({ imported: 1, unchanged: 2, skipped: 0 });
    } finally {
      await new Promise((resolve) => old.close(resolve));
    }
    const fetched = await adminClient().storage.from(buckets.closed).download("2026/lost.bin");
    expect(Buffer.from(await fetched.data!.arrayBuffer())).toEqual(lost);
  });
});
