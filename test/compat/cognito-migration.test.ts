// Moving a Cognito user pool in as docs/migrating-from-cognito.md has a person do it, end to end against the
// `wrangler dev` server: the pool's `aws cognito-idp list-users` export (test/fixtures/import-users/cognito-users.json,
// plus three users written here) imported with the real `npm run admin -- import-users --from cognito`, then real
// clients (@nhost/nhost-js, and supabase-js through the Supabase face) signing in with the passwords Cognito holds.
// The service asks the guide's own hook code (test/compat/migration-hook-server.ts, on the guide's path, checking
// Standard Webhooks signatures), which asks a stand-in for Cognito speaking its JSON protocol
// (test/compat/cognito-stand-in.ts); the hook counts its calls. Both run for the whole compat project.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@supabase/supabase-js";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { client, rejection, runAdminCommand, serverUrl } from "./client";
import { COGNITO_POOL } from "./cognito-stand-in";

const hook = inject("migrationHook");
const keys = inject("supabaseKeys");
const scratch = mkdtempSync(join(tmpdir(), "cognito-migration-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

type PoolUser = (typeof COGNITO_POOL)[number];
const poolUser = (name: string): PoolUser => {
  const user = COGNITO_POOL.find((u) => u.email === `${name}.cognito@example.com`);
  if (!user) throw new Error(`no ${name} in the Cognito stand-in's pool`);
  return user;
};
const [carol, frank, gina, hank, olive] = ["carol", "frank", "gina", "hank", "olive"].map(poolUser) as [
  PoolUser,
  PoolUser,
  PoolUser,
  PoolUser,
  PoolUser,
];

/** A user as `list-users` (AWS CLI v2) writes one. */
const listed = (user: PoolUser, name: string) => ({
  Username: user.username,
  Enabled: user.enabled,
  UserStatus: user.status,
  UserCreateDate: "2023-03-04T05:06:07.890000+00:00",
  UserLastModifiedDate: "2023-03-04T05:06:07.890000+00:00",
  Attributes: [
    { Name: "sub", Value: user.sub },
    { Name: "email", Value: user.email },
    { Name: "email_verified", Value: "true" },
    { Name: "name", Value: name },
  ],
});

/** The hook's calls so far, by the identifier it was asked about. */
async function hookCalls(email: string): Promise<number> {
  const calls = (await (await fetch(`${hook.control}/calls`)).json()) as Record<string, number>;
  return calls[email] ?? 0;
}

const signIn = (email: string, password: string) => client().auth.signInEmailPassword({ email, password });
const supabase = () =>
  createClient(`${serverUrl}/supabase`, keys.publishable, {
    auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
  });

describe("a Cognito user pool moved in, its passwords checked once by the guide's hook", () => {
  beforeAll(async () => {
    const fixture = join(process.cwd(), "test", "fixtures", "import-users", "cognito-users.json");
    const exported = JSON.parse(readFileSync(fixture, "utf8")) as { Users: unknown[] };
    exported.Users.push(listed(frank, "Frank"), listed(gina, "Gina"), listed(hank, "Hank"));
    const file = join(scratch, "users.json");
    writeFileSync(file, JSON.stringify(exported, null, 2));
    const run = await runAdminCommand("import-users", ["--from", "cognito", "--file", file], {}, {
      tables: {},
    } as {
      tables: Record<string, Record<string, number>>;
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.report.tables["auth.users"]).toMatchObject({ read: 6, imported: 6 });
  }, 60_000);

  it("nhost-js: a wrong password, then the hook down, change nothing; the old password signs in once through the hook, then on the service's hash", async () => {
    // Threat: a wrong password must not become the user's password here (the hook's "no" writes nothing).
    const wrong = await rejection(signIn(carol.email, "not Carol's password"));
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe("invalid-email-password");
    expect(await hookCalls(carol.email)).toBe(1);

    // Threat: an old system that can't answer must neither let the person in nor lock them out for good.
    await fetch(`${hook.control}/down`, { method: "POST" });
    try {
      const down = await rejection(signIn(carol.email, carol.password));
      expect(down.status).toBe(503);
      expect(down.body.error).toBe("service-unavailable");
    } finally {
      await fetch(`${hook.control}/up`, { method: "POST" });
    }

    // Both attempts left her without a hash: the old password still goes to the hook, and signs her in with her id.
    const first = await signIn(carol.email, carol.password);
    expect(first.body.session?.user?.id).toBe(carol.sub);
    expect(await hookCalls(carol.email)).toBe(2);

    // From now on the password is the service's: no call, and a wrong one is refused without one.
    const second = await signIn(carol.email, carol.password);
    expect(second.body.session?.user?.id).toBe(carol.sub);
    expect((await rejection(signIn(carol.email, "not Carol's password"))).status).toBe(401);
    expect(await hookCalls(carol.email)).toBe(2);
  });

  it("supabase-js: the Supabase face's password grant goes through the same hook, once", async () => {
    const wrong = await supabase().auth.signInWithPassword({ email: frank.email, password: "not Frank's" });
    expect(wrong.error).toMatchObject({ code: "invalid_credentials" });
    const first = await supabase().auth.signInWithPassword({ email: frank.email, password: frank.password });
    expect(first.error).toBeNull();
    expect(first.data.user?.id).toBe(frank.sub);
    const second = await supabase().auth.signInWithPassword({ email: frank.email, password: frank.password });
    expect(second.data.user?.id).toBe(frank.sub);
    expect(await hookCalls(frank.email)).toBe(2);
  });

  it("Cognito's answers as the guide reads them: a second factor asked means the password was right; a forced change means no", async () => {
    // Gina has TOTP at Cognito: her right password is answered with a challenge. MFA does not move (the guide).
    expect((await signIn(gina.email, gina.password)).body.session?.user?.id).toBe(gina.sub);
    // Threat: Hank's password is an administrator's temporary one, never chosen by him: it must not become his here.
    const forced = await rejection(signIn(hank.email, hank.password));
    expect(forced.body.error).toBe("invalid-email-password");
  });

  it("a user of the pool the import did not bring, with CREATE_USERS off: invalid credentials, the hook not asked", async () => {
    const refused = await rejection(signIn(olive.email, olive.password));
    expect(refused.status).toBe(401);
    expect(refused.body.error).toBe("invalid-email-password");
    expect(await hookCalls(olive.email)).toBe(0);
  });

  it("the hook answers only the service: a post without its signature is refused", async () => {
    // Threat: the hook's URL is no secret; unsigned, it would be an oracle for the pool's passwords.
    const body = JSON.stringify({
      type: "password.migration",
      identifier: carol.email,
      password: carol.password,
    });
    const forged = new Webhook(
      `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64")}`,
    );
    const id = `msg_${crypto.randomUUID()}`;
    const now = new Date();
    for (const headers of [
      {} as Record<string, string>,
      {
        "webhook-id": id,
        "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
        "webhook-signature": forged.sign(id, now, body),
      },
    ]) {
      const response = await fetch(hook.url, { method: "POST", headers, body });
      expect(response.status).toBe(401);
      await response.body?.cancel();
    }
  });
});
