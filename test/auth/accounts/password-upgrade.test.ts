// Issue 48: new password hashes at argon2id m=7 MiB, t=5 (src/lib/password.ts), hashes of before (m=19 MiB, t=2)
// still verified and replaced once at the next sign-in that proves them, in the session's batch
// (src/auth/accounts/password-session.ts, src/auth/password-rehash.ts). The suite hashes at its cheap cost
// (TEST_PASSWORD_HASH): "the current cost" here is that one; the production one is asserted in
// test/lib/password.test.ts.
import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import { describe, expect, it } from "vitest";
import { totpCode, totpStep } from "../../../src/auth/mfa/totp";
import { rehashAlone } from "../../../src/auth/password-rehash";
import {
  ARGON2_PARAMS,
  ARGON2_PARAMS_BEFORE_48,
  dummyHash,
  hashPassword,
  TEST_ARGON2_PARAMS,
  verifyPassword,
} from "../../../src/lib/password";
import { getConfig } from "../../../src/runtime/config";
import { expectError, NO_VERIFICATION, PASSWORD, service, signUp, uniqueEmail } from "../../helpers";
import { testShards, userD1 } from "../../support/shards";

const svc = service({ ...NO_VERIFICATION, AUTH_MFA_ENABLED: "true" });
const signIn = (email: string, password: string) => svc.post("/signin/email-password", { email, password });
const CURRENT = /^\$argon2id\$v=19\$m=8,t=1,p=1\$/;
const BEFORE_48 = /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/;

interface HashRow {
  password_hash: string;
  updated_at: number;
  password_changed_at: number | null;
}
const rowOf = (id: string) =>
  userD1(id)
    .prepare("SELECT password_hash, updated_at, password_changed_at FROM users WHERE id = ?")
    .bind(id)
    .first<HashRow>();
const setHash = (id: string, hash: string) =>
  userD1(id).prepare("UPDATE users SET password_hash = ? WHERE id = ?").bind(hash, id).run();

describe("password hashes of issue 48", () => {
  it("signs up and in with a new hash at the current cost; a wrong password is refused", async () => {
    const email = uniqueEmail("hash-new");
    const session = await signUp(svc, email);
    const stored = await rowOf(session.user.id);
    expect(stored?.password_hash).toMatch(CURRENT);
    expect((await signIn(email, PASSWORD)).status).toBe(200);
    await expectError(await signIn(email, `${PASSWORD}!`), 401, "invalid-email-password");
    // A hash at the current cost is left alone by a sign-in.
    expect((await rowOf(session.user.id))?.password_hash).toBe(stored?.password_hash);
  });

  // Threat: users whose hash predates the change locked out, or kept on the old hash forever, or rehashed at every
  // sign-in (a write and a hash each time); a wrong password must not trigger a rehash (it would prove nothing).
  it("verifies a hash of before issue 48, refuses a wrong password, and replaces it once, at the next sign-in", async () => {
    const email = uniqueEmail("hash-old");
    const { user } = await signUp(svc, email);
    const old = await hashPassword(PASSWORD, ARGON2_PARAMS_BEFORE_48);
    expect(old).toMatch(BEFORE_48);
    await setHash(user.id, old);
    const before = await rowOf(user.id);

    await expectError(await signIn(email, "not the password"), 401, "invalid-email-password");
    expect((await rowOf(user.id))?.password_hash).toBe(old);

    expect((await signIn(email, PASSWORD)).status).toBe(200);
    const upgraded = await rowOf(user.id);
    expect(upgraded?.password_hash).toMatch(CURRENT);
    expect(await verifyPassword(PASSWORD, upgraded!.password_hash, TEST_ARGON2_PARAMS)).toEqual({
      ok: true,
      needsRehash: false,
    });
    // Not a change of password (the `password.changed` event and the account center read this column).
    expect(upgraded?.password_changed_at).toBe(before?.password_changed_at);
    expect(upgraded!.updated_at).toBeGreaterThanOrEqual(before!.updated_at);

    expect((await signIn(email, PASSWORD)).status).toBe(200);
    expect((await rowOf(user.id))?.password_hash).toBe(upgraded?.password_hash);
    await expectError(await signIn(email, "not the password"), 401, "invalid-email-password");
  });

  // Threat: a sign-in that proved the old password overwriting a password changed meanwhile (another tab, a reset,
  // an admin) with the old password's new hash: the old password would work again.
  it("never replaces a hash that changed after the sign-in verified it", async () => {
    const { user } = await signUp(svc, uniqueEmail("hash-race"));
    const changed = await hashPassword("the new password", TEST_ARGON2_PARAMS);
    await setHash(user.id, changed);
    const stale = await hashPassword(PASSWORD, ARGON2_PARAMS_BEFORE_48);
    await rehashAlone(
      testShards(),
      user.id,
      { from: stale, to: "$argon2id$v=19$m=8,t=1,p=1$x$y" },
      Date.now(),
    );
    expect((await rowOf(user.id))?.password_hash).toBe(changed);
  });

  it("replaces an old hash when the answer is a second factor's ticket (no session written)", async () => {
    const email = uniqueEmail("hash-mfa");
    const session = await signUp(svc, email);
    const generated = await svc.get("/mfa/totp/generate", session.accessToken);
    const { totpSecret } = (await generated.json()) as { totpSecret: string };
    const code = totpCode(decodeBase32IgnorePadding(totpSecret), totpStep(Date.now()));
    const activated = await svc.post("/user/mfa", { code, activeMfaType: "totp" }, session.accessToken);
    expect(await activated.json()).toBe("OK");
    await setHash(session.user.id, await hashPassword(PASSWORD, ARGON2_PARAMS_BEFORE_48));

    const response = await signIn(email, PASSWORD);
    const body = (await response.json()) as { session: null; mfa: { ticket: string } | null };
    expect(body.session).toBeNull();
    expect(body.mfa?.ticket).toMatch(/^mfaTotp:/);
    expect((await rowOf(session.user.id))?.password_hash).toMatch(CURRENT);
  });

  // Threat: timing enumeration. An unknown email is verified against a dummy hash; at a cost other than the one new
  // hashes are made at, an unknown email would answer sooner (or later) than a known one with a wrong password.
  it("verifies an unknown email against a dummy hash at the cost new hashes are made at", async () => {
    expect(getConfig(svc.env).passwordHashCost).toEqual(TEST_ARGON2_PARAMS);
    for (const cost of [ARGON2_PARAMS, TEST_ARGON2_PARAMS]) {
      const dummy = dummyHash(cost);
      expect(dummy.startsWith((await hashPassword(PASSWORD, cost)).split("$").slice(0, 4).join("$"))).toBe(
        true,
      );
      expect((await verifyPassword(PASSWORD, dummy, cost)).needsRehash).toBe(false);
    }
    await expectError(await signIn(uniqueEmail("hash-unknown"), PASSWORD), 401, "invalid-email-password");
  });
});
