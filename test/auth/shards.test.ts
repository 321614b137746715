// Core auth over two shards (vitest.config.ts): a user's rows live in the shard of the user's slot
// (src/db/shards.ts); ids the service mints for them carry the slot (src/db/routed-ids.ts); an email names its user
// through the directory (src/db/directory.ts), which decides, across shards, who holds an address.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createUser } from "../../src/auth/new-users";
import { resolveSignUpOptions } from "../../src/auth/sign-up-options";
import { CLAIM_WINDOW_MS, claim, ownerOf } from "../../src/db/directory";
import {
  expectError,
  follow,
  mailbox,
  NO_VERIFICATION,
  PASSWORD,
  service,
  sessionFromRefresh,
  signUp,
  testDeps,
  uniqueEmail,
  verifyPath,
  type WireSession,
} from "../helpers";
import { failingShards } from "../support/faults";
import { allD1, routedD1, testShards, userD1, userIdByEmail } from "../support/shards";

const verifying = service();
const svc = service(NO_VERIFICATION);
const shardOf = (userId: string) => testShards().indexOfUser(userId);
const inOneDay = () => new Date(Date.now() + 86_400_000).toISOString();

/** How many rows `sql` counts in each shard, home first. */
async function perShard(sql: string, ...values: unknown[]): Promise<number[]> {
  return Promise.all(
    allD1().map(
      async (d1) =>
        (await d1
          .prepare(sql)
          .bind(...values)
          .first<{ n: number }>())!.n,
    ),
  );
}

/** `n` rows in shard `index`, none in any other. */
const onlyIn = (index: number, n: number) => allD1().map((_, i) => (i === index ? n : 0));

/** A user id (random, as the service draws them) whose slot is in shard `index`. */
function idInShard(index: number): string {
  for (;;) {
    const id = crypto.randomUUID();
    if (shardOf(id) === index) return id;
  }
}

/** Sign-ups (verification on) until one user lands in each shard: their emails and ids, by shard. */
async function oneUserPerShard(tag: string): Promise<{ email: string; id: string }[]> {
  const found: { email: string; id: string }[] = [];
  while (allD1().some((_, index) => found[index] === undefined)) {
    const email = uniqueEmail(tag);
    const answer = await verifying.post("/signup/email-password", { email, password: PASSWORD });
    expect(answer.status).toBe(200);
    const id = (await userIdByEmail(email))!;
    found[shardOf(id)] ??= { email, id };
  }
  return found;
}

const signIn = (email: string) => svc.post("/signin/email-password", { email, password: PASSWORD });

/** Follows the newest mail to `to` (a `/verify` link) and returns the session it signs in. */
async function followMail(to: string): Promise<{ session: WireSession; ticketId: string }> {
  const [mail] = await mailbox(svc, to);
  const path = verifyPath(mail!);
  const ticketId = new URL(path, "http://x").searchParams.get("ticket")!.split(":")[1]!;
  const params = await follow(svc, path);
  return { session: await sessionFromRefresh(svc, params.get("refreshToken")!), ticketId };
}

