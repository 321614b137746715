import { createExecutionContext, env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { ConfigError } from "../src/errors";
import worker from "../src/index";
import { getConfig } from "../src/runtime/config";
import { FEATURES } from "../src/runtime/features";

describe("config", () => {
  // `npm start` reads this line in wrangler dev's output to stop at once with the reason (scripts/start.mjs,
  // refusedConfiguration); test/compat/start-script.test.ts proves that answer with a stand-in wrangler that logs it so.
  it("the Worker refusing its settings: one log line {level, what: config, detail} and a 500 that says what to run", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const response = await worker.fetch(
        new Request("http://localhost:8787/auth/v1/healthz"),
        { ...env, AUTH_UI_LOCALES: "en,xx" } as typeof env,
        createExecutionContext(),
      );
      expect(response.status).toBe(500);
      expect(((await response.json()) as { message: string }).message).toMatch(
        /^the service is not configured \(invalid configuration: AUTH_UI_LOCALES.*Start it with `npm start`/,
      );
      expect(logged.mock.calls).toHaveLength(1);
      const [line] = logged.mock.calls[0] as [string];
      expect(JSON.parse(line)).toEqual({
        level: "error",
        what: "config",
        detail: expect.stringMatching(
          /^invalid configuration: AUTH_UI_LOCALES\.1: Invalid option: expected one of "en"\|"de"/,
        ),
      });
    } finally {
      logged.mockRestore();
    }
  });

  it("applies the contract's defaults", () => {
    const config = getConfig({ ...env });
    expect(config.urls.authPrefix).toBe("/auth/v1");
    expect(config.password.minLength).toBe(9);
    expect(config.tokens.accessTtl).toBe(900);
    expect(config.tokens.refreshTtl).toBe(2_592_000);
    expect(config.tokens.reuseInterval).toBe(10);
    expect(config.tokens.maxSessionsPerUser).toBe(200);
    expect(config.signUp.emailVerifiedRequired).toBe(true);
    expect(config.roles.allowed).toEqual(["user", "me"]);
  });

  // Threat: a production deployment with a development transport hands every sign-in link and code to anyone.
  it("refuses the development mail and SMS transports, and heeds test timings, only where the service is local", () => {
    const production = { ...env, AUTH_SERVER_URL: "https://auth.example.com/auth/v1" };
    expect(() => getConfig({ ...production, AUTH_DEV_MAILBOX: "true" })).toThrow(
      /AUTH_DEV_MAILBOX is for development only and AUTH_SERVER_URL \(https:\/\/auth\.example\.com\/auth\/v1\) is not local/,
    );
    expect(() => getConfig({ ...production, AUTH_DEV_MAILBOX: "false", AUTH_DEV_SMS: "true" })).toThrow(
      /AUTH_DEV_SMS is for development only/,
    );
    expect(getConfig({ ...production, AUTH_DEV_MAILBOX: "false" }).devTransports.mailbox).toBe(false);
    // The crowd test's short key set lifetime: a production deployment keeps the 10 s whatever it is given.
    const productionWithTestTtl = { ...production, AUTH_DEV_MAILBOX: "false", TEST_KEY_SET_TTL_MS: "2000" };
    expect(getConfig(productionWithTestTtl).keySetTtlMs).toBe(10_000);
    expect(getConfig({ ...env, TEST_KEY_SET_TTL_MS: "2000" }).keySetTtlMs).toBe(2_000);
    expect(getConfig({ ...env }).keySetTtlMs).toBe(10_000);
    for (const local of [
      "http://127.0.0.1:8787/auth/v1",
      "http://app.localhost/auth/v1",
      "http://[::1]:8787/auth/v1",
    ]) {
      expect(
        getConfig({ ...env, AUTH_SERVER_URL: local, AUTH_DEV_MAILBOX: "true" }).devTransports.mailbox,
        local,
      ).toBe(true);
    }
  });

  // Threat: a slice the runtime does not parse leaves its `config.<slice>` undefined where the type says it is set;
  // two slices reading one variable would each hold their own idea of it.
  it("holds every feature's slice, and each variable is read by one slice only", () => {
    const config = getConfig({ ...env });
    const sliced = FEATURES.flatMap((feature) => (feature.settings ? [feature] : []));
    expect(sliced.map((feature) => feature.name).toSorted()).toEqual([
      "audit-export",
      "auth",
      "faces/supabase",
      "fedcm",
      "impersonation",
      "oauth2",
      "orgs",
      "password-migration",
      "platform",
      "providers",
      "risk",
      "storage",
      "vault",
    ]);
    const seen = new Map<string, string>();
    for (const feature of sliced) {
      const slice = feature.settings!;
      const resolved = slice.resolve(slice.vars.parse({ ...env }), config, { ...env });
      for (const key of Object.keys(resolved)) expect(config, `${feature.name}: ${key}`).toHaveProperty(key);
      for (const name of Object.keys(slice.vars.shape)) {
        expect(seen.get(name), name).toBeUndefined();
        seen.set(name, feature.name);
      }
    }
    expect(config.secrets.encryptionKey).toMatch(/^[0-9a-f]{64}$/i);
    expect(config.urls.auth("/verify")).toBe(`${config.urls.server}/verify`);
  });

  it("parses once per env object", () => {
    const bindings = { ...env };
    expect(getConfig(bindings)).toBe(getConfig(bindings));
  });

  it("always includes the default role in the allowed roles", () => {
    const config = getConfig({
      ...env,
      AUTH_USER_DEFAULT_ROLE: "editor",
      AUTH_USER_DEFAULT_ALLOWED_ROLES: "me",
    });
    expect(config.roles.allowed).toEqual(["editor", "me"]);
  });

  // Threat: storage permissions from Hasura with no Hasura to ask would have to guess: every file open, or every file
  // shut. The deployment does not start instead, naming what is missing.
  it("STORAGE_PERMISSIONS: rules by default; hasura only with the app's GraphQL endpoint and its admin secret", () => {
    expect(getConfig({ ...env }).storage.permissions).toBe("rules");
    const hasura = {
      ...env,
      STORAGE_PERMISSIONS: "hasura",
      HASURA_GRAPHQL_GRAPHQL_URL: "https://hasura.example.com/v1/graphql",
      HASURA_GRAPHQL_ADMIN_SECRET: "a-hasura-admin-secret",
    };
    expect(getConfig(hasura).storage.permissions).toBe("hasura");
    expect(() => getConfig({ ...hasura, HASURA_GRAPHQL_GRAPHQL_URL: undefined })).toThrow(
      "invalid configuration: STORAGE_PERMISSIONS=hasura needs HASURA_GRAPHQL_GRAPHQL_URL",
    );
    expect(() => getConfig({ ...hasura, HASURA_GRAPHQL_ADMIN_SECRET: undefined })).toThrow(
      "invalid configuration: STORAGE_PERMISSIONS=hasura needs HASURA_GRAPHQL_ADMIN_SECRET",
    );
    expect(() => getConfig({ ...env, STORAGE_PERMISSIONS: "bucket-rules" })).toThrow(
      /invalid configuration: STORAGE_PERMISSIONS: /,
    );
  });

  it.each([
    ["AUTH_PASSWORD_MIN_LENGTH", "nine"],
    ["AUTH_DISABLE_SIGNUP", "yes"],
    ["AUTH_SERVER_URL", "not a url"],
    ["AUTH_ACCESS_TOKEN_EXPIRES_IN", "30"],
    ["AUTH_ENCRYPTION_KEY", "short"],
    ["AUTH_JWT_CUSTOM_CLAIMS", "[1,2]"],
    ["AUTH_SMTP_AUTH_METHOD", "CRAM-MD5"],
    ["AUTH_SMTP_SENDER", "not an address"],
    ["AUTH_EMAIL_TEMPLATES", '{"en":{"email-verify":{"subject":"no body"}}}'],
  ])("a bad %s fails with an error naming it", (name, value) => {
    expect(() => getConfig({ ...env, [name]: value })).toThrow(ConfigError);
    expect(() => getConfig({ ...env, [name]: value })).toThrow(name);
  });

  it("requires signing keys and an encryption key", () => {
    expect(() => getConfig({ ...env, AUTH_JWT_PRIVATE_KEYS: undefined })).toThrow(/AUTH_JWT_PRIVATE_KEYS/);
    expect(() => getConfig({ ...env, AUTH_ENCRYPTION_KEY: undefined })).toThrow(/AUTH_ENCRYPTION_KEY/);
  });

  // Threat: a cap above what one request can end in the families' objects lets "sign out everywhere" miss sessions.
  it("bounds the sessions per user to what sign-out everywhere can end", () => {
    expect(() => getConfig({ ...env, AUTH_MAX_SESSIONS_PER_USER: "501" })).toThrow(
      /AUTH_MAX_SESSIONS_PER_USER/,
    );
    expect(() => getConfig({ ...env, AUTH_MAX_SESSIONS_PER_USER: "0" })).toThrow(
      /AUTH_MAX_SESSIONS_PER_USER/,
    );
  });

  it("parses the sender in both of the reference's forms", () => {
    expect(getConfig({ ...env, AUTH_SMTP_SENDER: "noreply@example.com" }).mail.sender).toEqual({
      email: "noreply@example.com",
    });
    expect(getConfig({ ...env, AUTH_SMTP_SENDER: '"Acme Auth" <noreply@example.com>' }).mail.sender).toEqual({
      name: "Acme Auth",
      email: "noreply@example.com",
    });
  });

  it("refuses a half-configured mail transport, naming what is missing", () => {
    expect(() => getConfig({ ...env, AUTH_SMTP_HOST: "smtp.example.com" })).toThrow(/AUTH_SMTP_SENDER/);
    expect(() =>
      getConfig({
        ...env,
        AUTH_SMTP_HOST: "smtp.example.com",
        AUTH_SMTP_SENDER: "noreply@example.com",
        AUTH_SMTP_USER: "mailer",
      }),
    ).toThrow(/AUTH_SMTP_PASS/);
    expect(() => getConfig({ ...env, EMAIL: env.CF_EMAIL })).toThrow(/AUTH_SMTP_SENDER/);
  });

  it("refuses SMS sign-in without a way to send, and a provider without its credentials", () => {
    expect(() => getConfig({ ...env, AUTH_SMS_PASSWORDLESS_ENABLED: "true" })).toThrow(/AUTH_SMS_PROVIDER/);
    expect(() =>
      getConfig({ ...env, AUTH_SMS_PROVIDER: "twilio", AUTH_SMS_TWILIO_ACCOUNT_SID: "AC1" }),
    ).toThrow(/AUTH_SMS_TWILIO_AUTH_TOKEN/);
    expect(
      getConfig({ ...env, AUTH_SMS_PASSWORDLESS_ENABLED: "true", AUTH_DEV_SMS: "true" }).devTransports.sms,
    ).toBe(true);
  });
});
