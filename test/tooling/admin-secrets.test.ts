// The admin commands take secrets from the environment only (issue 42). Threat: npm prints the command line of every
// script it runs (`> node scripts/admin.mjs import-nhost --nhost-encryption-key …`), so a secret given as a flag ended
// up on the terminal, in CI logs, in shell history and in `ps`. Here each command runs as the guide writes it, through
// npm itself, with its secrets in the environment, and nothing it or npm prints contains one; a flag that would carry
// a secret is refused with the variable to set, the value never repeated.
import { execFile } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = process.cwd();
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";

const DB_PASSWORD = "pw-9f3c1e7a-db";
const ENCRYPTION_KEY = "5e".repeat(32);
const ADMIN_SECRET = "admin-secret-7c2d9b41";
const NHOST_ADMIN_SECRET = "nhost-admin-4a8e2f60";
const USER_PASSWORD = "user-password-31b7c5d2";
const SECRETS = [DB_PASSWORD, ENCRYPTION_KEY, ADMIN_SECRET, NHOST_ADMIN_SECRET, USER_PASSWORD];
/** Nothing listens on port 1: the database and the service are refused at once. */
const NOWHERE = "http://127.0.0.1:1/auth/v1";

interface Run {
  code: number;
  output: string;
}

/** A developer's shell without anything naming a server, a port or a secret, plus `extra`. */
function env(extra: Record<string, string>): NodeJS.ProcessEnv {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !/^(PORT|AUTH_URL|ADMIN_SECRET|NEW_USER_PASSWORD|NHOST_.*)$/.test(name),
    ),
  );
  return { ...clean, NO_COLOR: "1", ...extra };
}

function run(file: string, args: string[], extra: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd: ROOT, env: env(extra), timeout: 30_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });
}

const npm = (args: string[], extra: Record<string, string> = {}) => run(NPM, args, extra);
const admin = (args: string[], extra: Record<string, string> = {}) =>
  run(process.execPath, ["scripts/admin.mjs", ...args], extra);

function expectNoSecret(output: string) {
  for (const secret of SECRETS) expect(output).not.toContain(secret);
}

describe("import-nhost: secrets from the environment", () => {
  it("takes the database URL and the key from the environment, and npm's echo and the output show neither", async () => {
    const result = await npm(["run", "admin", "--", "import-nhost", "--dry-run", "--server", NOWHERE], {
      NHOST_DATABASE_URL: `postgres://nhost:${DB_PASSWORD}@127.0.0.1:1/nhost`,
      NHOST_ENCRYPTION_KEY: ENCRYPTION_KEY,
      ADMIN_SECRET,
    });
    // npm printed the command line (no -s here), and the command got as far as the database NHOST_DATABASE_URL names.
    expect(result.output).toContain("> node scripts/admin.mjs import-nhost --dry-run");
    expect(result.code, result.output).toBe(1);
    expect(result.output).toContain(
      "cannot connect to the Nhost database at postgres://nhost:***@127.0.0.1:1/nhost",
    );
    expectNoSecret(result.output);
  }, 40_000);

  it("reads NHOST_ENCRYPTION_KEY (a malformed one is a usage error that does not repeat it)", async () => {
    const malformed = `${ENCRYPTION_KEY}zz`;
    const result = await admin(["import-nhost", "--dry-run", "--server", NOWHERE], {
      NHOST_DATABASE_URL: `postgres://nhost:${DB_PASSWORD}@127.0.0.1:1/nhost`,
      NHOST_ENCRYPTION_KEY: malformed,
      ADMIN_SECRET,
    });
    expect(result.code, result.output).toBe(2);
    expect(result.output).toContain("NHOST_ENCRYPTION_KEY must be Nhost's AUTH_ENCRYPTION_KEY");
    expect(result.output).not.toContain(malformed);
    expectNoSecret(result.output);
  });

  it("refuses each flag that would carry a secret, naming the variable to set, never repeating the value", async () => {
    const base = ["import-nhost", "--dry-run", "--server", NOWHERE];
    const database = { NHOST_DATABASE_URL: "postgres://nhost@127.0.0.1:1/nhost", ADMIN_SECRET };
    for (const [args, variable] of [
      [["--nhost-encryption-key", ENCRYPTION_KEY], "NHOST_ENCRYPTION_KEY"],
      [
        ["--files-from", "https://old.example/v1", "--nhost-admin-secret", NHOST_ADMIN_SECRET],
        "NHOST_ADMIN_SECRET",
      ],
      [["--database-url", `postgres://nhost:${DB_PASSWORD}@127.0.0.1:1/nhost`], "NHOST_DATABASE_URL"],
    ] as const) {
      const result = await admin([...base, ...args], database);
      expect(result.code, result.output).toBe(2);
      expect(result.output).toContain(variable);
      expectNoSecret(result.output);
    }
    // --files-from without NHOST_ADMIN_SECRET says where the secret goes.
    const missing = await admin([...base, "--files-from", "https://old.example/v1"], database);
    expect(missing.code).toBe(2);
    expect(missing.output).toContain("--files-from needs NHOST_ADMIN_SECRET in the environment");
  });

  it("keeps --database-url for a URL without a password (a local copy)", async () => {
    const result = await admin(
      [
        "import-nhost",
        "--dry-run",
        "--server",
        NOWHERE,
        "--database-url",
        "postgres://nhost@127.0.0.1:1/copy",
      ],
      { ADMIN_SECRET },
    );
    expect(result.code, result.output).toBe(1);
    expect(result.output).toContain(
      "cannot connect to the Nhost database at postgres://nhost@127.0.0.1:1/copy",
    );
  });
});

describe("create-user: the password from NEW_USER_PASSWORD", () => {
  let server: Server;
  let url: string;
  const received: { secret?: string; body?: Record<string, unknown> }[] = [];
  beforeAll(async () => {
    // The admin API as far as create-user needs it: the request is recorded, a user answered.
    server = createServer((request, response) => {
      let text = "";
      request.on("data", (chunk) => (text += chunk));
      request.on("end", () => {
        received.push({
          secret: String(request.headers["x-hasura-admin-secret"]),
          body: JSON.parse(text || "{}"),
        });
        response.setHeader("content-type", "application/json");
        response.end(JSON.stringify({ id: "u-1", email: "ana@example.com", emailVerified: true }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/auth/v1`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("sends the password from the environment, and nothing printed by npm -s or the command contains it", async () => {
    const result = await npm(
      [
        "run",
        "-s",
        "admin",
        "--",
        "create-user",
        "--email",
        "ana@example.com",
        "--verified",
        "--server",
        url,
      ],
      { NEW_USER_PASSWORD: USER_PASSWORD, ADMIN_SECRET },
    );
    expect(result.code, result.output).toBe(0);
    expect(received.at(-1)).toEqual({
      secret: ADMIN_SECRET,
      body: { email: "ana@example.com", password: USER_PASSWORD, emailVerified: true },
    });
    expect(result.output).toContain("ana@example.com");
    expectNoSecret(result.output);
  }, 40_000);

  it("refuses --password, naming NEW_USER_PASSWORD, and sends nothing", async () => {
    const before = received.length;
    const result = await admin(
      ["create-user", "--email", "ana@example.com", "--password", USER_PASSWORD, "--server", url],
      { ADMIN_SECRET },
    );
    expect(result.code, result.output).toBe(2);
    expect(result.output).toContain("NEW_USER_PASSWORD");
    expectNoSecret(result.output);
    expect(received.length).toBe(before);
  });
});
