// Lazy password migration (contract supabase.md §5): a user moved in without a password hash (an old system that
// never exports them) signs in with the password the old system still checks. The app's PASSWORD_MIGRATION hook
// (signed per Standard Webhooks, verified here with the `standardwebhooks` library by the receiver of ./support.ts)
// answers whether it is right; the password is then hashed here, once, and the hook is never asked again for that
// user. With AUTH_HOOK_PASSWORD_MIGRATION_CREATE_USERS an unknown email is asked about too, and becomes a user
// through the core sign-up.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { getConfig } from "../../src/runtime/config";
import { supabaseClient, supabaseService } from "../faces/supabase/support";
import {
  expectError,
  follow,
  mailbox,
  NO_VERIFICATION,
  PASSWORD,
  service,
  uniqueAddress,
  uniqueEmail,
  verifyPath,
} from "../helpers";
import { importUsers, nhostBcrypt, nhostUser } from "../move-in/support";
import { allInShards, userD1 } from "../support/shards";
import { answers, HOOK_URL, hookReceiver, newSecret, type Scenario, usersWithEmail } from "./support";

/** The old system: what it answers for each email, and a default for the others (any password is wrong). */
const oldSystem = new Map<string, Scenario>();
const verified = (user: Record<string, unknown> = {}) => answers.json({ verified: true, user });
const receiver = hookReceiver({
  PASSWORD_MIGRATION: (payload, request) =>
    (oldSystem.get(payload.identifier) ?? answers.json({ verified: false }))(payload, request),
  BEFORE_USER_CREATED: ({ user }) =>
    Response.json(
      String(user.email).startsWith("refused-")
        ? { decision: "reject", message: "not from the old system" }
        : { decision: "continue" },
    ),
});
const HOOK = { ...NO_VERIFICATION, ...receiver.bindings };
const svc = service(HOOK);
const creating = service({ ...HOOK, AUTH_HOOK_PASSWORD_MIGRATION_CREATE_USERS: "true" });

const callsFor = (email: string) =>
  receiver.callsOf("PASSWORD_MIGRATION").filter((payload) => payload.identifier === email);

const signIn = (service_: typeof svc, email: string, password = PASSWORD) =>
  service_.request("POST", "/signin/email-password", {
    json: { email, password },
    headers: { "cf-connecting-ip": uniqueAddress() },
  });

async function storedHash(email: string): Promise<string | null | undefined> {
  const [row] = await allInShards<{ password_hash: string | null }>(
    "SELECT password_hash FROM users WHERE email = ?",
    email,
  );
  return row?.password_hash;
}

/** A user moved in through the admin import API with no password hash (as Cognito's export, or a CSV without one). */
async function importedWithoutHash(): Promise<{ id: string; email: string; bundle: unknown }> {
  const { bundle, id, email } = await nhostUser();
  await importUsers(svc, [bundle]);
  expect(await storedHash(email)).toBeNull();
  return { id, email, bundle };
}

afterEach(() => vi.restoreAllMocks());

/** Verified, once two calls have arrived: both sign-ins are past their look at the hash when they are answered. */
function verifiedWhenBothArrived(): Scenario {
  let arrived = 0;
  let release = () => {};
  const both = new Promise<void>((resolve) => {
    release = resolve;
  });
  return async () => {
    if (++arrived === 2) release();
    await both;
    return Response.json({ verified: true, user: {} });
  };
}

/** Two sign-ins at once with different passwords: one wins, and afterwards only its password signs in. */
async function racingSignIns(on: typeof svc, email: string): Promise<void> {
  const results = await Promise.all([signIn(on, email, "password one"), signIn(on, email, "password two")]);
  expect(results.map((r) => r.status).toSorted()).toEqual([200, 401]);
  const winner = results[0]!.status === 200 ? "password one" : "password two";
  const loser = winner === "password one" ? "password two" : "password one";
  expect(callsFor(email)).toHaveLength(2);
  expect((await signIn(on, email, winner)).status).toBe(200);
  await expectError(await signIn(on, email, loser), 401, "invalid-email-password");
  expect(callsFor(email)).toHaveLength(2);
}

