// Moving a Supabase project's users in, end to end (contract supabase.md §5–6): a real Postgres loaded with Supabase
// Auth's own migrations and rows written as GoTrue writes them (test/fixtures/supabase/), the real command `npm run
// admin -- import-supabase` against the `wrangler dev` server, and then the app's own client, @supabase/supabase-js,
// with only its URL and key changed: the old password signs in as the same user, metadata, a TOTP factor (sealed
// under GoTrue's DB encryption key), a linked identity, and a confirmation link mailed before the move. A banned user
// stays banned, a soft-deleted one stays behind; a second run changes nothing, a dry run writes nothing, bad rows are
// report lines with nothing of them written.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import { generateTOTP } from "@oslojs/otp";
import { createClient } from "@supabase/supabase-js";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  type SupabaseSeededUser,
  seedSupabaseSsoProvider,
  seedSupabaseUser,
} from "../fixtures/supabase/seed";
import { IDP_ENTITY_ID, idpMetadataXml } from "../sso/saml-support/idp";
import { loadSupabaseSchema, type RunningPostgres, startPostgres } from "../support/postgres";
import { authUrl, PASSWORD, serverUrl } from "./client";

const adminSecret = inject("adminSecret");
const keys = inject("supabaseKeys");
const options = { auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false } };
const ENCRYPTION_KEY = randomBytes(32).toString("base64url");

interface Run {
  code: number | null;
  stderr: string;
  report: {
    tables: Record<string, Record<string, number>>;
    leftOut: { table: string; reason: string; count: number }[];
    notCarried: { table: string; id: string; reason: string }[];
  };
}

/** The command as a person runs it against a deployment: `--server`, ADMIN_SECRET, the database URL and key. */
function importSupabase(args: string[] = []): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["scripts/admin.mjs", "import-supabase", ...args, "--server", authUrl, "--json"],
      {
        env: {
          ...process.env,
          ADMIN_SECRET: adminSecret,
          AUTH_URL: "",
          SUPABASE_DATABASE_URL: postgres.url,
          SUPABASE_ENCRYPTION_KEY: `key-1:${ENCRYPTION_KEY}`,
        },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (chunk) => (stdout += chunk));
    child.stderr!.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      let report: Run["report"] = { tables: {}, leftOut: [], notCarried: [] };
      try {
        report = JSON.parse(stdout);
      } catch {}
      resolve({ code, stderr, report });
    });
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
let dryRun: Run;
let first: Run;
let ssoProviderId: string;

beforeAll(async () => {
  postgres = await startPostgres();
  await loadSupabaseSchema(postgres.url);
  db = new pg.Client({ connectionString: postgres.url });
  await db.connect();
  users.ana = await seedSupabaseUser(db, {
    email: `ana-${tag}@example.com`,
    password: PASSWORD,
    userMetadata: { full_name: "Ana Moved", plan: "team" },
    appMetadata: { tier: "gold" },
    identities: [{ provider: "github", subject: githubId }],
    totp: { friendlyName: "phone app", encryptionKey: ENCRYPTION_KEY, keyId: "key-1" },
  });
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
  dryRun = await importSupabase(["--dry-run"]);
  first = await importSupabase();
}, 120_000);

afterAll(async () => {
  await db?.end();
  await postgres?.stop();
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
  });

  it("a user soft-deleted in Supabase after an earlier run is deleted here by the next", async () => {
    await db.query("UPDATE auth.users SET deleted_at = now() WHERE id = $1", [users.banned.id]);
    const delta = await importSupabase();
    expect(delta.report.tables["auth.users"]).toMatchObject({ deleted: 1, leftOut: 2 });
    expect((await adminClient().auth.admin.getUserById(users.banned.id)).data.user).toBeNull();
  });
});
