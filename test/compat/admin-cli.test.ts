// `npm run admin` (scripts/admin.mjs) against `wrangler dev`, as an operator runs it: create a user, find it, disable
// it, rotate the keys and read the audit trail, with the secret from ADMIN_SECRET and the server from --server.
import { execFile, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import Ajv from "ajv";
import { afterAll, describe, expect, inject, it } from "vitest";
import { ocsfClassSchema } from "../tooling/ocsf-schema";
import { authUrl } from "./client";

const run = promisify(execFile);
const ADMIN = join(process.cwd(), "scripts", "admin.mjs");

async function admin(...args: string[]): Promise<unknown> {
  return adminWith({}, ...args);
}

/** `admin` with more environment: secrets are never flags (npm prints the command line it runs). */
async function adminWith(env: Record<string, string>, ...args: string[]): Promise<unknown> {
  const { stdout } = await run(
    process.execPath,
    ["scripts/admin.mjs", ...args, "--server", authUrl, "--json"],
    {
      env: { ...process.env, ADMIN_SECRET: inject("adminSecret"), ...env },
    },
  );
  const json = stdout.slice(0, stdout.lastIndexOf("}") + 1);
  return json ? JSON.parse(json) : stdout;
}

describe("npm run admin", () => {
  // Five runs of the CLI, a Node process each: ~1.3 s on a quiet machine, past 30 s once on a busy one.
  it("creates a user who can then sign in, lists, disables, rotates keys and reads the audit log", async () => {
    const email = `cli-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const created = (await adminWith(
      { NEW_USER_PASSWORD: "correct horse battery" },
      "create-user",
      "--email",
      email,
      "--display-name",
      "From CLI",
      "--verified",
    )) as { id: string; email: string; displayName: string };
    expect(created).toMatchObject({ email, displayName: "From CLI" });

    const signIn = await fetch(`${authUrl}/signin/email-password`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password: "correct horse battery" }),
    });
    expect(signIn.status).toBe(200);

    const listed = (await admin("list-users", "--search", email)) as { items: { id: string }[] };
    expect(listed.items.map((user) => user.id)).toEqual([created.id]);
    const disabled = (await admin("disable-user", created.id)) as { disabled: boolean };
    expect(disabled.disabled).toBe(true);

    const rotated = (await admin("rotate-keys")) as { kid: string; status: string };
    expect(rotated.status).toBe("signing");
    const jwks = (await (await fetch(`${authUrl}/.well-known/jwks.json`)).json()) as {
      keys: { kid: string }[];
    };
    expect(jwks.keys.map((key) => key.kid)).toContain(rotated.kid);

    const audit = (await admin("audit", "--user", created.id)) as { items: { type: string }[] };
    expect(audit.items.map((event) => event.type).reverse()).toEqual([
      "signup",
      "admin.user.create",
      // The risk decision of a sign-in from a device the account has not seen (src/risk/: medium, allowed).
      "signin.risk",
      "signin.success",
      "admin.user.disable",
    ]);

    // The same trail as OCSF 1.2.0 (operators.md §4), from the real server, valid against the classes' schema.
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const { stdout } = await run(
      process.execPath,
      [
        "scripts/admin.mjs",
        "audit",
        "export",
        "--since",
        since,
        "--user",
        created.id,
        "--format",
        "ocsf",
        "--server",
        authUrl,
      ],
      { env: { ...process.env, ADMIN_SECRET: inject("adminSecret") } },
    );
    const ocsf = stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const ajv = new Ajv({ allErrors: true, strict: false });
    const schemas = {
      3001: ajv.compile(ocsfClassSchema("account_change")),
      3002: ajv.compile(ocsfClassSchema("authentication")),
    };
    for (const event of ocsf) {
      const validate = schemas[event.class_uid as 3001 | 3002];
      expect(validate(event) ? [] : validate.errors, JSON.stringify(event)).toEqual([]);
    }
    expect(
      ocsf.map((event) => [
        event.message,
        event.class_uid,
        (event.actor as { user?: { type?: string } }).user?.type,
      ]),
    ).toEqual([
      ["admin.user.disable", 3001, "Admin"],
      ["signin.success", 3002, "User"],
      // The sign-in's risk decision (a first device: medium, allowed), an Authentication event since issue 48's
      // small things (scripts/audit-export/ocsf.mjs), recorded before its success.
      ["signin.risk", 3002, "User"],
      ["admin.user.create", 3001, "Admin"],
      ["signup", 3001, "Admin"],
    ]);
  }, 60_000);

  // Four runs of the CLI, a Node process each: ~1.1 s on a quiet machine, past 30 s once on a busy one.
  it("creates OAuth2 clients of every kind: a device-flow CLI and a machine client need no redirect URI", async () => {
    const cli = (await admin(
      "create-client",
      "--name",
      "Acme CLI",
      "--public",
      "--grant",
      "urn:ietf:params:oauth:grant-type:device_code",
      "--grant",
      "refresh_token",
    )) as { clientId: string; grantTypes: string[]; redirectUris: string[] };
    expect(cli).toMatchObject({ redirectUris: [], tokenEndpointAuthMethod: "none" });
    const device = await fetch(`${authUrl}/oauth2/device_authorization`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ client_id: cli.clientId }),
    });
    expect(device.status).toBe(200);
    const machine = (await admin(
      "create-client",
      "--name",
      "Nightly job",
      "--grant",
      "client_credentials",
    )) as {
      clientId: string;
      clientSecret: string;
    };
    const token = await fetch(`${authUrl}/oauth2/token`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: `Basic ${btoa(`${machine.clientId}:${machine.clientSecret}`)}`,
      },
      body: new URLSearchParams({ grant_type: "client_credentials" }),
    });
    expect(token.status).toBe(200);
    const native = (await admin(
      "create-client",
      "--name",
      "Desktop",
      "--public",
      "--native",
      "--redirect-uri",
      "http://127.0.0.1/callback",
    )) as { applicationType: string };
    expect(native.applicationType).toBe("native");
    await expect(admin("create-client", "--name", "Web without a redirect")).rejects.toMatchObject({
      stderr: expect.stringContaining("--redirect-uri"),
    });
  }, 60_000);

  it("says what is wrong instead of a stack trace", async () => {
    await expect(admin("create-user")).rejects.toMatchObject({
      stderr: expect.stringContaining("needs --email"),
    });
    const id = crypto.randomUUID();
    await expect(admin("get-user", id)).rejects.toMatchObject({
      stderr: expect.stringContaining(`GET ${authUrl}/admin/users/${id}: 404`),
    });
  });

  it("names the URL it called in every error: a refused secret, an unreachable server", async () => {
    const refused = await run(process.execPath, ["scripts/admin.mjs", "list-users", "--server", authUrl], {
      env: { ...process.env, ADMIN_SECRET: "not-the-admin-secret-of-this-server" },
    }).then(
      () => null,
      (error: { stderr: string }) => error,
    );
    expect(refused?.stderr).toContain(`GET ${authUrl}/admin/users: 401`);
    expect(refused?.stderr).toContain(
      `The server refused ADMIN_SECRET: is ${authUrl} the server it belongs to?`,
    );
    const unreachable = await run(
      process.execPath,
      ["scripts/admin.mjs", "list-users", "--server", "http://127.0.0.1:9/auth/v1"],
      { env: { ...process.env, ADMIN_SECRET: "x" } },
    ).then(
      () => null,
      (error: { stderr: string }) => error,
    );
    expect(unreachable?.stderr).toContain("cannot reach http://127.0.0.1:9/auth/v1/admin/users");
  });

  // Seven runs of the CLI, a Node process each: ~0.8 s on a quiet machine, 8.6 s seen on a busy one.
  it("answers --help for every command and a mistyped option with the command's usage, never a stack trace", async () => {
    const overview = await run(process.execPath, ["scripts/admin.mjs", "--help"]);
    expect(overview.stdout).toContain("create-client");
    expect(overview.stdout).toContain("AUTH_URL");
    const help = await run(process.execPath, ["scripts/admin.mjs", "create-client", "--help"]);
    expect(help.stdout).toContain("usage: npm run admin -- create-client --name <n>");
    for (const args of [
      ["create-user", "--emial", "x@example.com"],
      ["list-users", "--limit"],
      ["no-such-command"],
      ["get-user"],
      ["list-keys", "extra"],
    ]) {
      const failed = await run(process.execPath, ["scripts/admin.mjs", ...args]).then(
        () => null,
        (error: { code: number; stderr: string }) => error,
      );
      expect(failed, args.join(" ")).not.toBeNull();
      expect(failed!.code, args.join(" ")).toBe(2);
      expect(failed!.stderr, args.join(" ")).toMatch(/^admin: /);
      expect(failed!.stderr, args.join(" ")).not.toMatch(/\n\s+at /);
    }
  }, 60_000);

  it("reads the server from AUTH_URL, prints tables by default, and the issuer the server states", async () => {
    const env = { ...process.env, AUTH_URL: authUrl, ADMIN_SECRET: inject("adminSecret") };
    const keys = await run(process.execPath, ["scripts/admin.mjs", "list-keys"], { env });
    const [header, ...rows] = keys.stdout.trim().split("\n");
    expect(header).toMatch(/^kid\s+status\s+source\s+alg\s+createdAt$/);
    expect(rows.length).toBeGreaterThan(0);
    // A whole RSA modulus is not what a person wants to read.
    expect(keys.stdout.length).toBeLessThan(2000);
    const client = await run(
      process.execPath,
      [
        "scripts/admin.mjs",
        "create-client",
        "--name",
        "Issuer check",
        "--redirect-uri",
        "https://rp.example.com/cb",
      ],
      { env },
    );
    const discovery = (await (await fetch(`${authUrl}/.well-known/openid-configuration`)).json()) as {
      issuer: string;
    };
    expect(client.stdout).toMatch(new RegExp(`^issuer\\s+${discovery.issuer.replace(/[.]/g, "\\.")}$`, "m"));
    expect(client.stdout).toContain("shown this once");
  });

  it("never sends the local admin secret to another server", async () => {
    const failed = await run(
      process.execPath,
      ["scripts/admin.mjs", "list-users", "--server", "http://127.0.0.1:9/auth/v1"],
      {
        env: { ...process.env, ADMIN_SECRET: "" },
      },
    ).then(
      () => null,
      (error: { stderr: string }) => error,
    );
    expect(failed?.stderr).toContain("set ADMIN_SECRET for http://127.0.0.1:9/auth/v1");
  });

  describe("without --server, AUTH_URL or PORT", () => {
    // A checkout of its own: its .dev.vars holds the server's admin secret, as `npm start` would have written it.
    const cwd = mkdtempSync(join(tmpdir(), "edge-auth-admin-"));
    writeFileSync(join(cwd, ".dev.vars"), `AUTH_ADMIN_SECRET='${inject("adminSecret")}'\n`);
    afterAll(() => rmSync(cwd, { recursive: true, force: true }));
    const { PORT: _port, AUTH_URL: _url, ADMIN_SECRET: _secret, ...shell } = process.env;
    /** What `npm start` records while it runs (scripts/local.mjs): its process, port and URLs. */
    const recordRunning = (pid: number) => {
      mkdirSync(join(cwd, ".wrangler"), { recursive: true });
      const port = Number(new URL(authUrl).port);
      writeFileSync(
        join(cwd, ".wrangler", "edge-auth-running.json"),
        JSON.stringify({ pid, port, auth: authUrl }),
      );
    };
    const cli = (args: string[], env: NodeJS.ProcessEnv = shell) =>
      run(process.execPath, [ADMIN, ...args], { cwd, env });

    it("calls the server a running npm start recorded, with the secret of .dev.vars", async () => {
      recordRunning(process.pid);
      const listed = await cli(["list-users", "--limit", "1", "--json"]);
      expect(JSON.parse(listed.stdout)).toHaveProperty("items");
      expect((await cli(["--help"])).stdout).toContain(`local server of npm start, ${authUrl}`);
    });

    it("ignores a record whose npm start is gone, and follows PORT when it is given", async () => {
      const gone = spawnSync(process.execPath, ["-e", ""]).pid;
      recordRunning(gone);
      expect((await cli(["--help"])).stdout).toContain(
        "local server of npm start, http://localhost:8787/auth/v1",
      );
      recordRunning(process.pid);
      expect((await cli(["--help"], { ...shell, PORT: "8791" })).stdout).toContain(
        "local server of npm start, http://localhost:8791/auth/v1",
      );
    });
  });
});
