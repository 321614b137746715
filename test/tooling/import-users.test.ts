// `npm run admin -- import-users` (scripts/import-users/): what the real command sends for each vendor's export file
// (test/fixtures/import-users/), captured by a small HTTP server standing in for the service's import API, and what
// it refuses before sending anything. The import through the Worker itself, and sign-in with the old passwords, is
// test/compat/import-users.test.ts.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: plain .mjs without types
import { clerkCreatedAt } from "../../scripts/import-users/clerk.mjs";
// @ts-expect-error: plain .mjs without types
import { SOURCES } from "../../scripts/import-users/command.mjs";
// @ts-expect-error: plain .mjs without types
import { parseHashConfig } from "../../scripts/import-users/firebase.mjs";
// @ts-expect-error: plain .mjs without types
import { HASHERS, importedId } from "../../scripts/import-users/records.mjs";
import { IMPORTED_HASHERS } from "../../src/lib/imported-hashes/family";

const FIXTURES = join(process.cwd(), "test", "fixtures", "import-users");
const at = (name: string) => join(FIXTURES, name);

interface Bundle {
  id: string;
  email: string | null;
  emailVerified: boolean;
  phoneNumber: string | null;
  phoneNumberVerified: boolean;
  displayName: string;
  disabled: boolean;
  createdAt: string;
  passwordHash: string | null;
  passwordHasher?: string;
  totpSecret: string | null;
  activeMfaType: string | null;
  metadata: Record<string, unknown> & { importedFrom: { system: string; id: string } };
  providers: { id: string; providerId: string; providerUserId: string }[];
}
interface Captured {
  path: string;
  body: { dryRun?: boolean; system?: string; users?: Bundle[]; kind?: string; ids?: string[] };
}

let server: Server;
let url: string;
let captured: Captured[] = [];
/** The users earlier runs imported, per system, as the stand-in's ledger pages list them. */
let ledgers: Record<string, string[]> = {};