describe("an imported user without a hash", () => {
  it("signs in once through the hook; the password is then hashed here (argon2id) and the hook never asked again", async () => {
    const { id, email } = await importedWithoutHash();
    oldSystem.set(email, verified({ displayName: "Ignored for a known user" }));
    const first = await signIn(svc, email);
    expect(first.status).toBe(200);
    const { session } = (await first.json()) as { session: { user: { id: string; displayName: string } } };
    expect(session.user).toMatchObject({ id, displayName: "Moved User" });
    expect(callsFor(email)).toEqual([{ type: "password.migration", identifier: email, password: PASSWORD }]);
    expect(await storedHash(email)).toMatch(/^\$argon2id\$v=19\$/);

    // Threat: the old system asked on every sign-in (its outage an outage here forever, the password sent out again).
    expect((await signIn(svc, email)).status).toBe(200);
    await expectError(await signIn(svc, email, "another password"), 401, "invalid-email-password");
    expect(callsFor(email)).toHaveLength(1);
    expect(receiver.unverified).toEqual([]);
  });

  // Threat (contract §6): a delta run of the import, still without a hash, wiping the migrated password (the hook
  // asked again, or the account left with no password at all).
  it("stays an ordinary user: a delta run of the import keeps the password hashed here", async () => {
    const { email, bundle } = await importedWithoutHash();
    oldSystem.set(email, verified());
    expect((await signIn(svc, email)).status).toBe(200);
    const hash = await storedHash(email);
    await importUsers(svc, [bundle]);
    expect(await storedHash(email)).toBe(hash);
    expect((await signIn(svc, email)).status).toBe(200);
    expect(callsFor(email)).toHaveLength(1);
  });

  it('{"verified":false} is a wrong password: 401, nothing written', async () => {
    const { email } = await importedWithoutHash();
    await expectError(await signIn(svc, email, "not it"), 401, "invalid-email-password");
    expect(callsFor(email)).toEqual([{ type: "password.migration", identifier: email, password: "not it" }]);
    expect(await storedHash(email)).toBeNull();
  });

  // Threat: the hook as a way around the lockout (unlimited guesses sent on to the old system), or asked before it.
  it("counts toward the lockout like a wrong password, and a locked account never reaches the hook", async () => {
    const locking = service({ ...HOOK, AUTH_LOCKOUT_THRESHOLD: "3" });
    const { email } = await importedWithoutHash();
    for (let i = 0; i < 3; i++) {
      await expectError(await signIn(locking, email, `guess ${i}`), 401, "invalid-email-password");
    }
    oldSystem.set(email, verified());
    await expectError(await signIn(locking, email), 429, "account-locked");
    expect(callsFor(email)).toHaveLength(3);
    expect(await storedHash(email)).toBeNull();
  });

  it("Turnstile guarding sign-in is passed before the hook is asked", async () => {
    const guarded = service({ ...HOOK, AUTH_TURNSTILE_SECRET: "secret", AUTH_TURNSTILE_ENDPOINTS: "signin" });
    const { email } = await importedWithoutHash();
    oldSystem.set(email, verified());
    await expectError(await signIn(guarded, email), 400, "turnstile-required");
    expect(callsFor(email)).toEqual([]);
  });

  // Threat: a hook that fails taken for a yes (a sign-in without the password), or for a no that half-writes.
  it.each([
    ["answers 500", answers.status(500)],
    ["does not answer in time", answers.timedOut()],
    ["is unreachable", answers.unreachable()],
    ["answers what is not JSON", answers.garbage()],
    ["answers another shape", answers.json({ verified: "yes" })],
    ["says verified without a user", answers.json({ verified: true })],
    [
      "sends a profile field of the wrong type",
      answers.json({ verified: true, user: { emailVerified: "yes" } }),
    ],
  ])("a hook that %s: 503, no hash written, and the password is in no log", async (_, scenario) => {
    const { email } = await importedWithoutHash();
    oldSystem.set(email, scenario);
    const logged = [vi.spyOn(console, "error"), vi.spyOn(console, "warn"), vi.spyOn(console, "log")];
    const password = `secret-${crypto.randomUUID()}`;
    await expectError(await signIn(svc, email, password), 503, "service-unavailable");
    expect(await storedHash(email)).toBeNull();
    expect(callsFor(email)).toHaveLength(1);
    // Threat: the password, sent in the hook's body, kept in a log line or an error's reason (contract: never logged).
    const lines = logged.flatMap((spy) => spy.mock.calls.map((call) => call.map(String).join(" ")));
    expect(lines.some((line) => line.includes("PASSWORD_MIGRATION"))).toBe(true);
    expect(lines.filter((line) => line.includes(password))).toEqual([]);
    const stored = await allInShards<{ n: number }>(
      "SELECT count(*) AS n FROM audit_events WHERE detail LIKE ?",
      `%${password}%`,
    );
    expect(stored.reduce((sum, row) => sum + row.n, 0)).toBe(0);
  });

  // Threat: two sign-ins at once with different passwords the old system both takes, each writing its own hash (the
  // account then opens with whichever was written last, and the other person holds a session).
  it("two sign-ins at once: one hash is written, and only the password it is of signs in", async () => {
    const { email } = await importedWithoutHash();
    // Both calls are held until both have arrived: each sign-in is past its check of the hash when it is answered.
    oldSystem.set(email, verifiedWhenBothArrived());
    await racingSignIns(svc, email);
  });

  it("the Supabase face's password grant goes through the same core", async () => {
    const face = supabaseService(HOOK);
    const { id, email } = await importedWithoutHash();
    oldSystem.set(email, verified());
    const { data, error } = await supabaseClient(face).auth.signInWithPassword({ email, password: PASSWORD });
    expect(error).toBeNull();
    expect(data.session?.user.id).toBe(id);
    expect(callsFor(email)).toHaveLength(1);
    expect(await storedHash(email)).toMatch(/^\$argon2id\$/);

    const { email: other } = await importedWithoutHash();
    oldSystem.set(other, answers.status(500));
    const failed = await supabaseClient(face).auth.signInWithPassword({ email: other, password: PASSWORD });
    expect(failed.error?.status).toBe(503);
    expect(await storedHash(other)).toBeNull();
  });
});