describe("users in both shards go through core auth, each row in the user's own shard", () => {
  // Threat: a row written to or looked for in the wrong shard: a user who cannot sign in, refresh, use a link or a
  // PAT, or whose credentials end up where another shard's lookup would never find (or never end) them.
  it("sign-up, the mailed ticket, sign-in, refresh, a PAT and an email change, per shard", async () => {
    const users = await oneUserPerShard("sharded");
    for (const [index, user] of users.entries()) {
      const context = `user in shard ${index}`;
      expect(await perShard("SELECT count(*) AS n FROM users WHERE id = ?", user.id), context).toEqual(
        onlyIn(index, 1),
      );
      // The verification ticket carries the user's slot: the link reaches the right shard without a lookup.
      const verified = await followMail(user.email);
      expect(routedD1(verified.ticketId), context).toBe(userD1(user.id));
      expect(verified.session.user, context).toMatchObject({ id: user.id, emailVerified: true });
      expect(await perShard("SELECT count(*) AS n FROM tickets WHERE user_id = ?", user.id)).toEqual(
        onlyIn(index, 0),
      );

      // Sign-in by email (the directory names the shard), refresh (the session id names it).
      const signedIn = (await (await signIn(user.email)).json()) as { session: WireSession };
      expect(routedD1(signedIn.session.refreshTokenId), context).toBe(userD1(user.id));
      const refreshed = await sessionFromRefresh(svc, signedIn.session.refreshToken);
      expect(refreshed.user.id, context).toBe(user.id);
      expect(await perShard("SELECT count(*) AS n FROM sessions WHERE user_id = ?", user.id)).toEqual(
        onlyIn(index, 2),
      );

      // A PAT: the token itself names the shard.
      const created = await svc.post("/pat", { expiresAt: inOneDay() }, refreshed.accessToken);
      const { personalAccessToken } = (await created.json()) as { personalAccessToken: string };
      expect(routedD1(personalAccessToken), context).toBe(userD1(user.id));
      const byPat = (await (await svc.post("/signin/pat", { personalAccessToken })).json()) as {
        session: WireSession;
      };
      expect(byPat.session.user.id, context).toBe(user.id);
      expect(
        await perShard("SELECT count(*) AS n FROM personal_access_tokens WHERE user_id = ?", user.id),
      ).toEqual(onlyIn(index, 1));

      // An email change: the new address is the user's in the directory once confirmed, the old one nobody's.
      const newEmail = uniqueEmail("moved");
      const change = await svc.post("/user/email/change", { newEmail }, refreshed.accessToken);
      expect(await change.json(), context).toBe("OK");
      const confirmed = await followMail(newEmail);
      expect(confirmed.session.user, context).toMatchObject({ id: user.id, email: newEmail });
      expect(await ownerOf(testShards(), { kind: "email", value: newEmail }), context).toBe(user.id);
      expect(await ownerOf(testShards(), { kind: "email", value: user.email }), context).toBeUndefined();
      expect((await signIn(newEmail)).status, context).toBe(200);
      await expectError(await signIn(user.email), 401, "invalid-email-password");
      expect(await perShard("SELECT count(*) AS n FROM users WHERE email = ?", newEmail)).toEqual(
        onlyIn(index, 1),
      );

      // Their audit trail is with them (failed sign-ins are counted per address, in the home database).
      const audit = await perShard(
        "SELECT count(*) AS n FROM audit_events WHERE user_id = ? AND type <> 'signin.failure'",
        user.id,
      );
      expect(audit[index], context).toBeGreaterThan(0);
      expect(
        audit.filter((n, i) => i !== index && n > 0),
        context,
      ).toEqual([]);
    }
  });

  // Threat: a token imported from Nhost (no slot in it) that no shard can be found for, so the user is locked out.
  it("a PAT imported with a random id signs in through its directory entry, and only through it", async () => {
    const session = await signUp(svc);
    const token = crypto.randomUUID();
    const hash = [...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token)))]
      .map((b) => b.toString(16).padStart(2, "0"))
      .join("");
    await userD1(session.user.id)
      .prepare(
        "INSERT INTO personal_access_tokens (id, user_id, token_hash, created_at, expires_at, metadata) VALUES (?, ?, ?, ?, ?, '{}')",
      )
      .bind(crypto.randomUUID(), session.user.id, hash, Date.now(), Date.now() + 86_400_000)
      .run();
    await expectError(await svc.post("/signin/pat", { personalAccessToken: token }), 401, "invalid-pat");
    expect(await claim(testShards(), session.user.id, [{ kind: "pat", value: hash }], Date.now())).toBeNull();
    const signedIn = (await (await svc.post("/signin/pat", { personalAccessToken: token })).json()) as {
      session: WireSession;
    };
    expect(signedIn.session.user.id).toBe(session.user.id);
  });
});