beforeAll(async () => {
  // The import API's answer for a batch: every user imported (the service's own checks are the compat test's); its
  // ledger pages as the service pages them (ids ascending, `after`, `limit`, one system's); every removal done.
  server = createServer((request, response) => {
    let text = "";
    request.on("data", (chunk) => (text += chunk));
    request.on("end", () => {
      const body = text ? JSON.parse(text) : {};
      captured.push({ path: request.url ?? "", body });
      response.setHeader("content-type", "application/json");
      if (request.url?.endsWith("/users")) {
        response.end(
          JSON.stringify({ results: body.users.map((u: Bundle) => ({ id: u.id, outcome: "imported" })) }),
        );
      } else if (request.url?.includes("/ledger?")) {
        const query = new URL(request.url, "http://x").searchParams;
        const ids = [...(ledgers[query.get("system")!] ?? [])].sort();
        const after = query.get("after");
        const items = ids.filter((id) => after === null || id > after).slice(0, Number(query.get("limit")));
        const next = items.length === Number(query.get("limit")) ? items[items.length - 1] : null;
        response.end(JSON.stringify({ items, next }));
      } else if (request.url?.endsWith("/removals")) {
        response.end(JSON.stringify({ results: body.ids.map((id: string) => ({ id, outcome: "deleted" })) }));
      } else {
        response.statusCode = 204;
        response.end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/auth/v1`;
});
const scratch = mkdtempSync(join(tmpdir(), "import-users-tooling-"));
afterAll(async () => {
  rmSync(scratch, { recursive: true, force: true });
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

interface Run {
  code: number;
  stderr: string;
  report: { tables: Record<string, Record<string, number>>; notCarried: { id: string; reason: string }[] } & {
    leftOut: { table: string; reason: string; count: number }[];
    problems: string[];
  };
  users: Bundle[];
  paths: string[];
}

/** The command as a person runs it, against the capture server (whose ledgers a test sets before). */
function importUsers(...args: string[]): Promise<Run> {
  captured = [];
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["scripts/admin.mjs", "import-users", ...args, "--server", url, "--json"],
      { env: { ...process.env, ADMIN_SECRET: "test-secret", AUTH_URL: "" } },
      (error, stdout, stderr) => {
        let report = { tables: {}, notCarried: [], leftOut: [] } as unknown as Run["report"];
        try {
          report = JSON.parse(stdout);
        } catch {}
        resolve({
          code: error ? Number(error.code) : 0,
          stderr,
          report,
          users: captured.flatMap((c) => c.body.users ?? []),
          paths: captured.map((c) => c.path.replace(/^.*\/admin\/import\/nhost/, "")),
        });
      },
    );
  });
}

const byEmail = (run: Run, email: string) => run.users.find((u) => u.email === email)!;
const reasons = (run: Run) => run.report.notCarried.map((row) => `${row.id}: ${row.reason}`);
const leftOut = (run: Run) => run.report.leftOut.map((row) => row.reason);

describe("import-users: what each vendor's export becomes", () => {
  it("Auth0: bcrypt hashes joined by _id.$oid, Google re-linked, blocked → disabled; case twins and stray hashes reported", async () => {
    const run = await importUsers(
      "--from",
      "auth0",
      "--file",
      at("auth0-users.ndjson"),
      "--passwords",
      at("auth0-passwords.ndjson"),
    );
    // Threat: a second address differing only in case would be a second account for one mailbox (account takeover
    // by whoever controls the other spelling); and a hash filed under an id not in the export is nobody's to carry.
    expect(run.code).toBe(1);
    expect(reasons(run)).toEqual([
      expect.stringMatching(
        /^auth0\|60425dc43519d90068f82975: email ada\.auth0@example\.com is also auth0\|60425dc43519d90068f82973's/,
      ),
      expect.stringMatching(
        /^auth0\|60425dc43519d90068f82979: the password file's line 4 names a user not in/,
      ),
    ]);
    expect(run.users.map((u) => u.email).sort()).toEqual([
      "ada.auth0@example.com",
      "bob.auth0@example.com",
      "grace.auth0@example.com",
      "linus.auth0@example.com",
    ]);
    const ada = byEmail(run, "ada.auth0@example.com");
    expect(ada).toMatchObject({
      id: importedId("auth0", "auth0|60425dc43519d90068f82973"),
      passwordHasher: "bcrypt",
      emailVerified: true,
      displayName: "Ada Lovelace",
      disabled: false,
      createdAt: "2021-03-05T16:38:28.503Z",
      metadata: {
        importedFrom: { system: "auth0", id: "auth0|60425dc43519d90068f82973" },
        given_name: "Ada",
      },
    });
    expect(ada.passwordHash).toMatch(/^\$2b\$10\$/);
    expect(byEmail(run, "grace.auth0@example.com")).toMatchObject({
      passwordHash: null,
      providers: [{ providerId: "google", providerUserId: "109876543210987654321" }],
    });
    expect(byEmail(run, "linus.auth0@example.com").disabled).toBe(true);
    expect(byEmail(run, "bob.auth0@example.com").providers).toEqual([]);
    expect(leftOut(run)).toContain('provider "samlp" has no counterpart here: not linked');
    // The removal pass first (the guard's count, then the pass; nothing imported from Auth0 before: nothing to
    // remove), every call under --from.
    const ledger = "/ledger?kind=user&limit=1000&system=auth0";
    expect(run.paths).toEqual([ledger, ledger, "/users", "/completed"]);
    expect(captured[2]!.body.system).toBe("auth0");
  });

  it("Auth0: a hash filed under a user's id with another email, a broken line and an id twice are reported; the rest goes on", async () => {
    const user = (oid: string, email: string) =>
      JSON.stringify({
        user_id: `auth0|${oid}`,
        email,
        email_verified: true,
        created_at: "2021-01-01T00:00:00Z",
      });
    const hash = (oid: string, email: string) =>
      JSON.stringify({ _id: { $oid: oid }, email, passwordHash: `$2b$10$${"a".repeat(53)}` });
    const users = join(scratch, "users.ndjson");
    const passwords = join(scratch, "passwords.ndjson");
    writeFileSync(
      users,
      [
        user("a1", "one@example.com"),
        user("a2", "two@example.com"),
        "{not json",
        user("a1", "one@example.com"),
      ].join("\n"),
    );
    writeFileSync(
      passwords,
      [hash("a1", "one@example.com"), hash("a2", "someone.else@example.com")].join("\n"),
    );
    const run = await importUsers("--from", "auth0", "--file", users, "--passwords", passwords);
    // Threat: a hash line filed under the wrong id would let the other person's password into this account.
    expect(reasons(run)).toEqual([
      expect.stringMatching(/^auth0\|a2: the password file's line 2 has this id with another email/),
      expect.stringMatching(/^line 3: not a JSON line/),
      expect.stringMatching(/^auth0\|a1: appears twice in the file/),
    ]);
    expect(run.users.map((u) => u.email)).toEqual(["one@example.com"]);
    expect(run.report.tables["auth.users"]).toMatchObject({ read: 4, imported: 1, skipped: 3 });
  });

  it("sends the same ids on every run, so a second run is the ledger's 'unchanged' and an interrupted one resumes", async () => {
    const args = ["--from", "auth0", "--file", at("auth0-users.ndjson")];
    const first = await importUsers(...args);
    const second = await importUsers(...args);
    expect(second.users.map((u) => [u.id, u.providers.map((p) => p.id)])).toEqual(
      first.users.map((u) => [u.id, u.providers.map((p) => p.id)]),
    );
    expect(importedId("auth0", "auth0|x")).toBe(importedId("auth0", "auth0|x"));
    expect(importedId("firebase", "auth0|x")).not.toBe(importedId("auth0", "auth0|x"));
    expect(importedId("csv", "3B9E4C1A-7D2F-4E8B-9A6C-5F1D2E3C4B5A")).toBe(
      "3b9e4c1a-7d2f-4e8b-9a6c-5f1d2e3c4b5a",
    );
    expect(importedId("csv", "legacy-42")).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-/,
    );
  });

  it("Firebase: scrypt hashes as scrypt_firebase's six fields with the project's parameters; providers mapped", async () => {
    const run = await importUsers(
      "--from",
      "firebase",
      "--file",
      at("firebase-users.json"),
      "--hash-config",
      at("firebase-hash-config.txt"),
    );
    expect(run.code).toBe(0);
    const user1 = byEmail(run, "user1.firebase@example.com");
    // Firebase's reference example (password "user1password"), with the console's parameters appended.
    expect(user1.passwordHash).toBe(
      "lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==$42xEC+ixf3L2lw==$" +
        "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==$Bw==$8$14",
    );
    expect(user1).toMatchObject({ passwordHasher: "scrypt_firebase", createdAt: "2020-09-13T12:26:40.000Z" });
    expect(byEmail(run, "grace.firebase@example.com")).toMatchObject({
      providers: [{ providerId: "google", providerUserId: "112233445566778899" }],
      metadata: { customClaims: { role: "editor" } },
    });
    const phoneOnly = run.users.find((u) => u.phoneNumber === "+14155550123")!;
    expect(phoneOnly).toMatchObject({ email: null, phoneNumberVerified: true, disabled: true });
    expect(leftOut(run)).toContain('provider "oidc.acme" has no counterpart here: not linked');
  });

  it("Firebase's hash_config as JSON too, and a wrong one refused", () => {
    const config = parseHashConfig(
      JSON.stringify({
        hash_config: { base64_signer_key: "AAAA", base64_salt_separator: "Bw==", rounds: 8, mem_cost: 14 },
      }),
    );
    expect(config).toMatchObject({ signerKey: "AAAA", saltSeparator: "Bw==", rounds: 8, memCost: 14 });
    expect(() =>
      parseHashConfig("algorithm: HMAC_SHA256, base64_signer_key: AAAA, rounds: 8, mem_cost: 14"),
    ).toThrow(/algorithm HMAC_SHA256/);
  });

  it("Clerk: TOTP secrets carried, hashers named as the service names them, rows without an identifier reported", async () => {
    const run = await importUsers("--from", "clerk", "--file", at("clerk-users.csv"));
    expect(run.code).toBe(1);
    const ada = byEmail(run, "ada.clerk@example.com");
    expect(ada).toMatchObject({
      passwordHasher: "bcrypt",
      totpSecret: "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP",
      activeMfaType: "totp",
      emailVerified: true,
      phoneNumber: "+14155550199",
      phoneNumberVerified: true,
      displayName: "Ada Clerk",
      createdAt: clerkCreatedAt("user_2ZKRGdBfNbEzSAD6V3XqvM8hYkP"),
      metadata: {
        username: "ada",
        importedFrom: { system: "clerk", id: "user_2ZKRGdBfNbEzSAD6V3XqvM8hYkP" },
      },
    });
    expect(ada.createdAt).toMatch(/^202[3-4]-/);
    const fire = byEmail(run, "fire.clerk@example.com");
    expect(fire).toMatchObject({ passwordHasher: "scrypt_firebase", emailVerified: false });
    expect(fire.passwordHash?.split("$")).toHaveLength(6);
    expect(reasons(run)).toEqual([
      expect.stringMatching(
        /^user_2ZKRGnoIdentifierAtAll00001: no email or phone \(only the username handle-only\)/,
      ),
      expect.stringMatching(
        /^user_2ZKRGunknownHasher000000001: password_hasher "hmac_sha256_utf16_b64" is not one/,
      ),
    ]);
    expect(run.users).toHaveLength(2);
    expect(leftOut(run)).toContain("addresses beyond the primary email and phone (one of each here)");
  });

  it("Cognito: no password (the lazy-migration hook completes them), Enabled:false → disabled, sub kept as the id", async () => {
    const run = await importUsers("--from", "cognito", "--file", at("cognito-users.json"));
    expect(run.code).toBe(0);
    expect(run.users.every((u) => u.passwordHash === null && u.passwordHasher === undefined)).toBe(true);
    expect(byEmail(run, "carol.cognito@example.com")).toMatchObject({
      id: "8f1c2f3a-1b2c-4d5e-8f90-a1b2c3d4e5f6",
      emailVerified: true,
      displayName: "Carol",
      disabled: false,
      createdAt: "2022-01-02T03:04:05.678Z",
      metadata: {
        attributes: { "custom:plan": "pro" },
        cognitoUsername: "8f1c2f3a-1b2c-4d5e-8f90-a1b2c3d4e5f6",
      },
    });
    expect(byEmail(run, "dave.cognito@example.com")).toMatchObject({
      disabled: true,
      emailVerified: false,
      phoneNumber: "+14155550142",
      phoneNumberVerified: true,
    });
    expect(byEmail(run, "erin.cognito@example.com").providers).toMatchObject([
      { providerId: "google", providerUserId: "115566778899" },
    ]);
  });

  it("the CSV: UUID ids kept, others derived; an unknown hasher name caught here, a malformed hash left to the Worker", async () => {
    const run = await importUsers("--from", "csv", "--file", at("users.csv"), "--dry-run");
    expect(run.code).toBe(1);
    expect(run.users.map((u) => u.id)).toEqual([
      "3b9e4c1a-7d2f-4e8b-9a6c-5f1d2e3c4b5a",
      importedId("csv", "legacy-42"),
      importedId("csv", "legacy-43"),
    ]);
    expect(run.users[0]).toMatchObject({ emailVerified: true, metadata: { plan: "pro" } });
    expect(run.users[2]).toMatchObject({ passwordHasher: "argon2id" });
    expect(reasons(run)).toEqual([
      expect.stringMatching(/^legacy-44: password_hasher "whirlpool" is not one/),
    ]);
    // A dry run asks the service to check, and records no completed run.
    expect(captured.filter((c) => c.body.users).every((c) => c.body.dryRun === true)).toBe(true);
    const ledger = "/ledger?kind=user&limit=1000&system=csv";
    expect(run.paths).toEqual([ledger, ledger, "/users"]);
  });
});

describe("import-users refuses a file that is not what --from says, before sending anything", () => {
  // Threat: a wrong file read as another vendor's would import garbage users (or none, with every row "bad"); a
  // Firebase file without its parameters would carry hashes nobody can ever check.
  const cases: [string, string[], RegExp][] = [
    ["a Firebase file as Auth0", ["auth0", "firebase-users.json"], /is not an Auth0 user export/],
    ["a Cognito file as Firebase", ["firebase", "cognito-users.json"], /is not Firebase's auth:export JSON/],
    ["Firebase without --hash-config", ["firebase", "firebase-users.json"], /no --hash-config/],
    ["an Auth0 file as Cognito", ["cognito", "auth0-users.ndjson"], /is not Cognito's ListUsers JSON/],
    [
      "the service's CSV as Clerk's",
      ["clerk", "users.csv"],
      /is not Clerk's user export .*: the header lacks first_name/,
    ],
    ["a Cognito file as Clerk's", ["clerk", "cognito-users.json"], /looks like a Cognito ListUsers file/],
    ["a CSV missing a column", ["csv", "users-missing-column.csv"], /the header lacks password_hasher/],
    ["Clerk's CSV as the service's", ["csv", "clerk-users.csv"], /the header lacks email, email_verified/],
  ];
  // Each case through the command's reader, in this process; two of them through the real command below.
  for (const [name, [from, file], message] of cases)
    it(name, async () => {
      const items = SOURCES[from!]({ file: at(file!) })[Symbol.asyncIterator]();
      await expect(items.next()).rejects.toThrow(message);
    });

  it("the real command: exit 2, the reason, and not one request to the service", async () => {
    for (const [from, file, message] of [
      ["firebase", "firebase-users.json", /no --hash-config/],
      ["csv", "users-missing-column.csv", /the header lacks password_hasher/],
    ] as const) {
      const run = await importUsers("--from", from, "--file", at(file));
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(message);
      expect(captured).toEqual([]);
    }
  });

  it("an Auth0 user export given as the password file", async () => {
    const items = SOURCES.auth0({ file: at("auth0-users.ndjson"), passwords: at("auth0-users.ndjson") });
    await expect(items[Symbol.asyncIterator]().next()).rejects.toThrow(/is not Auth0's password-hash export/);
  });
});

describe("import-users' removal pass: the users of its system that the file no longer names", () => {
  afterEach(() => {
    ledgers = {};
  });
  const removalsSent = () => captured.filter((c) => c.path.endsWith("/removals")).map((c) => c.body);
  const csv = (name: string, lines: string[]) => {
    const file = join(scratch, name);
    writeFileSync(
      file,
      ["id,email,email_verified,phone,display_name,password_hash,password_hasher,metadata", ...lines].join(
        "\n",
      ),
    );
    return file;
  };

  // Threat: a user deleted at the vendor before the switch (an account closed, a person who asked to be forgotten)
  // would live on here and could still sign in; and another system's users must never be taken for deleted ones.
  it("removes the CSV's users an earlier run imported and the new file lacks, before sending the rest; never a row the file still names", async () => {
    const gone = importedId("csv", "legacy-41");
    ledgers = {
      csv: [importedId("csv", "legacy-42"), importedId("csv", "legacy-44"), gone],
      nhost: ["0f000000-0000-4000-8000-000000000000"],
      auth0: [importedId("auth0", "auth0|x")],
    };
    const run = await importUsers("--from", "csv", "--file", at("users.csv"));
    // legacy-44's hasher is unknown (not sent), but the file still names it: it stays.
    expect(removalsSent()).toEqual([{ dryRun: false, kind: "user", ids: [gone], system: "csv" }]);
    expect(run.paths.slice(0, 3)).toEqual([
      "/ledger?kind=user&limit=1000&system=csv",
      "/ledger?kind=user&limit=1000&system=csv",
      "/removals",
    ]);
    expect(run.paths.slice(3)).toEqual(["/users", "/completed"]);
    expect(run.report.tables["auth.users"]).toMatchObject({ deleted: 1, imported: 3 });
  });

  it("--dry-run asks the service what it would remove and removes nothing; --partial reads no ledger", async () => {
    ledgers = { csv: [importedId("csv", "legacy-41")] };
    const dry = await importUsers("--from", "csv", "--file", at("users.csv"), "--dry-run");
    expect(removalsSent()).toEqual([
      { dryRun: true, kind: "user", ids: [importedId("csv", "legacy-41")], system: "csv" },
    ]);
    expect(dry.report.tables["auth.users"]).toMatchObject({ deleted: 1 });
    const partial = await importUsers("--from", "csv", "--file", at("users.csv"), "--partial");
    expect(partial.paths).toEqual(["/users", "/completed"]);
  });

  it("a file lacking more than half of what was imported removes and writes nothing without --allow-mass-removal", async () => {
    // Threat: the wrong file (another project's export, one chunk of a split export) would delete most users.
    ledgers = { csv: Array.from({ length: 30 }, (_, i) => importedId("csv", `old-${i}`)) };
    const refused = await importUsers("--from", "csv", "--file", at("users.csv"));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /30 of 30 users imported from csv are not in this file: nothing was removed/,
    );
    expect(refused.paths.some((path) => path === "/users" || path === "/removals")).toBe(false);
    const allowed = await importUsers("--from", "csv", "--file", at("users.csv"), "--allow-mass-removal");
    expect(removalsSent().flatMap((body) => body.ids)).toHaveLength(30);
    expect(allowed.report.tables["auth.users"]).toMatchObject({ deleted: 30 });
  });

  // Threat: csv-parse takes the first line's ending for every record, so rows ending otherwise were read as extra
  // cells of the row before: their users silently not read, and so "gone" to the removal pass.
  it("a CSV whose line endings change midway is refused before anything is sent", async () => {
    ledgers = { csv: [importedId("csv", "a2")] };
    const file = join(scratch, "mixed.csv");
    writeFileSync(
      file,
      "id,email,email_verified,phone,display_name,password_hash,password_hasher,metadata\r\n" +
        "a1,a1@example.com,true,,A,,,\r\na2,a2@example.com,true,,B,,,\na3,a3@example.com,true,,C,,,\n",
    );
    const run = await importUsers("--from", "csv", "--file", file);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/is not a readable CSV: Invalid Record Length/);
    expect(captured).toEqual([]);
  });

  it("a file naming no user, or a row that names no user, removes nothing", async () => {
    ledgers = { csv: [importedId("csv", "legacy-41")] };
    const empty = await importUsers("--from", "csv", "--file", csv("empty.csv", []));
    expect(empty.code).toBe(1);
    expect(empty.stderr).toMatch(/the file names no user, but earlier runs imported users from csv/);
    expect(removalsSent()).toEqual([]);
    // A row without an id might be the user the ledger lists: who is gone can't be told.
    const unnamed = await importUsers(
      "--from",
      "csv",
      "--file",
      csv("unnamed.csv", [",ann@example.com,true,,Ann,,,", "legacy-42,rosa@example.com,true,,Rosa,,,"]),
    );
    expect(removalsSent()).toEqual([]);
    expect(unnamed.report.problems).toEqual([
      expect.stringMatching(/^removal pass not run: line 2 names no user/),
    ]);
    expect(unnamed.paths).toContain("/users");
  });
});

describe("the hasher names", () => {
  // The command (plain Node, no TypeScript) keeps its own copy of the names the Worker takes: a name one side adds and
  // the other does not would refuse good files, or send what the Worker refuses for every user.
  it("are the Worker's, no more and no fewer", () => {
    expect([...HASHERS].sort()).toEqual([...IMPORTED_HASHERS].sort());
  });
});