describe("users the hook is never asked about", () => {
  it("an imported user with a hash: its own hash decides, right or wrong", async () => {
    const { bundle, email } = await nhostUser({}, await nhostBcrypt(PASSWORD));
    await importUsers(svc, [bundle]);
    oldSystem.set(email, verified());
    await expectError(await signIn(svc, email, "wrong"), 401, "invalid-email-password");
    expect((await signIn(svc, email)).status).toBe(200);
    expect(callsFor(email)).toEqual([]);
  });

  // Threat: any account without a password (made by a magic link here) opened by whatever the hook says.
  it("a user made here without a password (no ledger row)", async () => {
    const passwordless = service({ ...HOOK, AUTH_EMAIL_PASSWORDLESS_ENABLED: "true" });
    const email = uniqueEmail("passwordless");
    expect((await passwordless.post("/signin/passwordless/email", { email })).status).toBe(200);
    oldSystem.set(email, verified());
    await expectError(await signIn(passwordless, email), 401, "invalid-email-password");
    expect(callsFor(email)).toEqual([]);
  });

  // Threat: pre-hijacking carried by an import. Someone made the account on the owner's address in the old system
  // and never proved it; it moved in unverified, without a hash. The owner's magic link here proves the address and
  // wipes the password (none here), but the old system's password stayed a way in: the hook was asked again.
  it("an imported user whose address was proven here since: the old system's password is not theirs any more", async () => {
    const passwordless = service({ ...HOOK, AUTH_EMAIL_PASSWORDLESS_ENABLED: "true" });
    const { bundle, id, email: raw } = await nhostUser({ emailVerified: false });
    const email = raw.toLowerCase();
    await importUsers(passwordless, [bundle]);
    oldSystem.set(email, verified());
    expect((await passwordless.post("/signin/passwordless/email", { email })).status).toBe(200);
    const [link] = await mailbox(passwordless, email);
    expect((await follow(passwordless, verifyPath(link!))).has("refreshToken")).toBe(true);

    await expectError(await signIn(passwordless, email), 401, "invalid-email-password");
    expect(callsFor(email)).toEqual([]);
    // An operator's word that an address imported verified is verified is no proof here: the hook still answers.
    const { bundle: other, email: otherRaw } = await nhostUser();
    const otherEmail = otherRaw.toLowerCase();
    await importUsers(passwordless, [other]);
    const otherId = (
      await allInShards<{ id: string }>("SELECT id FROM users WHERE email = ?", otherEmail)
    )[0]!.id;
    const patched = await passwordless.request("PATCH", `/admin/users/${otherId}`, {
      headers: { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) },
      json: { emailVerified: true },
    });
    expect(patched.status).toBe(200);
    oldSystem.set(otherEmail, verified());
    expect((await signIn(passwordless, otherEmail)).status).toBe(200);
    expect(id).not.toBe(otherId);
  });

  it("an unknown email while AUTH_HOOK_PASSWORD_MIGRATION_CREATE_USERS is off (the default)", async () => {
    const email = uniqueEmail("unknown");
    oldSystem.set(email, verified());
    await expectError(await signIn(svc, email), 401, "invalid-email-password");
    expect(callsFor(email)).toEqual([]);
    expect(await usersWithEmail(email)).toBe(0);
  });

  it("nobody at all when the hook is not set", async () => {
    const { email } = await importedWithoutHash();
    oldSystem.set(email, verified());
    await expectError(await signIn(service(NO_VERIFICATION), email), 401, "invalid-email-password");
    expect(callsFor(email)).toEqual([]);
  });
});

