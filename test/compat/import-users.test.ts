// Moving users in from Auth0 and from the service's CSV, end to end (contract supabase.md §5–6): the vendors' export
// files of test/fixtures/import-users/ (bcrypt hashes made by python3-bcrypt), the real command `npm run admin --
// import-users` against the `wrangler dev` server, then sign-in with the old passwords. A second run changes
// nothing; an interrupted run carried on ends as one clean run; bad rows are reported and nothing of them is written;
// a delta run removes the user a newer export lacks.
// Clerk's bcrypt user with TOTP too: the authenticator app keeps working. (Firebase's and Cognito's files, and
// Clerk's other hashers: what the command sends, test/tooling/import-users.test.ts.)
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import { generateTOTP } from "@oslojs/otp";
import { afterAll, describe, expect, inject, it } from "vitest";
// @ts-expect-error: plain .mjs without types
import { importedId } from "../../scripts/import-users/records.mjs";
import { authUrl, type CommandRun, runAdminCommand } from "./client";

const adminSecret = inject("adminSecret");
const FIXTURES = join(process.cwd(), "test", "fixtures", "import-users");
const at = (name: string) => join(FIXTURES, name);
const scratch = mkdtempSync(join(tmpdir(), "import-users-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

type Run = CommandRun<{
  tables: Record<string, Record<string, number>>;
  notCarried: { table: string; id: string; reason: string }[];
}>;

/** The command as a person runs it against a deployment. */
const importUsers = (...args: string[]): Promise<Run> =>
  runAdminCommand("import-users", args, {}, { tables: {}, notCarried: [] });

async function signIn(email: string, password: string) {
  const response = await fetch(`${authUrl}/signin/email-password`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function adminUser(id: string) {
  const response = await fetch(`${authUrl}/admin/users/${id}`, {
    headers: { "x-hasura-admin-secret": adminSecret },
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const AUTH0 = [
  "--from",
  "auth0",
  "--file",
  at("auth0-users.ndjson"),
  "--passwords",
  at("auth0-passwords.ndjson"),
];

describe("import-users through the Worker", () => {
  it("Auth0: every known password signs in, with the old hash once and the new one after; a rerun changes nothing", async () => {
    const dry = await importUsers(...AUTH0, "--dry-run");
    expect(dry.report.tables["auth.users"]).toMatchObject({ read: 5, imported: 4, skipped: 1 });
    expect((await signIn("ada.auth0@example.com", "ada-old-password")).status).not.toBe(200);

    const run = await importUsers(...AUTH0);
    // The case twin and the hash of a user not in the export: reported, exit 1, nothing of them written.
    expect(run.code).toBe(1);
    expect(run.report.tables["auth.users"]).toMatchObject({ read: 5, imported: 4, skipped: 1 });
    expect(run.report.notCarried.map((row) => row.id)).toEqual([
      "auth0|60425dc43519d90068f82975",
      "auth0|60425dc43519d90068f82979",
    ]);
    expect((await adminUser(importedId("auth0", "auth0|60425dc43519d90068f82975"))).status).toBe(404);

    // First sign-in checks Auth0's bcrypt hash and replaces it; the second checks the service's own hash.
    const first = await signIn("ada.auth0@example.com", "ada-old-password");
    expect(first.status).toBe(200);
    const adaId = importedId("auth0", "auth0|60425dc43519d90068f82973");
    expect((first.body.session as { user: { id: string } }).user.id).toBe(adaId);
    expect((await signIn("ada.auth0@example.com", "ada-old-password")).status).toBe(200);
    expect((await signIn("ADA.auth0@example.com", "wrong password")).status).toBe(401);
    // Threat: a user Auth0 blocked must not get in by moving.
    expect(await signIn("linus.auth0@example.com", "linus-old-password")).toMatchObject({
      status: 401,
      body: { error: "disabled-user" },
    });

    const ada = await adminUser(adaId);
    expect(ada.body).toMatchObject({
      email: "ada.auth0@example.com",
      emailVerified: true,
      metadata: { importedFrom: { system: "auth0", id: "auth0|60425dc43519d90068f82973" } },
    });
    const grace = await adminUser(importedId("auth0", "google-oauth2|109876543210987654321"));
    expect(grace.body.providers).toMatchObject([
      { provider: "google", providerUserId: "109876543210987654321" },
    ]);

    // A second run: Ada's row changed here (her hash was replaced at sign-in), so it is kept; the rest unchanged.
    const again = await importUsers(...AUTH0);
    expect(again.report.tables["auth.users"]).toMatchObject({ read: 5, imported: 0, updated: 0, skipped: 1 });
    expect(again.report.tables["auth.users"]!.unchanged! + again.report.tables["auth.users"]!.kept!).toBe(4);
    expect((await signIn("ada.auth0@example.com", "ada-old-password")).status).toBe(200);
  }, 60_000);

  it("Firebase: auth:export's scrypt hashes sign in with the old password, then with the service's own hash", async () => {
    const FIREBASE = ["--from", "firebase", "--file", at("firebase-users.json"), "--hash-config"];
    const run = await importUsers(...FIREBASE, at("firebase-hash-config.txt"));
    // The whole report when it fails: one clean-checkout run imported 3 of the 4, which no run since reproduced.
    expect(run.report.tables["auth.users"], JSON.stringify(run.report)).toMatchObject({
      read: 4,
      imported: 4,
    });
    // user1 is the example of Firebase's own scrypt reference (its password `user1password`): a hash no code of this
    // repository made. The first sign-in checks Firebase's modified scrypt and replaces it; the second the new hash.
    for (const [email, password] of [
      ["user1.firebase@example.com", "user1password"],
      ["grace.firebase@example.com", "grace-old-password"],
    ] as const) {
      expect((await signIn(email, "not the password")).status).toBe(401);
      const first = await signIn(email, password);
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      expect((await signIn(email, password)).status).toBe(200);
    }
    const again = await importUsers(...FIREBASE, at("firebase-hash-config.txt"));
    expect(again.report.tables["auth.users"]).toMatchObject({ read: 4, imported: 0, updated: 0 });
  }, 60_000);

  it("the CSV: an interrupted run carried on ends as one clean run; a malformed hash is the Worker's to refuse", async () => {
    // The run stopped after its first user: the same as a file of that user alone.
    const lines = readFileSync(at("users.csv"), "utf8").split("\n");
    const partial = join(scratch, "first-user.csv");
    writeFileSync(partial, `${lines[0]}\n${lines[1]}\n`);
    const interrupted = await importUsers("--from", "csv", "--file", partial);
    expect(interrupted.report.tables["auth.users"]).toMatchObject({ read: 1, imported: 1 });

    const run = await importUsers("--from", "csv", "--file", at("users.csv"));
    expect(run.code).toBe(1);
    expect(run.report.tables["auth.users"]).toMatchObject({ read: 4, unchanged: 1, imported: 1, skipped: 2 });
    const reasons = Object.fromEntries(
      run.report.notCarried.map((row) => [row.id.split(" ")[0], row.reason]),
    );
    expect(reasons["legacy-44"]).toMatch(/"whirlpool" is not one this service verifies/);
    // Threat: a hash the service can't check would lock the user out, or worse be compared as something else.
    expect(reasons["legacy-43"]).toMatch(/hash/i);
    expect((await adminUser(importedId("csv", "legacy-43"))).status).toBe(404);

    expect((await signIn("quinn.csv@example.com", "quinn-old-password")).status).toBe(200);
    // Rosa's export says her address is unverified: so it stays (the service asks for verified addresses here).
    expect(await signIn("rosa.csv@example.com", "rosa-old-password")).toMatchObject({
      status: 401,
      body: { error: "unverified-user" },
    });
    expect((await adminUser(importedId("csv", "legacy-42"))).body).toMatchObject({
      email: "rosa.csv@example.com",
      emailVerified: false,
      phoneNumber: "+14155550177",
      metadata: { importedFrom: { system: "csv", id: "legacy-42" } },
    });

    const again = await importUsers("--from", "csv", "--file", at("users.csv"));
    expect(again.report.tables["auth.users"]).toMatchObject({ read: 4, imported: 0, updated: 0, skipped: 2 });
  }, 60_000);

  // Threat: a user deleted at the vendor before the switch (an account closed, a person who asked to be forgotten)
  // would live on here and could still sign in; and the Nhost import's removal pass took every imported user it could
  // not find in Nhost for one deleted there (the ledger now records each user's system).
  it("a delta run removes the user the newer export lacks, and only from its own system's ledger", async () => {
    // The fixture's lines end in CRLF: csv-parse takes the first line's ending for every record.
    const lines = readFileSync(at("users.csv"), "utf8").trimEnd().split(/\r?\n/);
    const tag = crypto.randomUUID().slice(0, 8);
    const row = (n: number) => `delta-${tag}-${n},delta-${tag}-${n}@example.com,true,,Delta ${n},,,`;
    const first = join(scratch, "delta-first.csv");
    const second = join(scratch, "delta-second.csv");
    writeFileSync(first, [...lines, row(1), row(2)].join("\n"));
    writeFileSync(second, [...lines, row(1)].join("\n"));
    const gone = importedId("csv", `delta-${tag}-2`);
    const imported = await importUsers("--from", "csv", "--file", first);
    expect((await adminUser(gone)).status, `${imported.stderr}\n${JSON.stringify(imported.report)}`).toBe(
      200,
    );

    const dry = await importUsers("--from", "csv", "--file", second, "--dry-run");
    expect(dry.report.tables["auth.users"]).toMatchObject({ deleted: 1 });
    expect((await adminUser(gone)).status).toBe(200);
    const run = await importUsers("--from", "csv", "--file", second);
    expect(run.report.tables["auth.users"]).toMatchObject({ deleted: 1, imported: 0 });
    expect((await adminUser(gone)).status).toBe(404);
    expect((await adminUser(importedId("csv", `delta-${tag}-1`))).status).toBe(200);

    // The Nhost import's ledger page (what its removal pass compares with Nhost's users) lists none of the CSV's.
    const page = await fetch(`${authUrl}/admin/import/nhost/ledger?kind=user&limit=1000`, {
      headers: { "x-hasura-admin-secret": adminSecret },
    });
    const items = ((await page.json()) as { items: string[] }).items;
    expect(items).not.toContain(importedId("csv", `delta-${tag}-1`));
    expect(items).not.toContain(importedId("csv", "legacy-42"));
  }, 60_000);

  it("Clerk: the TOTP secret carried asks for the authenticator app's code after the old password", async () => {
    const run = await importUsers("--from", "clerk", "--file", at("clerk-users.csv"));
    // The row without an identifier and the unknown hasher are listed; Ada comes in whole, and so does the user of
    // Clerk's six-field scrypt_firebase hash, whose old password is checked here (its address unconfirmed at Clerk, so
    // the right password meets the address check, a wrong one the usual refusal).
    expect(run.report.tables["auth.users"]).toMatchObject({ read: 4, imported: 2 });
    const fire = await signIn("fire.clerk@example.com", "fire-clerk-password");
    expect(fire.body.error).toBe("unverified-user");
    expect((await signIn("fire.clerk@example.com", "not-the-password")).body.error).toBe(
      "invalid-email-password",
    );
    const first = await signIn("ada.clerk@example.com", "ada-clerk-password");
    expect(first.status).toBe(200);
    const ticket = (first.body.mfa as { ticket: string } | null)?.ticket;
    // Threat: a user who had a second factor at Clerk must not get in here with the password alone.
    expect(first.body.session).toBeNull();
    expect(ticket).toEqual(expect.any(String));
    const otp = generateTOTP(decodeBase32IgnorePadding("JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"), 30, 6);
    const second = await fetch(`${authUrl}/signin/mfa/totp`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ticket, otp }),
    });
    expect(second.status).toBe(200);
    const body = (await second.json()) as { session: { user: { id: string } } };
    expect(body.session.user.id).toBe(importedId("clerk", "user_2ZKRGdBfNbEzSAD6V3XqvM8hYkP"));
  }, 60_000);
});
