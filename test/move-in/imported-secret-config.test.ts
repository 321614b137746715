import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { getConfig } from "../../src/runtime/config";

/** The cut-over's settings (contract move-in §3) as getConfig reads them: mistakes are refused with directions. */
describe("AUTH_IMPORTED_JWT_SECRET and HASURA_GRAPHQL_JWT_SECRET", () => {
  it("an HS256 secret pasted into HASURA_GRAPHQL_JWT_SECRET is refused, pointing to AUTH_IMPORTED_JWT_SECRET", () => {
    const nhost = JSON.stringify({ type: "HS256", key: "x".repeat(40) });
    expect(() => getConfig({ ...env, HASURA_GRAPHQL_JWT_SECRET: nhost })).toThrow(/AUTH_IMPORTED_JWT_SECRET/);
  });

  it("the old project's secret is read; a short HMAC key, a private key, an unknown type or bad JSON is refused", () => {
    const ok = getConfig({
      ...env,
      AUTH_IMPORTED_JWT_SECRET: JSON.stringify({ type: "HS512", key: "k".repeat(64), issuer: "old" }),
    });
    expect(ok.imported.secret).toMatchObject({ type: "HS512", issuer: "old" });
    for (const value of [
      JSON.stringify({ type: "HS256", key: "short" }),
      JSON.stringify({ type: "RS256", key: "-----BEGIN PRIVATE KEY-----\n…" }),
      JSON.stringify({ type: "none", key: "k".repeat(64) }),
      "{not json",
    ])
      expect(() => getConfig({ ...env, AUTH_IMPORTED_JWT_SECRET: value }), value).toThrow(
        /AUTH_IMPORTED_JWT_SECRET/,
      );
    expect(getConfig({ ...env }).imported.secret).toBeNull();
  });

  it("AUTH_IMPORTED_JWT_MAX_LIFETIME: an hour by default, at most a day, a whole number of seconds", () => {
    expect(getConfig({ ...env }).imported.maxLifetime).toBe(3600);
    expect(getConfig({ ...env, AUTH_IMPORTED_JWT_MAX_LIFETIME: "86400" }).imported.maxLifetime).toBe(86_400);
    for (const value of ["86401", "0", "-5", "1.5", "an hour"])
      expect(() => getConfig({ ...env, AUTH_IMPORTED_JWT_MAX_LIFETIME: value }), value).toThrow(
        /AUTH_IMPORTED_JWT_MAX_LIFETIME/,
      );
    expect(() => getConfig({ ...env, AUTH_IMPORTED_JWT_MAX_LIFETIME: "90000" })).toThrow(/at most 86400/);
  });
});