describe("AUTH_HOOK_PASSWORD_MIGRATION_CREATE_USERS=true: an unknown email", () => {
  // Threat: the old system's answer as a way to grant itself privileges here (roles, a chosen id, a disabled flag
  // that hides the account from its owner): only the profile fields are taken.
  it("becomes a user from the answer's profile fields only, with a new id and the password hashed here", async () => {
    const email = uniqueEmail("arriving");
    const chosenId = crypto.randomUUID();
    oldSystem.set(
      email,
      verified({
        id: chosenId,
        email: "someone-else@example.com",
        displayName: "Arriving <User>",
        avatarUrl: "https://avatars.example/arriving.png",
        locale: "fr",
        metadata: { plan: "team" },
        emailVerified: true,
        roles: ["admin"],
        defaultRole: "admin",
        disabled: true,
      }),
    );
    const response = await signIn(creating, email);
    expect(response.status).toBe(200);
    const { session } = (await response.json()) as { session: { user: Record<string, unknown> } };
    expect(session.user.id).not.toBe(chosenId);
    const row = await userD1(session.user.id as string)
      .prepare(
        "SELECT email, display_name, avatar_url, locale, metadata, email_verified, default_role, roles, disabled, password_hash FROM users WHERE id = ?",
      )
      .bind(session.user.id)
      .first<Record<string, unknown>>();
    expect(row).toMatchObject({
      email,
      display_name: "Arriving User",
      avatar_url: "https://avatars.example/arriving.png",
      locale: "fr",
      email_verified: 1,
      default_role: "user",
      disabled: 0,
    });
    expect(JSON.parse(row!.metadata as string)).toEqual({ plan: "team" });
    expect(JSON.parse(row!.roles as string)).not.toContain("admin");
    expect(row!.password_hash).toMatch(/^\$argon2id\$/);
    expect(callsFor(email)).toEqual([{ type: "password.migration", identifier: email, password: PASSWORD }]);
    expect((await signIn(creating, email)).status).toBe(200);
    expect(callsFor(email)).toHaveLength(1);
  });

  // Threat: telling which emails have an account by how a wrong password is answered. An unknown email and an imported
  // user without a hash make the same hook call and answer the same 401 (the time of that call is the same work).
  it("answers a wrong password as for a known user, after the same hook call", async () => {
    const unknown = uniqueEmail("unknown");
    const { email: known } = await importedWithoutHash();
    const a = await signIn(creating, unknown, "wrong");
    const b = await signIn(creating, known, "wrong");
    expect([a.status, b.status]).toEqual([401, 401]);
    expect(await a.json()).toEqual(await b.json());
    expect(callsFor(unknown)).toHaveLength(1);
    expect(callsFor(known)).toHaveLength(1);
    expect(await usersWithEmail(unknown)).toBe(0);
  });

  it("is refused while sign-ups are off, or for an address the block list refuses, without asking the hook", async () => {
    const closed = service({
      ...HOOK,
      AUTH_HOOK_PASSWORD_MIGRATION_CREATE_USERS: "true",
      AUTH_DISABLE_SIGNUP: "true",
    });
    const email = uniqueEmail("closed");
    oldSystem.set(email, verified());
    await expectError(await signIn(closed, email), 401, "invalid-email-password");
    const blocking = service({
      ...HOOK,
      AUTH_HOOK_PASSWORD_MIGRATION_CREATE_USERS: "true",
      AUTH_ACCESS_CONTROL_BLOCKED_EMAILS: email,
    });
    await expectError(await signIn(blocking, email), 401, "invalid-email-password");
    expect(callsFor(email)).toEqual([]);
    expect(await usersWithEmail(email)).toBe(0);
  });

  // Threat: two first sign-ins at once making two accounts, or one account whose password is whichever came last.
  it("two first sign-ins at once: one account, and only the password it was made with signs in", async () => {
    const email = uniqueEmail("racing");
    oldSystem.set(email, verifiedWhenBothArrived());
    await racingSignIns(creating, email);
    expect(await usersWithEmail(email)).toBe(1);
  });

  it("verification required and the address not vouched for: the verification mail, and unverified-user", async () => {
    const verifying = service({ ...receiver.bindings, AUTH_HOOK_PASSWORD_MIGRATION_CREATE_USERS: "true" });
    const email = uniqueEmail("unverified");
    oldSystem.set(email, verified({ displayName: "Not Yet" }));
    await expectError(await signIn(verifying, email), 401, "unverified-user");
    expect(await usersWithEmail(email)).toBe(1);
    expect(await storedHash(email)).toMatch(/^\$argon2id\$/);
    expect(await mailbox(verifying, email)).toHaveLength(1);
    await expectError(await signIn(verifying, email), 401, "unverified-user");
    expect(callsFor(email)).toHaveLength(1);
  });

  it("meets the app's BEFORE_USER_CREATED hook, as every sign-up does", async () => {
    const email = `refused-${crypto.randomUUID().slice(0, 8)}@example.com`;
    oldSystem.set(email, verified());
    const { message } = await expectError(await signIn(creating, email), 403, "forbidden");
    expect(message).toBe("not from the old system");
    expect(await usersWithEmail(email)).toBe(0);
  });
});

