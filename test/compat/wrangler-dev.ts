// Global setup of the compatibility tests: serves the Worker with `wrangler dev` (local D1/KV/R2/DO in a temporary
// directory, migrations applied, fresh secrets), exactly as `npm start` does, and hands its URL to the tests.
//
// Vitest runs every project's global setup before the first test of any project, and the compat files run last
// (vitest.config.ts). So this setup only starts what the other parts need to know of (ports, URLs, the shared
// Postgres) and returns; the server's migrations, its start and the example MCP server carry on in the background,
// beside the other projects' tests, and write a ready file when done (or what failed). Each compat file waits for it
// first (test/compat/server-ready.ts). That was about 15 s at the start of every `npm test`.
import type { ChildProcess } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { experimental_readRawConfig } from "wrangler";
// @ts-expect-error: a plain .mjs helper shared with `npm start`
import { applyLocalMigrations } from "../../scripts/local-migrations.mjs";
// @ts-expect-error: a plain .mjs helper shared with `npm start`
import { mirrorDevConfig } from "../../scripts/mirror-binding.mjs";
// @ts-expect-error: a plain .mjs helper shared with `npm start`
import { DEVELOPMENT_VARS, generateSecrets, toEnvLines } from "../../scripts/secrets.mjs";
import { startFakeUpstream, UPSTREAM_ANON_KEY, UPSTREAM_JWT_SECRET } from "../fakes/supabase-upstream";
import { NHOST_JWT_SECRET } from "../fixtures/nhost/project";
import { SHARED_POSTGRES } from "../support/postgres";
import { startClientDocumentHost, startMcpExample } from "./agent-fixtures";
import { startFakeProviders } from "./fake-provider-server";
import { startMigrationHook } from "./migration-hook-server";
import { type MirrorDatabase, startMirrorDatabase } from "./mirror-database";
import { freePort, reservePort } from "./ports";
import { startWranglerDev, stopWranglerDev } from "./wrangler-process";

declare module "vitest" {
  export interface ProvidedContext {
    serverUrl: string;
    /** Where the browser test serves its page: the WebAuthn origin the server accepts. */
    pagePort: number;
    /**
     * Another registrable domain's https origin, in the server's AUTH_WEBAUTHN_RELATED_ORIGINS and AUTH_CORS_ORIGINS:
     * test/compat/related-origins.test.ts serves its page there (port 443 mapped to loopback inside Chromium).
     */
    relatedOrigin: string;
    /** Where the front-end test serves its app (test/compat/browser-app.test.ts), an origin added as the README says. */
    appPort: number;
    /** `AUTH_ADMIN_SECRET` of the server, for creating OAuth2 clients through the admin API. */
    adminSecret: string;
    /** Where the fake identity providers answer (test/compat/fake-provider-server.ts). */
    fakeProviders: string;
    /** The example MCP server's resource (examples/mcp-server), trusting the service. */
    mcpServer: string;
    /** Another resource the service issues tokens for, which the MCP server must refuse. */
    otherResource: string;
    /** Client ID metadata documents: served over https at `origin`, published with PUT at `control`. */
    clientDocs: { origin: string; control: string };
    /** Where test/compat/custom-claims.test.ts serves the app's GraphQL API, and the admin secret it expects. */
    claimsGraphql: { port: number; adminSecret: string };
    /** The Postgres the server mirrors Nhost's tables into (MIRROR_DB; test/compat/mirror-database.ts). */
    mirrorDatabase: MirrorDatabase;
    /** The URLs the server was started with, and its port (test/compat/local-settings.test.ts). */
    serverVars: Record<"AUTH_SERVER_URL" | "STORAGE_SERVER_URL" | "AUTH_CLIENT_URL" | "port", string>;
    /** Written once the server and the MCP example answer: `ready`, or what failed (test/compat/server-ready.ts). */
    serverReadyFile: string;
    /** The Supabase face's keys the server was given (test/compat/supabase-js.test.ts). */
    supabaseKeys: { publishable: string; secret: string };
    /** The password-migration hook, its counts and its switch (test/compat/migration-hook-server.ts). */
    migrationHook: { url: string; control: string };
    /**
     * The server's own wrangler dev registry: another `wrangler dev` given it (WRANGLER_REGISTRY_PATH) binds to this
     * server's entrypoints, and to no other session's `edge-auth` (test/compat/workers-binding.test.ts).
     */
    devRegistry: string;
  }
}