describe("one address, one user, across shards", () => {
  const newUser = (id: string, email: string, now = Date.now()) => {
    const at = testDeps(env, { now });
    return createUser(at, {
      admission: "operator",
      method: null,
      id,
      email,
      options: resolveSignUpOptions(at.config, undefined, email),
    });
  };

  // Threat: two shards each holding the same address (each one's unique index only sees its own rows), so the
  // address signs in to whichever account the directory happens to name, and a takeover by sign-up.
  it("an address held in one shard refuses a user who would live in the other, both ways", async () => {
    for (const [holderShard, newcomerShard] of [
      [0, 1],
      [1, 0],
    ] as const) {
      const email = uniqueEmail("held");
      const holder = idInShard(holderShard);
      const newcomer = idInShard(newcomerShard);
      expect((await newUser(holder, email))?.id).toBe(holder);
      expect(await newUser(newcomer, email)).toBeUndefined();
      expect(await perShard("SELECT count(*) AS n FROM users WHERE email = ?", email)).toEqual(
        onlyIn(holderShard, 1),
      );
      expect(await ownerOf(testShards(), { kind: "email", value: email })).toBe(holder);
    }
    // Through the API: whichever shard the new user's id falls in, the answer is the unique index's.
    const email = uniqueEmail("held-http");
    await signUp(svc, email);
    for (let attempt = 0; attempt < 4; attempt++) {
      const again = await svc.post("/signup/email-password", { email, password: PASSWORD });
      await expectError(again, 409, "email-already-in-use");
    }
    expect(
      (await perShard("SELECT count(*) AS n FROM users WHERE email = ?", email)).reduce((a, b) => a + b),
    ).toBe(1);
  });

  // Threat: a race between two sign-ups for one address whose users live in different shards, both winning.
  it("two racing sign-ups for one address: exactly one account, in one shard", async () => {
    const email = uniqueEmail("race");
    const made = await Promise.all([newUser(idInShard(0), email), newUser(idInShard(1), email)]);
    expect(made.filter((user) => user !== undefined)).toHaveLength(1);
    expect(
      (await perShard("SELECT count(*) AS n FROM users WHERE email = ?", email)).reduce((a, b) => a + b),
    ).toBe(1);
    // Many at once through the API (random ids: both shards): one 200, the others the unique index's 409.
    const crowded = uniqueEmail("race-http");
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        svc.post("/signup/email-password", { email: crowded, password: PASSWORD }),
      ),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);
    expect(
      (await perShard("SELECT count(*) AS n FROM users WHERE email = ?", crowded)).reduce((a, b) => a + b),
    ).toBe(1);
    const owner = (await userIdByEmail(crowded))!;
    expect(await ownerOf(testShards(), { kind: "email", value: crowded })).toBe(owner);
  });

  // Threat: a request that died between its claim and its user blocking an address forever; or, the other way, a
  // claim taken over while its sign-up may still be writing, or from a user who still has the address.
  it("a stale claim (old, its user gone) is taken over; a young one, or one whose user holds the address, is not", async () => {
    const stale = uniqueEmail("stale");
    const ghost = crypto.randomUUID();
    const old = Date.now() - CLAIM_WINDOW_MS - 60_000;
    expect(await claim(testShards(), ghost, [{ kind: "email", value: stale }], old)).toBeNull();
    const taken = await signUp(svc, stale);
    expect(await ownerOf(testShards(), { kind: "email", value: stale })).toBe(taken.user.id);

    const young = uniqueEmail("young");
    expect(
      await claim(testShards(), crypto.randomUUID(), [{ kind: "email", value: young }], Date.now()),
    ).toBeNull();
    await expectError(
      await svc.post("/signup/email-password", { email: young, password: PASSWORD }),
      409,
      "email-already-in-use",
    );

    // A user made long ago (an old claim) who still has the address keeps it.
    const kept = uniqueEmail("kept");
    const holder = idInShard(0);
    expect((await newUser(holder, kept, old))?.id).toBe(holder);
    expect(await newUser(idInShard(1), kept)).toBeUndefined();
    expect(await ownerOf(testShards(), { kind: "email", value: kept })).toBe(holder);
  });

  // Threat: an address given up by a change staying locked to its old owner, or a new address taken twice.
  it("an address changed away can be taken by another user; the new one cannot", async () => {
    const before = uniqueEmail("before");
    const after = uniqueEmail("after");
    const first = await signUp(svc, before);
    expect(await (await svc.post("/user/email/change", { newEmail: after }, first.accessToken)).json()).toBe(
      "OK",
    );
    await followMail(after);
    const second = await signUp(svc, before);
    expect(second.user.id).not.toBe(first.user.id);
    expect(await ownerOf(testShards(), { kind: "email", value: before })).toBe(second.user.id);
    await expectError(
      await svc.post("/signup/email-password", { email: after, password: PASSWORD }),
      409,
      "email-already-in-use",
    );
  });

  // Threat: the confirmation's row write ran and D1 lost its answer: the change answered as failed gave the new
  // address's claim back while the row holds it, and a user of the other shard could then sign up with it (two
  // accounts, one address) until the owner retried.
  it("an email change whose write ran but lost its answer keeps the new address claimed by its owner", async () => {
    const after = uniqueEmail("lost-answer");
    const owner = await signUp(svc);
    expect(await (await svc.post("/user/email/change", { newEmail: after }, owner.accessToken)).json()).toBe(
      "OK",
    );
    const [mail] = await mailbox(svc, after);
    const { bindings, fault } = failingShards(env, {
      match: /^update "users" set "updated_at" = \?, "email" = \?/,
      when: "after",
      times: 1,
    });
    const failed = await service({ ...NO_VERIFICATION, ...bindings }).request("GET", verifyPath(mail!));
    expect(fault.failures).toBe(1);
    // The answer says to retry (a 503, or the redirect naming it), never that the link was bad.
    const location = failed.headers.get("location");
    if (location) expect(new URL(location).searchParams.get("error")).toBe("service-unavailable");
    else expect(failed.status).toBe(503);
    // The row holds the new address (D1 applied it), so its claim must stay the owner's.
    expect(
      await userD1(owner.user.id)
        .prepare("SELECT email FROM users WHERE id = ?")
        .bind(owner.user.id)
        .first("email"),
    ).toBe(after);
    expect(await ownerOf(testShards(), { kind: "email", value: after })).toBe(owner.user.id);
    // And the retry the answer asks for finishes the change (the ticket was put back).
    await follow(svc, verifyPath(mail!));
    expect(await ownerOf(testShards(), { kind: "email", value: after })).toBe(owner.user.id);
  });

  describe("a sign-up's user row and a fault at its insert", () => {
    const insertUser = /^insert into "users"/;
    const readUserById = /^select .* from "users" where "users"\."id" = \?$/;
    const signUpWith = (bindings: Record<string, D1Database>, email: string) =>
      service({ ...NO_VERIFICATION, ...bindings }).post("/signup/email-password", {
        email,
        password: PASSWORD,
      });
    const emailOwner = (email: string) => ownerOf(testShards(), { kind: "email", value: email });
    const accountsWith = async (email: string) =>
      (await perShard("SELECT count(*) AS n FROM users WHERE email = ?", email)).reduce((a, b) => a + b);
    /** The address signs in to `userId`, and neither a retry nor someone else's sign-up makes another account. */
    async function onlyAccountOf(email: string, userId: string): Promise<void> {
      expect(await emailOwner(email)).toBe(userId);
      await expectError(
        await svc.post("/signup/email-password", { email, password: PASSWORD }),
        409,
        "email-already-in-use",
      );
      // Random ids: at least one of four falls in the other shard, but for one run in sixteen.
      for (let attempt = 0; attempt < 4; attempt++) {
        await expectError(
          await svc.post("/signup/email-password", { email, password: `${PASSWORD}-someone-else` }),
          409,
          "email-already-in-use",
        );
      }
      const signedIn = await signIn(email);
      expect(signedIn.status).toBe(200);
      expect(((await signedIn.json()) as { session: WireSession }).session.user.id).toBe(userId);
      expect(await accountsWith(email)).toBe(1);
    }

    // Threat: the insert ran and D1 lost its answer: the sign-up gave its address's claim back while the row held the
    // address, so signing in by it found no account, and the retry (or anyone) whose user fell in the other shard made
    // a second account for the address.
    it("its answer lost: the row is read back, the sign-up completes, and the address stays its own", async () => {
      const email = uniqueEmail("lost-signup");
      const { bindings, fault } = failingShards(env, { match: insertUser, when: "after", times: 1 });
      const first = await signUpWith(bindings, email);
      expect(fault.failures).toBe(1);
      expect(first.status).toBe(200);
      const { session } = (await first.json()) as { session: WireSession };
      expect(await userIdByEmail(email)).toBe(session.user.id);
      await onlyAccountOf(email, session.user.id);
    });

    // Threat: as above, and the read that would tell whether the row is there fails too: giving the claim back then
    // risks an account unreachable by its address and a second one; keeping it costs only a 409 while the row is there.
    it("its answer lost and the row unreadable: a 503, the claim kept, the retry told the address is in use", async () => {
      const email = uniqueEmail("lost-unread");
      const { bindings, fault } = failingShards(env, {
        match: new RegExp(`${insertUser.source}|${readUserById.source}`),
        when: "after",
        times: 2,
      });
      const first = await signUpWith(bindings, email);
      expect(first.status).toBe(503);
      expect(first.headers.get("retry-after")).not.toBeNull();
      const userId = (await userIdByEmail(email))!;
      expect(userId).toBeDefined();
      await onlyAccountOf(email, userId);
      // The two statements failed were the insert and the read after it.
      expect(fault.seen.slice(0, 2).map((sql) => sql.slice(0, 20))).toEqual([
        'insert into "users" ',
        'select "id", "create',
      ]);
    });

    // Threat: the other way, a claim kept after an insert that did not run: the address refused (409) for the claim
    // window to the very person whose sign-up the 503 asked to retry, with no account behind it.
    it("failed before it ran: no row, the claim given back, the retry signs up", async () => {
      const email = uniqueEmail("unrun-signup");
      const { bindings, fault } = failingShards(env, { match: insertUser, when: "before", times: 1 });
      expect((await signUpWith(bindings, email)).status).toBe(503);
      expect(fault.failures).toBe(1);
      expect(await userIdByEmail(email)).toBeUndefined();
      expect(await emailOwner(email)).toBeUndefined();
      const retry = await svc.post("/signup/email-password", { email, password: PASSWORD });
      expect(retry.status).toBe(200);
      const { session } = (await retry.json()) as { session: WireSession };
      expect(await emailOwner(email)).toBe(session.user.id);
    });
  });

  // Threat: a guest upgraded to an address another shard's user holds (two accounts for one address).
  it("deanonymizing to an address a user of the other shard holds: 409, still a guest", async () => {
    const guests = service({ ...NO_VERIFICATION, AUTH_ANONYMOUS_USERS_ENABLED: "true" });
    const email = uniqueEmail("guest-target");
    const holder = await signUp(svc, email);
    let guest: WireSession;
    do {
      guest = ((await (await guests.post("/signin/anonymous", {})).json()) as { session: WireSession })
        .session;
    } while (shardOf(guest.user.id) === shardOf(holder.user.id));
    const upgrade = await guests.request("POST", "/user/deanonymize", {
      json: { signInMethod: "email-password", email, password: PASSWORD },
      token: guest.accessToken,
    });
    await expectError(upgrade, 409, "email-already-in-use");
    const row = await userD1(guest.user.id)
      .prepare("SELECT is_anonymous, email FROM users WHERE id = ?")
      .bind(guest.user.id)
      .first();
    expect(row).toEqual({ is_anonymous: 1, email: null });
    expect(await ownerOf(testShards(), { kind: "email", value: email })).toBe(holder.user.id);
  });
});