describe("the settings", () => {
  const secret = newSecret();
  const URL_ = "AUTH_HOOK_PASSWORD_MIGRATION_URL";
  const SECRET = "AUTH_HOOK_PASSWORD_MIGRATION_SECRET";

  it("a hook as the others: its URL and whsec_ secret; CREATE_USERS off unless set", () => {
    const config = getConfig({ ...env, [URL_]: HOOK_URL.PASSWORD_MIGRATION, [SECRET]: secret });
    expect(config.passwordMigration).toEqual({
      endpoint: { url: HOOK_URL.PASSWORD_MIGRATION, secret, allowLoopback: false },
      createUsers: false,
    });
    expect(getConfig({ ...env }).passwordMigration).toEqual({ endpoint: null, createUsers: false });
  });

  it.each([
    [{ [URL_]: HOOK_URL.PASSWORD_MIGRATION }, /must be set together/],
    [{ [URL_]: HOOK_URL.PASSWORD_MIGRATION, [SECRET]: "not-whsec" }, /SECRET must be whsec_/],
    // Threat: every migrating password sent in clear over the Internet.
    [{ [URL_]: "http://hooks.app.example/pm", [SECRET]: secret }, /PASSWORD_MIGRATION_URL: not https/],
    [
      { AUTH_HOOK_PASSWORD_MIGRATION_CREATE_USERS: "true" },
      /CREATE_USERS needs AUTH_HOOK_PASSWORD_MIGRATION_URL/,
    ],
  ])("%o is refused at start-up", (settings, message) => {
    expect(() => getConfig({ ...env, ...settings })).toThrow(message);
  });

  // Threat: the hook's URL pointed at an address inside the network (SSRF), with passwords in the body.
  it("a URL the outbound-URL policy refuses (an IP literal) is never called: 503", async () => {
    const fetcher = vi.fn(async () => Response.json({ verified: true, user: {} }));
    const inside = service({
      ...NO_VERIFICATION,
      [URL_]: "https://203.0.113.7/password-migration",
      [SECRET]: secret,
      OUTBOUND: { fetch: fetcher },
    });
    const { email } = await importedWithoutHash();
    await expectError(await signIn(inside, email), 503, "service-unavailable");
    expect(fetcher).not.toHaveBeenCalled();
    expect(await storedHash(email)).toBeNull();
  });
});
