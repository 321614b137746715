// `import-supabase`'s sessions (scripts/import-supabase/sessions.mjs): GoTrue's auth.sessions and newest live
// auth.refresh_tokens rows → the wire's `supabaseSessions`. The run against Postgres and the service (a v1 token
// refreshed through supabase-js) is tested end to end in test/compat/supabase-import.test.ts.
import { createCipheriv, createHash, randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it, vi } from "vitest";
// @ts-expect-error: plain .mjs without types
import { Progress, Report } from "../../scripts/import-nhost/report.mjs";
// @ts-expect-error: plain .mjs without types
import { oldApiKeys, recordApiKeys } from "../../scripts/import-supabase/api-keys.mjs";
// @ts-expect-error: plain .mjs without types
import { gotrueKey, parseSupabaseKeys } from "../../scripts/import-supabase/factor-secrets.mjs";
// @ts-expect-error: plain .mjs without types
import { supabaseSessionsOf } from "../../scripts/import-supabase/sessions.mjs";
// @ts-expect-error: plain .mjs without types
import { buildSupabaseBundle, supabaseBundleRows } from "../../scripts/import-supabase/user-bundles.mjs";

/** The v2 session of test/move-in/supabase-sessions.test.ts (made with Python's hmac, independently of this code). */
const V2 = {
  key: "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8",
  session: "6a0f3b2e-1c4d-4e5f-8a9b-0c1d2e3f4a5b",
};
const DB_KEY = randomBytes(32).toString("base64url");

/** crypto.NewEncryptedString as GoTrue seals a session's key: the key's base64url text, the session id as HKDF info. */
function seal(id: string, plain: string): string {
  const nonce = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", gotrueKey(Buffer.from(DB_KEY, "base64url"), id), nonce);
  const data = Buffer.concat([cipher.update(plain, "utf8"), cipher.final(), cipher.getAuthTag()]);
  return JSON.stringify({
    key_id: "k1",
    alg: "aes-gcm-hkdf",
    data: data.toString("base64"),
    nonce: nonce.toString("base64"),
  });
}

const created = new Date("2026-01-01T00:00:00Z");
const v2Row = (key: string) => ({
  id: V2.session,
  user_id: "u",
  created_at: created,
  not_after: null,
  aal: "aal1",
  factor_id: null,
  refreshed_at: new Date("2026-01-02T00:00:00Z"),
  refresh_token_hmac_key: key,
  refresh_token_counter: "300",
});

describe("GoTrue's sessions for the wire", () => {
  it("hashes a v1 session's newest live token and its parent, and never sends either token itself", () => {
    const session = { ...v2Row(""), refresh_token_hmac_key: null, refresh_token_counter: null };
    const token = {
      id: "41",
      session_id: V2.session,
      token: "abcdefgh1234",
      created_at: created,
      parent: "zyxwvu987654",
    };
    const { sessions, notCarried } = supabaseSessionsOf([session], [token], null);
    expect(notCarried).toEqual([]);
    expect(sessions).toEqual([
      expect.objectContaining({
        id: V2.session,
        refreshTokenHmacKey: null,
        refreshTokenCounter: null,
        refreshedAt: "2026-01-02T00:00:00.000Z",
        refreshTokens: [
          {
            id: "41",
            tokenHash: createHash("sha256").update("abcdefgh1234").digest("hex"),
            revoked: false,
            createdAt: created.toISOString(),
            parentHash: createHash("sha256").update("zyxwvu987654").digest("hex"),
          },
        ],
      }),
    ]);
    expect(JSON.stringify(sessions)).not.toContain("abcdefgh1234");
    expect(JSON.stringify(sessions)).not.toContain("zyxwvu987654");
  });

  it("sends a v2 session's HMAC key plain or opened from GoTrue's sealed form, with its counter", () => {
    for (const column of [V2.key, seal(V2.session, V2.key)]) {
      const { sessions } = supabaseSessionsOf([v2Row(column)], [], parseSupabaseKeys(`k1:${DB_KEY}`));
      expect(sessions[0]).toMatchObject({
        refreshTokenHmacKey: V2.key,
        refreshTokenCounter: 300,
        aal: "aal1",
      });
    }
  });

  // Threat: a sealed key sent as it is (useless to the service) or a session silently dropped: it is listed instead.
  it("lists a session whose sealed key SUPABASE_ENCRYPTION_KEY does not open, and does not send it", () => {
    for (const keys of [null, parseSupabaseKeys(randomBytes(32).toString("base64url"))]) {
      const { sessions, notCarried } = supabaseSessionsOf([v2Row(seal(V2.session, V2.key))], [], keys);
      expect(sessions).toEqual([]);
      expect(notCarried).toEqual([
        {
          table: "auth.sessions",
          id: V2.session,
          reason: expect.stringMatching(/refresh_token_hmac_key .*signs in again/),
        },
      ]);
    }
  });

  it("a bundle carries its sessions, counted as auth.sessions and auth.refresh_tokens", () => {
    const user = { id: "00000000-0000-4000-8000-000000000001", email: "a@example.com", created_at: created };
    const token = { id: "7", session_id: V2.session, token: "zzzzzzzzzzzz", created_at: created };
    const session = { ...v2Row(""), refresh_token_hmac_key: null, refresh_token_counter: null };
    const { bundle } = buildSupabaseBundle(
      user,
      { sessions: [session], sessionTokens: [token] },
      { now: Date.now() },
    );
    expect(bundle.supabaseSessions).toHaveLength(1);
    expect(supabaseBundleRows(bundle)).toMatchObject({ "auth.sessions": 1, "auth.refresh_tokens": 1 });
  });

  it("records the old keys from the environment; a new-style service key (for --files-from only) is not one", () => {
    const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJyb2xlIjoic2VydmljZV9yb2xlIn0.c2ln";
    expect(oldApiKeys({ SUPABASE_ANON_KEY: "a.b.c", SUPABASE_SERVICE_KEY: jwt })).toEqual({
      anonKey: "a.b.c",
      serviceRoleKey: jwt,
    });
    expect(oldApiKeys({ SUPABASE_SERVICE_KEY: "sb_secret_abc" })).toBeNull();
    expect(oldApiKeys({})).toBeNull();
  });

  // A server without the Supabase face has no such route: the run says so (exit 1) and carries on, never a stack.
  it("a 404 from the api-keys route is a report problem naming AUTH_SUPABASE_API_ENABLED", async () => {
    const server = createServer((request, response) => {
      response.writeHead(request.url === "/admin/import/supabase/api-keys" ? 404 : 500).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    vi.stubEnv("SUPABASE_ANON_KEY", "a.b.c");
    try {
      const report = new Report({ dryRun: false, server: "x", source: "Supabase" });
      const cli = {
        server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        secret: () => "s",
        fail: (message: string) => {
          throw new Error(message);
        },
      };
      await recordApiKeys({ cli, report, progress: new Progress(), dryRun: false });
      expect(report.toJSON().problems).toEqual([
        expect.stringMatching(/404.*AUTH_SUPABASE_API_ENABLED=true/),
      ]);
      expect(report.exitCode()).toBe(1);
    } finally {
      vi.unstubAllEnvs();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