describe("one shard, the default", () => {
  // Threat: a small project (wrangler.toml's one `DB`) paying for, or broken by, the machinery of several shards.
  it("every flow on DB alone, and nothing written to the directory", async () => {
    const single = service({ AUTH_D1_SHARDS: "DB" });
    const email = uniqueEmail("single");
    expect((await single.post("/signup/email-password", { email, password: PASSWORD })).status).toBe(200);
    const [mail] = await mailbox(single, email);
    const verified = await sessionFromRefresh(
      single,
      (await follow(single, verifyPath(mail!))).get("refreshToken")!,
    );
    const userId = verified.user.id;
    const signedIn = (await (
      await single.post("/signin/email-password", { email, password: PASSWORD })
    ).json()) as { session: WireSession };
    await sessionFromRefresh(single, signedIn.session.refreshToken);
    const created = await single.post("/pat", { expiresAt: inOneDay() }, signedIn.session.accessToken);
    const { personalAccessToken } = (await created.json()) as { personalAccessToken: string };
    expect((await single.post("/signin/pat", { personalAccessToken })).status).toBe(200);
    const count = (sql: string) => env.DB.prepare(sql).bind(userId).first<{ n: number }>();
    expect(await count("SELECT count(*) AS n FROM users WHERE id = ?")).toEqual({ n: 1 });
    expect(await count("SELECT count(*) AS n FROM sessions WHERE user_id = ?")).toEqual({ n: 3 });
    expect(await count("SELECT count(*) AS n FROM directory WHERE user_id = ?")).toEqual({ n: 0 });
  });
});