/** The main Worker's configuration as the compat server runs it (below); beside wrangler.toml, for its paths. */
const COMPAT_CONFIG = "wrangler.compat.toml";

/** The Apple team's ES256 key: the service signs its client secret with it, the fake Apple checks it. */
async function fakeAppleKey(providersOrigin: string): Promise<{ privateKeyPem: string }> {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  await fetch(`${providersOrigin}/apple.fake/__key`, {
    method: "POST",
    body: JSON.stringify(publicKey.export({ format: "jwk" })),
  });
  return { privateKeyPem: privateKey.export({ format: "pem", type: "pkcs8" }).toString() };
}

export default async function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), "edge-auth-compat-"));
  // Held until wrangler dev is spawned, after the migrations (test/compat/wrangler-process.ts).
  const reserved = await reservePort();
  const port = reserved.port;
  const serverUrl = `http://127.0.0.1:${port}`;
  const pagePort = await freePort();
  const pageOrigin = `http://localhost:${pagePort}`;
  const appPort = await freePort();
  const relatedOrigin = "https://shop.example.de";
  const envFile = join(dir, "test.env");
  const secrets = generateSecrets();
  const providers = await startFakeProviders();
  const github = `${providers.origin}/github.fake`;
  const apple = await fakeAppleKey(providers.origin);
  const mcpPort = await freePort();
  const otherResource = "https://api.example.com/v2";
  const clientDocs = await startClientDocumentHost();
  const claimsGraphql = { port: await freePort(), adminSecret: "compat-hasura-admin-secret" };
  const mirrorDatabase = await startMirrorDatabase();
  // The Supabase project behind the face's forwarded data calls (test/compat/supabase-js-example.test.ts reads a row).
  const upstream = await startFakeUpstream();
  // The guide's Cognito hook, on for every compat file: it says no to anyone the Cognito stand-in does not know.
  const migrationHook = await startMigrationHook();
  // Every file's own Postgres database on this one server (test/support/postgres.ts): one start for the project. The
  // test files run in processes started after this setup, with this environment.
  process.env[SHARED_POSTGRES] = mirrorDatabase.adminUrl;
  const mirror = mirrorDevConfig(process.cwd(), mirrorDatabase.url) as {
    config: string;
    env: Record<string, string>;
  };
  // That configuration, each queue's batch handed to its consumer as soon as a message arrives instead of after up
  // to wrangler.toml's second, as the workers pool has it (vitest.config.ts): the mirror, webhook and import tests
  // wait on event after event, and the batching itself is the queue's. Git-ignored, removed at the end.
  const withBatchTimeout = readFileSync(mirror.config, "utf8");
  const immediate = withBatchTimeout.replaceAll(/^max_batch_timeout = \d+$/gm, "max_batch_timeout = 0");
  if (immediate === withBatchTimeout) throw new Error(`${mirror.config}: no max_batch_timeout to set to 0`);
  writeFileSync(COMPAT_CONFIG, immediate);
  const vars = {
    ...secrets,
    ...DEVELOPMENT_VARS,
    AUTH_RATE_LIMIT_ENABLE: "false",
    AUTH_SERVER_URL: `${serverUrl}/auth/v1`,
    STORAGE_SERVER_URL: serverUrl,
    // Set, so that links go where the tests expect rather than to the development landing page.
    AUTH_CLIENT_URL: "http://localhost:3000",
    // The front-end tests' app origin too: the example app (test/compat/browser-example.test.ts) comes back from the
    // hosted sign-in and from its verification mails there, as examples/hosted-login/README.md has it configured.
    AUTH_ACCESS_CONTROL_ALLOWED_REDIRECT_URLS: `https://app.example.com,http://127.0.0.1:${appPort}`,
    // The browser test's page calls the service from its own origin and runs WebAuthn ceremonies there.
    // …and so does the front-end test's app, on an origin of its own, allowed the way the README's quick start says.
    // …and so does the related-origins test's page, on another registrable domain than the RP ID.
    AUTH_CORS_ORIGINS: `${pageOrigin},http://127.0.0.1:${appPort},${relatedOrigin}`,
    AUTH_WEBAUTHN_RP_ID: "localhost",
    // …and so does the built-in OAuth2 page, served by the Worker itself under the name localhost.
    AUTH_WEBAUTHN_RP_ORIGINS: `${pageOrigin},http://localhost:${port}`,
    // The RP's origins and one of another domain, served as /.well-known/webauthn (test/compat/related-origins.test.ts).
    AUTH_WEBAUTHN_RELATED_ORIGINS: `${pageOrigin},http://localhost:${port},${relatedOrigin}`,
    // GitHub, faked on loopback: the real-client journey of test/compat/providers.test.ts.
    AUTH_PROVIDER_GITHUB_ENABLED: "true",
    AUTH_PROVIDER_GITHUB_CLIENT_ID: "gh-client",
    AUTH_PROVIDER_GITHUB_CLIENT_SECRET: "gh-secret",
    AUTH_PROVIDER_GITHUB_AUTHORIZATION_URL: `${github}/login/oauth/authorize`,
    AUTH_PROVIDER_GITHUB_TOKEN_URL: `${github}/login/oauth/access_token`,
    AUTH_PROVIDER_GITHUB_USERINFO_URL: `${providers.origin}/user`,
    // Apple, faked on loopback too, for its cross-site form_post callback in a browser
    // (test/compat/browser-providers.test.ts). The browser meets it as localhost, another site than the service's
    // 127.0.0.1; the service reaches its token endpoint and keys directly.
    AUTH_PROVIDER_APPLE_ENABLED: "true",
    AUTH_PROVIDER_APPLE_CLIENT_ID: "com.example.web",
    AUTH_PROVIDER_APPLE_TEAM_ID: "TEAM123456",
    AUTH_PROVIDER_APPLE_KEY_ID: "KEY1234567",
    AUTH_PROVIDER_APPLE_PRIVATE_KEY: apple.privateKeyPem,
    AUTH_PROVIDER_APPLE_AUTHORIZATION_URL: `${providers.origin.replace("127.0.0.1", "localhost")}/apple.fake/auth/authorize`,
    AUTH_PROVIDER_APPLE_TOKEN_URL: `${providers.origin}/apple.fake/auth/token`,
    AUTH_PROVIDER_APPLE_JWKS_URL: `${providers.origin}/apple.fake/jwks`,
    AUTH_PROVIDER_APPLE_ISSUER: "https://apple.fake",
    // OAuth2 for agents (contract §3.6): the example MCP server and one more API are the resources tokens are for;
    // registration is open, as `npm start` has it (DEVELOPMENT_VARS).
    // Google, faked on loopback, with the token vault on: test/compat/token-vault.test.ts connects it and an agent
    // exchanges a user's token for Google's through openid-client.
    AUTH_PROVIDER_GOOGLE_ENABLED: "true",
    AUTH_PROVIDER_GOOGLE_CLIENT_ID: "google-client",
    AUTH_PROVIDER_GOOGLE_CLIENT_SECRET: "google-secret",
    AUTH_PROVIDER_GOOGLE_AUTHORIZATION_URL: `${providers.origin}/oidc.fake/authorize`,
    AUTH_PROVIDER_GOOGLE_TOKEN_URL: `${providers.origin}/oidc.fake/token`,
    AUTH_PROVIDER_GOOGLE_USERINFO_URL: `${providers.origin}/oidc.fake/userinfo`,
    AUTH_PROVIDER_GOOGLE_JWKS_URL: `${providers.origin}/oidc.fake/jwks`,
    AUTH_PROVIDER_GOOGLE_ISSUER: "https://oidc.fake",
    AUTH_PROVIDER_GOOGLE_REVOCATION_URL: `${providers.origin}/oidc.fake/revoke`,
    // Google's ID-token sign-in for its web client, so the hosted sign-in page offers One Tap through FedCM, with the
    // fake Google's config file (test/compat/fake-google-fedcm.ts) met as localhost: another site than the service's
    // 127.0.0.1, as Google's is (test/compat/fedcm.test.ts).
    AUTH_PROVIDER_GOOGLE_AUDIENCE: "google-client",
    AUTH_FEDCM_GOOGLE_CONFIG_URL: `${providers.origin.replace("127.0.0.1", "localhost")}/oidc.fake/gsi/fedcm.json`,
    AUTH_PROVIDER_GOOGLE_VAULT_SCOPES: "https://www.googleapis.com/auth/calendar.readonly",
    AUTH_TOKEN_VAULT_ENABLED: "true",
    AUTH_OAUTH2_PROVIDER_RESOURCES: `http://127.0.0.1:${mcpPort}/mcp,${otherResource}`,
    // Client ID metadata documents come from the loopback host of agent-fixtures.ts: the outbound-URL policy refuses
    // loopback unless this is set (heeded only because AUTH_SERVER_URL is local too).
    AUTH_OUTBOUND_ALLOW_LOCAL: "true",
    // The old Nhost project of test/compat/move-in.test.ts: its access tokens are accepted, read-only, from the cut-over
    // that test records (`npm run admin -- cut-over`) until its ceiling.
    AUTH_IMPORTED_JWT_SECRET: JSON.stringify(NHOST_JWT_SECRET),
    // Turnstile, with siteverify faked on loopback, on password reset only (the other compat flows stay unguarded):
    // test/compat/account-flows.test.ts sends the token with @nhost/nhost-js.
    AUTH_TURNSTILE_SECRET: "turnstile-secret",
    // Impersonation, on for test/compat/impersonation.test.ts (its banner in Chromium); off by default.
    AUTH_IMPERSONATION_ENABLED: "true",
    AUTH_TURNSTILE_ENDPOINTS: "password-reset",
    // The built-in page renders the widget with it (Cloudflare's script cannot load offline: the page test puts the
    // token into the form itself, as the widget would).
    AUTH_TURNSTILE_SITE_KEY: "0x4AAAAAAAcompatsitekey",
    AUTH_TURNSTILE_VERIFY_URL: `${providers.origin}/turnstile.fake/siteverify`,
    // Custom claims from the app's data (test/compat/custom-claims.test.ts): the GraphQL API answers on its port only
    // while that file runs; `omit` (Nhost's behaviour) lets every other file's sign-ins go on without the claims.
    HASURA_GRAPHQL_GRAPHQL_URL: `http://127.0.0.1:${claimsGraphql.port}/v1/graphql`,
    HASURA_GRAPHQL_ADMIN_SECRET: claimsGraphql.adminSecret,
    AUTH_JWT_CUSTOM_CLAIMS: JSON.stringify({
      "organisation-id": "profile.organisation.id",
      "project-ids": "profile.contributesTo[].project.id",
      plan: "metadata.plan",
    }),
    AUTH_JWT_CUSTOM_CLAIMS_ON_ERROR: "omit",
    // The event stream's retries a second apart (doubling), so test/compat/mirror.test.ts sees a Postgres that was down
    // catch up within seconds (and not all 16 attempts spent while it is down, as retries at once would).
    AUTH_EVENTS_RETRY_DELAY_SECONDS: "1",
    // argon2id at its smallest cost, as in the workers pool (src/lib/password.ts); heeded only on a local server.
    TEST_PASSWORD_HASH: "cheap",
    // The face's data calls go to the fake project on loopback (allowed by AUTH_OUTBOUND_ALLOW_LOCAL above).
    AUTH_SUPABASE_UPSTREAM_URL: upstream.url,
    AUTH_SUPABASE_UPSTREAM_JWT_SECRET: UPSTREAM_JWT_SECRET,
    AUTH_SUPABASE_UPSTREAM_ANON_KEY: UPSTREAM_ANON_KEY,
    // Imported users without a hash ask the Cognito hook (test/compat/cognito-migration.test.ts); CREATE_USERS stays
    // off (its default), so no other sign-in asks it.
    AUTH_HOOK_PASSWORD_MIGRATION_URL: migrationHook.url,
    AUTH_HOOK_PASSWORD_MIGRATION_SECRET: migrationHook.secret,
  };
  writeFileSync(envFile, toEnvLines(vars).join("\n"));
  // `--env-file` keeps wrangler from reading the developer's .dev.vars or .env; the process environment stays out too.
  const env = {
    ...process.env,
    CI: "true",
    WRANGLER_SEND_METRICS: "false",
    NO_COLOR: "1",
    CLOUDFLARE_INCLUDE_PROCESS_ENV: "false",
    // `--env-file` is read through wrangler's .env loading, which this switch would turn off.
    CLOUDFLARE_LOAD_DEV_VARS_FROM_DOT_ENV: "true",
    // The client-document host's certificate: Miniflare passes it to workerd as a trusted certificate.
    NODE_EXTRA_CA_CERTS: clientDocs.certPath,
    // The mirror's database, for the MIRROR_DB binding of wrangler.mirror.toml.
    ...mirror.env,
    // Where wrangler dev registers its Workers for other wrangler dev processes' service bindings: this run's own,
    // not the machine's, which another checkout's compat server (also `edge-auth`) may be registered in.
    WRANGLER_REGISTRY_PATH: join(dir, "registry"),
  };

  let child: ChildProcess | undefined;
  let mcp: { close(): Promise<void> } | undefined;
  const readyFile = join(dir, "ready");
  // The files wait for the name (test/compat/server-ready.ts): written in place, it exists before its text does.
  const announce = (state: string) => {
    writeFileSync(`${readyFile}.part`, state);
    renameSync(`${readyFile}.part`, readyFile);
  };
  const ready = (async () => {
    // Every migration in one workerd, as `npm start` applies them (scripts/local-migrations.mjs).
    await applyLocalMigrations({
      d1Databases: experimental_readRawConfig({ config: COMPAT_CONFIG }).rawConfig.d1_databases ?? [],
      bindings: ["DB"],
      persistTo: dir,
    });
    child = await startWranglerDev({
      label: "the compat server",
      // The main Worker and the image transformer it binds (wrangler.images.toml), as `npm start` runs them; the
      // main Worker's configuration with the MIRROR_DB binding, as `npm start` with AUTH_MIRROR_DATABASE_URL runs it
      // (its batches handed over at once: COMPAT_CONFIG above).
      args: [
        "-c",
        COMPAT_CONFIG,
        "-c",
        "wrangler.images.toml",
        "--persist-to",
        dir,
        "--env-file",
        envFile,
        "--show-interactive-dev-session=false",
      ],
      port: reserved,
      env,
      ready: async (signal) => (await fetch(`${serverUrl}/auth/v1/healthz`, { signal })).ok,
      // It starts beside the other projects' tests (see above): on a busy 2-core machine that can take minutes.
      timeoutMs: 240_000,
    });
    mcp = await startMcpExample(mcpPort, `${serverUrl}/auth/v1`);
  })().then(
    () => announce("ready"),
    async (error: Error) => {
      await reserved.release(); // when what failed came before the spawn
      announce(`the compat server did not start: ${error.stack ?? error}`);
    },
  );
  project.provide("serverUrl", serverUrl);
  project.provide("pagePort", pagePort);
  project.provide("appPort", appPort);
  project.provide("relatedOrigin", relatedOrigin);
  project.provide("adminSecret", secrets.AUTH_ADMIN_SECRET);
  project.provide("fakeProviders", providers.origin);
  project.provide("mcpServer", `http://127.0.0.1:${mcpPort}/mcp`);
  project.provide("otherResource", otherResource);
  project.provide("clientDocs", { origin: clientDocs.origin, control: clientDocs.control });
  project.provide("claimsGraphql", claimsGraphql);
  project.provide("mirrorDatabase", { url: mirrorDatabase.url, adminUrl: mirrorDatabase.adminUrl });
  // What the server was started with, for test/compat/local-settings.test.ts (the secrets stay out of it).
  project.provide("serverVars", {
    AUTH_SERVER_URL: vars.AUTH_SERVER_URL,
    STORAGE_SERVER_URL: vars.STORAGE_SERVER_URL,
    AUTH_CLIENT_URL: vars.AUTH_CLIENT_URL,
    port: String(port),
  });
  project.provide("serverReadyFile", readyFile);
  project.provide("migrationHook", { url: migrationHook.url, control: migrationHook.control });
  project.provide("devRegistry", join(dir, "registry"));
  project.provide("supabaseKeys", {
    publishable: secrets.AUTH_SUPABASE_PUBLISHABLE_KEYS,
    secret: secrets.AUTH_SUPABASE_SECRET_KEYS,
  });

  return async () => {
    await ready;
    if (child) await stopWranglerDev(child);
    rmSync(dir, { recursive: true, force: true });
    rmSync(COMPAT_CONFIG, { force: true });
    delete process.env[SHARED_POSTGRES];
    await Promise.all([
      providers.close(),
      mcp?.close(),
      clientDocs.close(),
      mirrorDatabase.stop(),
      upstream.close(),
      migrationHook.close(),
    ]);
  };
}
