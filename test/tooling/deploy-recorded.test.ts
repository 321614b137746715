// `npm run deploy` against a recorded wrangler (test/fakes/wrangler.mjs: an account in a file, every call kept):
// what a fresh account gets, what an account where half exists gets, and that a second run changes nothing. The
// calls are asserted exactly, so a resource created twice, a secret uploaded over a set one, or a step out of order
// fails here without network or a Cloudflare account.
import { execFile } from "node:child_process";
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = process.cwd();
const FAKE = join(ROOT, "test", "fakes", "wrangler.mjs");
const dir = mkdtempSync(join(tmpdir(), "edge-auth-deploy-recorded-"));

/** The deployed service's health endpoints; under /down/, 503 (a Worker that deployed but fails). */
let server: Server;
let origin = "";
beforeAll(async () => {
  server = createServer((request, response) => {
    const ok = ["/auth/v1/healthz", "/storage/v1/healthz"].includes(request.url ?? "");
    response.writeHead(ok ? 200 : 503, { "content-type": "application/json" }).end(ok ? '"OK"' : '"down"');
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

type Account = {
  d1: { uuid: string; name: string }[];
  kv: { id: string; title: string }[];
  r2: string[];
  queues: string[];
  hyperdrive: { id: string; name: string; connection?: string; caching?: boolean }[];
  workers: Record<string, { secrets: string[] }>;
};
type State = {
  loggedIn: boolean;
  account: Account;
  calls: string[][];
  uploads?: string[];
  queuePageSize?: number;
  refuseDeployOf?: string;
};
const emptyAccount = (): Account => ({ d1: [], kv: [], r2: [], queues: [], hyperdrive: [], workers: {} });

/**
 * The repository's wrangler.toml as a user has it before a first deploy: its REPLACE_… ids left for the deploy to
 * fill, URLs of their own (the local health server), mail through Cloudflare Email Service, a second D1 shard listed
 * without an entry (the deploy creates and adds it).
 */
const userConfig = (vars: Record<string, string> = {}) =>
  readFileSync(join(ROOT, "wrangler.toml"), "utf8")
    .replace(
      "[env.production.vars]\n",
      `[env.production.vars]\n${Object.entries({
        AUTH_SMTP_SENDER: "Acme <noreply@acme.dev>",
        AUTH_D1_SHARDS: "DB,DB_1",
        ...vars,
      })
        .map(([name, value]) => `${name} = ${JSON.stringify(value)}\n`)
        .join("")}`,
    )
    .replace(/https:\/\/auth\.example\.com\/auth\/v1/g, `${origin}/auth/v1`)
    .replace(/https:\/\/auth\.example\.com/g, origin)
    .replace(/https:\/\/app\.example\.com/g, "https://app.acme.dev")
    .concat('\n[[env.production.send_email]]\nname = "EMAIL"\n');

/** A deployment directory of its own: the config, the account, and `npm run deploy` run in it. */
function project(config: string, account: Account = emptyAccount(), extra: Partial<State> = {}) {
  const home = mkdtempSync(join(dir, "project-"));
  const configPath = join(home, "wrangler.toml");
  const statePath = join(home, "account.json");
  writeFileSync(configPath, config);
  copyFileSync(join(ROOT, "wrangler.images.toml"), join(home, "wrangler.images.toml"));
  writeFileSync(statePath, JSON.stringify({ loggedIn: true, account, calls: [], ...extra }));
  const state = () => JSON.parse(readFileSync(statePath, "utf8")) as State;
  return {
    configPath,
    state,
    /** Runs the deploy; returns its exit code, output, and the wrangler calls it made (the state's log is reset). */
    async deploy(args: string[] = [], env: Record<string, string> = {}) {
      const before = state();
      writeFileSync(statePath, JSON.stringify({ ...before, calls: [], uploads: [] }));
      const done = await run(
        process.execPath,
        [
          join(ROOT, "scripts", "deploy.mjs"),
          "-c",
          "wrangler.toml",
          "--images-config",
          "wrangler.images.toml",
          "--health-wait",
          "0",
          ...args,
        ],
        {
          cwd: home,
          env: {
            ...process.env,
            EDGE_AUTH_WRANGLER: FAKE,
            FAKE_WRANGLER_STATE: statePath,
            NO_COLOR: "1",
            ...env,
          },
          maxBuffer: 1 << 24,
        },
      ).then(
        ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
        (error: { code: number; stdout: string; stderr: string }) => error,
      );
      const after = state();
      return { ...done, calls: after.calls.map((call) => call.join(" ")), uploads: after.uploads ?? [] };
    },
  };
}

const MIRROR = "postgres://app:s3cret@db.acme.dev:5432/app";
const LISTS = [
  "secret list --env production -c wrangler.toml --format json",
  "d1 list --json",
  "kv namespace list",
  "r2 bucket list",
  "queues list",
];
const SHIP = [
  "deploy -c wrangler.images.toml --env production --minify",
  "d1 migrations apply DB --remote --env production -c wrangler.toml",
  "d1 migrations apply DB_1 --remote --env production -c wrangler.toml",
];
const SERVICE_SECRETS = [
  "AUTH_JWT_PRIVATE_KEYS",
  "AUTH_ENCRYPTION_KEY",
  "AUTH_ADMIN_SECRET",
  "AUTH_SUPABASE_PUBLISHABLE_KEYS",
  "AUTH_SUPABASE_SECRET_KEYS",
];

// One after another: each run is a few processes, and the suite shares two cores.
describe("npm run deploy against a recorded wrangler", () => {
  it("creates everything once on a fresh account, writes the ids, uploads the secrets; a second run changes nothing", async () => {
    const p = project(userConfig());
    const first = await p.deploy([], { AUTH_MIRROR_DATABASE_URL: MIRROR });
    expect(first.stderr).not.toContain("refused");
    expect(first.code).toBe(0);
    expect(
      first.calls.map((call) => call.replace(/--secrets-file \S+/, "--secrets-file <generated>")),
    ).toEqual([
      ...LISTS,
      "hyperdrive list",
      "d1 create edge-auth",
      "d1 create edge-auth-shard-1",
      "kv namespace create edge-auth-oauth2-requests",
      "kv namespace create edge-auth-provider-keys",
      "r2 bucket create edge-auth-files",
      "queues create edge-auth-events",
      "queues create edge-auth-webhook-deliveries",
      "queues create edge-auth-logout-deliveries",
      // The dead-letter queue every consumer names.
      "queues create edge-auth-dead-letters",
      `hyperdrive create edge-auth-mirror --connection-string=${MIRROR} --caching-disabled`,
      // The image Worker first (the service binds it), every shard migrated before the Worker that reads it.
      ...SHIP,
      "deploy -c wrangler.toml --env production --minify --secrets-file <generated>",
    ]);
    // Every secret the service needs, uploaded with its first deploy; the ones to keep shown once.
    expect(first.uploads.toSorted()).toEqual(SERVICE_SECRETS.map((name) => `edge-auth:${name}`).toSorted());
    expect(first.stdout).toMatch(/^ {2}AUTH_ADMIN_SECRET=\S{20,}$/m);
    expect(first.stdout).toMatch(/^ {2}AUTH_ENCRYPTION_KEY=[0-9a-f]{64}$/m);
    // A private signing key is never printed; the mirror's password never leaves the call that needs it.
    expect(first.stdout + first.stderr).not.toContain("AUTH_JWT_PRIVATE_KEYS=");
    expect(first.stdout + first.stderr).not.toContain("s3cret");
    expect(first.stdout).toContain('answer "OK"');
    // The ids, written where the README says they go, the user's comments kept.
    const account = p.state().account;
    const written = readFileSync(p.configPath, "utf8");
    expect(written).not.toContain('REPLACE_WITH_THE_ID_FROM_wrangler_d1_create"');
    expect(written).not.toContain("REPLACE_WITH_THE_ID_FROM_wrangler_kv_namespace_create");
    expect(written).toContain("# Identity providers' signing keys (JWKS)");
    const production = written.slice(written.indexOf("[env.production]"));
    for (const db of account.d1) expect(production).toContain(`database_id = "${db.uuid}"`);
    for (const ns of account.kv) expect(production).toContain(`id = "${ns.id}"`);
    expect(production).toMatch(
      /\[\[env\.production\.d1_databases\]\]\nbinding = "DB_1"\ndatabase_name = "edge-auth-shard-1"\ndatabase_id = "[0-9a-f-]{36}"\nmigrations_dir = "migrations"/,
    );
    expect(production).toContain(
      `[[env.production.hyperdrive]]\nbinding = "MIRROR_DB"\nid = "${account.hyperdrive[0]!.id}"`,
    );
    expect(account.hyperdrive[0]).toMatchObject({
      name: "edge-auth-mirror",
      connection: MIRROR,
      caching: false,
    });

    // Threat: a rerun that rotates AUTH_ENCRYPTION_KEY (every sealed value unreadable) or recreates a database.
    const second = await p.deploy();
    expect(second.code).toBe(0);
    expect(second.calls).toEqual([
      ...LISTS,
      "hyperdrive list",
      ...SHIP,
      "deploy -c wrangler.toml --env production --minify",
    ]);
    expect(second.uploads).toEqual([]);
    expect(second.stdout).not.toContain("generated secrets");
    expect(readFileSync(p.configPath, "utf8")).toBe(written);
  }, 180_000);

  it("on an account where half exists, creates only the missing half and generates only the secrets not set", async () => {
    const account: Account = {
      ...emptyAccount(),
      d1: [{ uuid: "aaaaaaaa-0000-0000-0000-000000000001", name: "edge-auth" }],
      kv: [{ id: "bbbb0000000000000000000000000001", title: "edge-auth-oauth2-requests" }],
      r2: ["edge-auth-files"],
      // Queues come a page at a time: the deploy pages until it has seen every one it needs, or an empty page.
      queues: ["edge-auth-dead-letters", "edge-auth-events"],
      workers: { "edge-auth": { secrets: ["AUTH_JWT_PRIVATE_KEYS", "AUTH_ENCRYPTION_KEY"] } },
    };
    // An entry without its id line (as wrangler's own provisioning has them): the id goes under its binding.
    const withoutId = userConfig().replace(
      'id = "REPLACE_WITH_THE_ID_FROM_wrangler_kv_namespace_create_PROVIDER_KEYS"\n',
      "",
    );
    const p = project(withoutId, account, { queuePageSize: 1 });
    // The operator's own admin secret, from the secrets file `npm run secrets:production` writes.
    writeFileSync(
      join(p.configPath, "..", "production.secrets.json"),
      JSON.stringify({ AUTH_ADMIN_SECRET: "mine", AUTH_ENCRYPTION_KEY: "not-this-one" }),
    );
    const done = await p.deploy();
    expect(done.stderr).not.toContain("refused");
    expect(done.code).toBe(0);
    expect(
      done.calls.map((call) => call.replace(/--secrets-file \S+/, "--secrets-file <generated>")),
    ).toEqual([
      ...LISTS,
      "queues list --page 2",
      "queues list --page 3",
      "d1 create edge-auth-shard-1",
      "kv namespace create edge-auth-provider-keys",
      "queues create edge-auth-webhook-deliveries",
      "queues create edge-auth-logout-deliveries",
      ...SHIP,
      "deploy -c wrangler.toml --env production --minify --secrets-file <generated>",
    ]);
    expect(done.uploads.toSorted()).toEqual(
      ["AUTH_ADMIN_SECRET", "AUTH_SUPABASE_PUBLISHABLE_KEYS", "AUTH_SUPABASE_SECRET_KEYS"].map(
        (name) => `edge-auth:${name}`,
      ),
    );
    // The file's encryption key is not uploaded over the one set: said, not done.
    expect(done.stdout).toContain("not uploaded, set already: AUTH_ENCRYPTION_KEY");
    expect(done.stdout).not.toContain("AUTH_ADMIN_SECRET=");
    const written = readFileSync(p.configPath, "utf8");
    expect(written).toContain('database_id = "aaaaaaaa-0000-0000-0000-000000000001"');
    expect(written).toContain('id = "bbbb0000000000000000000000000001"');
    const providerKeys = p.state().account.kv.find((ns) => ns.title === "edge-auth-provider-keys")!;
    expect(written).toContain(`binding = "PROVIDER_KEYS"\nid = "${providerKeys.id}"\n`);
  }, 180_000);

  // Threat: a production service whose development mailbox lets anyone read every sign-in link, whose tokens name
  // localhost as their issuer, or whose first sign-up answers 500 — and resources made for a deploy that cannot run.
  it("refuses what production cannot run with, one line each, before creating anything", async () => {
    const base = userConfig({ AUTH_DEV_MAILBOX: "true" })
      .replace(/^AUTH_SERVER_URL = .*\n/m, "")
      .replace(/\n\[\[env\.production\.send_email\]\]\nname = "EMAIL"\n/, "\n");
    const p = project(base);
    const refused = await p.deploy();
    expect(refused.code).toBe(1);
    const lines = refused.stderr.split("\n").filter((line) => line.startsWith("  - "));
    expect(lines.find((line) => line.includes("AUTH_SERVER_URL is not set"))).toBeDefined();
    expect(lines.find((line) => line.includes("AUTH_DEV_MAILBOX is on"))).toBeDefined();
    expect(lines.find((line) => line.includes("no mail transport"))).toBeDefined();
    expect(refused.calls).toEqual(LISTS.slice(0, 1));
    // Not logged in: refused too, with the command to run.
    const out = project(userConfig(), emptyAccount(), { loggedIn: false });
    const notLoggedIn = await out.deploy();
    expect(notLoggedIn.code).toBe(1);
    expect(notLoggedIn.stderr).toContain(
      "cannot ask Cloudflare: ✘ [ERROR] In a non-interactive environment, it's necessary to set a CLOUDFLARE_API_TOKEN",
    );
    expect(notLoggedIn.stderr).toContain("Log in first: `npx wrangler login`");
    expect(notLoggedIn.calls).toEqual(LISTS.slice(0, 1));
  }, 180_000);

  // Threat: ids copied from another account (or the top level's zeros) deployed as if they were this one's.
  it("refuses an id in the configuration that is not the account's, instead of deploying onto it", async () => {
    const p = project(
      userConfig().replace("REPLACE_WITH_THE_ID_FROM_wrangler_d1_create", "0123456789abcdef0123456789abcdef"),
    );
    const refused = await p.deploy();
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      "D1 database edge-auth (DB): its id 0123456789abcdef0123456789abcdef in the configuration is not one of this account's",
    );
    expect(refused.calls).toEqual(LISTS);
  }, 180_000);

  it("--dry-run prints the plan, bundles both Workers and creates nothing; a failing health check fails the deploy", async () => {
    const p = project(userConfig());
    const before = readFileSync(p.configPath, "utf8");
    const dry = await p.deploy(["--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(
      "create       D1 database edge-auth-shard-1 (DB_1) → its id into wrangler.toml",
    );
    expect(dry.stdout).toContain("create       queue edge-auth-dead-letters");
    expect(dry.stdout).toContain(`secrets generated: ${SERVICE_SECRETS.join(", ")}`);
    // A configuration with nothing left to fill (the ids are the deploy's to fill): no placeholder notice.
    expect(dry.stdout).toContain("deploy: checks passed and both Workers bundle (dry run)");
    expect(dry.stderr).not.toContain("placeholder");
    expect(dry.calls).toEqual([
      ...LISTS,
      "deploy -c wrangler.images.toml --env production --minify --dry-run",
      "deploy -c wrangler.toml --env production --minify --dry-run",
    ]);
    expect(readFileSync(p.configPath, "utf8")).toBe(before);
    // --offline: the plan from the configuration alone (a CI check without credentials), Cloudflare not asked.
    const offline = await p.deploy(["--dry-run", "--offline"]);
    expect(offline.code).toBe(0);
    expect(offline.stdout).toContain("(--offline: what exists is not known)");
    expect(offline.stdout).toContain("create unless it exists: queue edge-auth-dead-letters");
    expect(offline.calls).toEqual(dry.calls.slice(-2));

    const failing = project(userConfig().replaceAll(origin, `${origin}/down`));
    const down = await failing.deploy();
    expect(down.code).toBe(1);
    expect(down.stderr).toContain(
      `deployed, but the health check failed:\n  - ${origin}/down/auth/v1/healthz: 503`,
    );

    // Threat: generated secrets left on disk after a failed deploy. The temporary file is gone, and its values shown
    // (a deploy can fail after its upload, and the next run would not regenerate what is set).
    const refused = project(userConfig(), emptyAccount(), { refuseDeployOf: "edge-auth" });
    const temporary = mkdtempSync(join(dir, "tmp-"));
    const failed = await refused.deploy([], { TMPDIR: temporary });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain(
      "--secrets-file <the secrets>` failed (above). The secrets it was uploading",
    );
    expect(failed.stderr).toMatch(/^ {2}AUTH_ADMIN_SECRET=\S{20,}$/m);
    expect(readdirSync(temporary)).toEqual([]);
  }, 180_000);
});
