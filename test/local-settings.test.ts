// The suite reads no local settings, checked where that is decided: the Worker under test (the workers pool) sees
// exactly the plain-text bindings vitest.config.ts declares (`POOL_VARS`), so nothing a developer's .dev.vars or
// .env, wrangler.toml's [vars], PORT or the process environment hold can reach a test. The compat server's side is
// test/compat/local-settings.test.ts. CI runs both under a hostile .dev.vars, PORT and [vars] (.ci/run), in place of
// a second run of the whole suite: every workers test sees the Worker only through this `env`.
// Threat: a suite whose outcome depends on what the developer last ran (`npm start` fills .dev.vars with development
// switches), green on one machine and red on another, or green because of a setting production does not have.
import { env } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { ARGON2_PARAMS, TEST_ARGON2_PARAMS } from "../src/lib/password";
import { getConfig } from "../src/runtime/config";
import { PREFIX, SERVER } from "./helpers";

declare module "vitest" {
  export interface ProvidedContext {
    /** Every plain-text binding vitest.config.ts gives the Worker under test. */
    poolVars: Record<string, string>;
  }
}

/** The plain-text bindings, less the ones the Vitest pool adds for itself (`__VITEST_POOL_WORKERS_…`). */
const plainText = (bindings: object) =>
  Object.fromEntries(
    Object.entries(bindings).filter(
      ([name, value]) => typeof value === "string" && !name.startsWith("__VITEST_POOL_WORKERS_"),
    ),
  );

describe("the workers pool's bindings", () => {
  it("are exactly those vitest.config.ts declares: nothing from .dev.vars, [vars] or the process environment", () => {
    const declared = inject("poolVars");
    expect(Object.keys(declared).length).toBeGreaterThan(5);
    const seen = plainText(env);
    expect(Object.keys(seen).sort(), "binding names").toEqual(Object.keys(declared).sort());
    expect(seen).toEqual(declared);
  });

  it("put the server where the tests' requests go (test/helpers.ts), whatever PORT says", () => {
    expect(env.AUTH_SERVER_URL).toBe(`${SERVER}${PREFIX}`);
    expect(env.STORAGE_SERVER_URL).toBe(SERVER);
    expect(getConfig(env)).toMatchObject({
      urls: { authPrefix: PREFIX, client: "http://localhost:3000" },
      signUp: { disabled: false },
      password: { minLength: 9 },
    });
  });

  it("hash passwords at the test-only cost and retry at once, neither of which a deployment heeds", () => {
    expect(getConfig(env)).toMatchObject({
      passwordHashCost: TEST_ARGON2_PARAMS,
      events: { retryDelaySeconds: 0 },
    });
    expect(getConfig({ ...env, TEST_PASSWORD_HASH: undefined }).passwordHashCost).toEqual(ARGON2_PARAMS);
    // The same bindings on a server that is not local: the production cost, the default first delay.
    const production = {
      ...env,
      AUTH_SERVER_URL: "https://auth.example.com/auth/v1",
      AUTH_DEV_MAILBOX: "false",
    };
    expect(getConfig(production)).toMatchObject({
      passwordHashCost: ARGON2_PARAMS,
      events: { retryDelaySeconds: 10 },
    });
  });
});
