import { env } from "cloudflare:test";
import bcrypt from "bcryptjs";
import { describe, expect, it } from "vitest";
import { claim } from "../../../src/db/directory";
import { getConfig } from "../../../src/runtime/config";
import {
  decodeJwt,
  expectError,
  NO_VERIFICATION,
  PASSWORD,
  service,
  signUp,
  uniqueEmail,
} from "../../helpers";
import { testShards, userD1, userIdByEmail } from "../../support/shards";

const svc = service(NO_VERIFICATION);
const signIn = (email: string, password: string, s = svc) =>
  s.post("/signin/email-password", { email, password });

describe("POST /signin/email-password", () => {
  it("answers {session, mfa: null} with an access token carrying the contract's claims", async () => {
    const email = uniqueEmail();
    const created = await signUp(svc, email);
    const response = await signIn(email.toUpperCase(), PASSWORD);
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      session: { accessToken: string; user: { id: string } };
      mfa: null;
    };
    expect(body.mfa).toBeNull();
    expect(body.session.user.id).toBe(created.user.id);
    const { header, payload } = decodeJwt(body.session.accessToken);
    expect(header).toMatchObject({ alg: "RS256", kid: expect.any(String) });
    expect(payload).toMatchObject({
      sub: created.user.id,
      iss: "http://localhost:8787/auth/v1",
      "https://hasura.io/jwt/claims": {
        "x-hasura-user-id": created.user.id,
        "x-hasura-default-role": "user",
        "x-hasura-allowed-roles": ["user", "me"],
        "x-hasura-user-is-anonymous": "false",
      },
    });
    expect((payload.exp as number) - (payload.iat as number)).toBe(900);
  });

  it("answers the same 401 invalid-email-password for an unknown email and a wrong password", async () => {
    const email = uniqueEmail();
    await signUp(svc, email);
    const wrong = await expectError(await signIn(email, "wrong password!"), 401, "invalid-email-password");
    const unknown = await expectError(await signIn(uniqueEmail(), PASSWORD), 401, "invalid-email-password");
    expect(wrong).toEqual(unknown);
  });

  it("answers 401 invalid-email-password for a blocked email even with the right password", async () => {
    const email = uniqueEmail();
    await signUp(svc, email);
    const blocked = service({ ...NO_VERIFICATION, AUTH_ACCESS_CONTROL_BLOCKED_EMAILS: email });
    await expectError(await signIn(email, PASSWORD, blocked), 401, "invalid-email-password");
  });

  it("answers 401 unverified-user while the email is unverified and verification is required", async () => {
    const email = uniqueEmail();
    await signUp(svc, email);
    await expectError(await signIn(email, PASSWORD, service()), 401, "unverified-user");
  });

  it("answers 401 disabled-user for a disabled account", async () => {
    const email = uniqueEmail();
    await signUp(svc, email);
    const userId = (await userIdByEmail(email))!;
    await userD1(userId).prepare("UPDATE users SET disabled = 1 WHERE id = ?").bind(userId).run();
    await expectError(await signIn(email, PASSWORD), 401, "disabled-user");
  });

  it("signs in users imported with a bcrypt hash and moves them to argon2id", async () => {
    const email = uniqueEmail("imported");
    const id = crypto.randomUUID();
    // As the import writes a user: its row in its shard, its address in the directory (src/move-in/).
    await claim(testShards(), id, [{ kind: "email", value: email }], Date.now());
    await userD1(id)
      .prepare(
        `INSERT INTO users (id, created_at, updated_at, locale, email, email_verified, password_hash, default_role, roles)
       VALUES (?, 0, 0, 'en', ?, 1, ?, 'user', '["user"]')`,
      )
      .bind(id, email, bcrypt.hashSync(PASSWORD, 4))
      .run();
    expect((await signIn(email, PASSWORD)).status).toBe(200);
    const row = await userD1(id)
      .prepare("SELECT password_hash FROM users WHERE id = ?")
      .bind(id)
      .first<{ password_hash: string }>();
    // At the suite's cost (TEST_PASSWORD_HASH): the production one is asserted in test/lib/password.test.ts.
    expect(row?.password_hash).toMatch(/^\$argon2id\$v=19\$m=8,t=1,p=1\$/);
    expect((await signIn(email, PASSWORD)).status).toBe(200);
  });

  it("adds custom claims from AUTH_JWT_CUSTOM_CLAIMS; names of built-in claims are refused at start", async () => {
    // Threat: a custom claim named auth-elevated (mapped to `id`) forged elevation on every token.
    for (const name of ["user-id", "auth-elevated", "Default-Role", "allowed-roles", "user-is-anonymous"]) {
      expect(() =>
        getConfig({ ...env, AUTH_JWT_CUSTOM_CLAIMS: JSON.stringify({ org: "metadata.org", [name]: "id" }) }),
      ).toThrow(/AUTH_JWT_CUSTOM_CLAIMS: claim names reserved by the service/);
    }
    const s = service({
      ...NO_VERIFICATION,
      AUTH_JWT_CUSTOM_CLAIMS: JSON.stringify({ "organization-id": "metadata.org" }),
    });
    const session = await signUp(s, uniqueEmail(), { metadata: { org: "acme" } });
    const claims = decodeJwt(session.accessToken).payload["https://hasura.io/jwt/claims"] as Record<
      string,
      unknown
    >;
    expect(claims["x-hasura-organization-id"]).toBe("acme");
    expect(claims["x-hasura-user-id"]).toBe(session.user.id);
  });
});
