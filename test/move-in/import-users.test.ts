import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { totpCode, totpStep } from "../../src/auth/mfa/totp";
import { slotOfKey } from "../../src/db/directory";
import {
  expectContractError,
  expectError,
  PASSWORD,
  service,
  sessionFromRefresh,
  type WireSession,
} from "../helpers";
import { directoryKeysOf, testShards, userD1 } from "../support/shards";
import { admin, base32, importUsers, iso, nhostBcrypt, nhostUser, sha256Hex } from "./support";

/**
 * The import's user half through the admin API (contract move-in §2–3): a user moved from Nhost keeps their password,
 * their signed-in session, their PAT, their pending link and their TOTP; a second run writes nothing; nothing is half
 * written. The command that reads Nhost's Postgres is tested end to end in test/compat/move-in.test.ts.
 */

const svc = service({ AUTH_MFA_ENABLED: "true" });
const hash = await nhostBcrypt(PASSWORD);

const signIn = (email: string, password = PASSWORD) =>
  svc.post("/signin/email-password", { email, password });
// A user's rows are in the shard of their id (test/support/shards.ts).
const userRow = (id: string) =>
  userD1(id).prepare("SELECT * FROM users WHERE id = ?").bind(id).first<Record<string, unknown>>();
const count = async (table: string, column: string, id: string) =>
  (await userD1(id)
    .prepare(`SELECT count(*) AS n FROM ${table} WHERE ${column} = ?`)
    .bind(id)
    .first<{ n: number }>())!.n;

describe("a user moved from Nhost", () => {
  it("signs in with the old bcrypt password, refreshes the token Nhost gave, signs in with the PAT and follows the mailed link", async () => {
    const { bundle, secrets, id, email } = await nhostUser({ emailVerified: false }, hash);
    const { results } = await importUsers(svc, [bundle]);
    expect(results).toEqual([{ id, outcome: "imported" }]);

    // The client's stored refresh token (a Nhost UUID, found by Nhost's hash) refreshes into a session of ours, once.
    const renewed = await sessionFromRefresh(svc, secrets.refreshToken);
    expect(renewed.user).toMatchObject({
      id,
      email,
      displayName: "Moved User",
      roles: ["user", "me"],
      metadata: { plan: "pro" },
    });
    expect(renewed.refreshTokenId).toBe((bundle.refreshTokens as { id: string }[])[0]!.id);
    expect(renewed.refreshToken).not.toBe(secrets.refreshToken);
    await sessionFromRefresh(svc, renewed.refreshToken);

    const pat = await svc.post("/signin/pat", { personalAccessToken: secrets.pat });
    expect(pat.status).toBe(200);

    // The verify link Nhost mailed before the move (its ticket is pending in Nhost's row), at Nhost's own path on
    // the auth host that now points here: sent on to the service's verify endpoint with the same query.
    const nhostPath = `/v1/verify?ticket=${encodeURIComponent(secrets.ticket)}&type=emailVerify&redirectTo=x`;
    const onward = await svc.request("GET", `http://localhost:8787${nhostPath}`);
    expect(onward.status).toBe(302);
    expect(onward.headers.get("location")).toBe(`/auth/v1/verify?${nhostPath.split("?")[1]}`);
    const link = await svc.request(
      "GET",
      `/verify?ticket=${encodeURIComponent(secrets.ticket)}&type=emailVerify&redirectTo=${encodeURIComponent("http://localhost:3000/welcome")}`,
    );
    expect(link.status).toBe(302);
    expect(new URL(link.headers.get("location")!).searchParams.get("refreshToken")).toMatch(
      /^[0-9a-f-]{36}$/,
    );
    expect((await userRow(id))!.email_verified).toBe(1);
    // Replay: the same mailed link opened again (another browser, a forwarded mail) completes nothing.
    const again = await svc.request(
      "GET",
      `/verify?ticket=${encodeURIComponent(secrets.ticket)}&type=emailVerify&redirectTo=${encodeURIComponent("http://localhost:3000/welcome")}`,
    );
    const replayed = new URL(again.headers.get("location") ?? "http://x/").searchParams;
    expect(replayed.get("refreshToken")).toBeNull();
    expect(replayed.get("error")).toBeTruthy();

    // The old password, then moved to argon2id by that sign-in.
    const signedIn = await signIn(email);
    expect(signedIn.status).toBe(200);
    expect(String((await userRow(id))!.password_hash)).toMatch(/^\$argon2id\$/);
    expect((await signIn(email)).status).toBe(200);
  });

  it("keeps TOTP: the code of the imported secret completes the sign-in; an unreadable secret refuses until an admin resets MFA", async () => {
    const withTotp = await nhostUser({ activeMfaType: "totp" }, hash);
    withTotp.bundle.totpSecret = base32(withTotp.secrets.totpSecret);
    const unreadable = await nhostUser({ activeMfaType: "totp", totpSecretUnreadable: true }, hash);
    const { results } = await importUsers(svc, [withTotp.bundle, unreadable.bundle]);
    expect(results[0]).toEqual({ id: withTotp.id, outcome: "imported" });
    expect(results[1]).toMatchObject({
      id: unreadable.id,
      outcome: "imported",
      warnings: [{ notCarried: true }],
    });

    // A later run without Nhost's key keeps the secret the first run imported.
    const withoutKey = { ...withTotp.bundle, totpSecret: null, totpSecretUnreadable: true };
    expect((await importUsers(svc, [withoutKey])).results[0]!.outcome).toBe("updated");
    const first = (await (await signIn(withTotp.email)).json()) as { session: null; mfa: { ticket: string } };
    expect(first.session).toBeNull();
    const otp = totpCode(withTotp.secrets.totpSecret, totpStep(Date.now()));
    const second = await svc.post("/signin/mfa/totp", { ticket: first.mfa.ticket, otp });
    expect(second.status).toBe(200);

    // Threat: an import without Nhost's key quietly downgrading a TOTP user to password-only.
    await expectError(await signIn(unreadable.email), 401, "mfa-reset-required");
    const reset = await svc.request("PATCH", `/admin/users/${unreadable.id}`, {
      json: { activeMfaType: null },
      headers: admin(),
    });
    expect(reset.status).toBe(200);
    const after = (await (await signIn(unreadable.email)).json()) as { session: WireSession | null };
    expect(after.session?.user.id).toBe(unreadable.id);
  });

  it("a secret unreadable at first is filled in by a later run with Nhost's key, even after a refused sign-in changed the row", async () => {
    const user = await nhostUser({ activeMfaType: "totp", totpSecretUnreadable: true }, hash);
    await importUsers(svc, [user.bundle]);
    // The refused attempt still moved the bcrypt hash to argon2id: the row changed here.
    await expectError(await signIn(user.email), 401, "mfa-reset-required");
    const withKey = {
      ...user.bundle,
      totpSecret: base32(user.secrets.totpSecret),
      totpSecretUnreadable: false,
    };
    expect((await importUsers(svc, [withKey])).results[0]!.outcome).toBe("kept");
    const first = (await (await signIn(user.email)).json()) as { mfa: { ticket: string } };
    const otp = totpCode(user.secrets.totpSecret, totpStep(Date.now()));
    expect((await svc.post("/signin/mfa/totp", { ticket: first.mfa.ticket, otp })).status).toBe(200);
    // A run without the key again: the secret stays, and the answer says it is no loss.
    const { results } = await importUsers(svc, [user.bundle]);
    expect(results[0]!.warnings).toEqual([
      expect.objectContaining({
        notCarried: false,
        reason: expect.stringMatching(/earlier run imported is kept/),
      }),
    ]);
  });

  it("a second run with the same rows writes nothing; a row changed in Nhost is updated; a row changed here is kept, its ended sessions still end", async () => {
    const { bundle, id } = await nhostUser({}, hash);
    expect((await importUsers(svc, [bundle])).results[0]!.outcome).toBe("imported");
    const written = await userRow(id);
    expect((await importUsers(svc, [bundle])).results).toEqual([{ id, outcome: "unchanged" }]);
    expect(await userRow(id)).toEqual(written);

    const renamed = { ...bundle, displayName: "Renamed In Nhost", updatedAt: iso(Date.now()) };
    expect((await importUsers(svc, [renamed])).results[0]!.outcome).toBe("updated");
    expect((await userRow(id))!.display_name).toBe("Renamed In Nhost");

    // Changed here since (an admin, or the user): the service's row wins over a later run.
    await svc.request("PATCH", `/admin/users/${id}`, {
      json: { displayName: "Changed Here" },
      headers: admin(),
    });
    const again = { ...renamed, displayName: "Renamed Twice", updatedAt: iso(Date.now() + 1000) };
    const { results } = await importUsers(svc, [again]);
    expect(results[0]).toMatchObject({
      outcome: "kept",
      reasons: [{ reason: expect.stringMatching(/changed in this service/) }],
    });
    expect((await userRow(id))!.display_name).toBe("Changed Here");
    // …but a session Nhost ended (signed out there) ends here all the same.
    const tokens = bundle.refreshTokens as { type: string }[];
    const signedOut = { ...again, refreshTokens: tokens.filter((t) => t.type === "pat") };
    expect((await importUsers(svc, [signedOut])).results[0]!.outcome).toBe("kept");
    expect(await count("sessions", "user_id", id)).toBe(0);
    expect((await userRow(id))!.display_name).toBe("Changed Here");
  });

  it("a refresh token spent or signed out here is never brought back by a later run (its hash is a tombstone)", async () => {
    const { bundle, secrets, id } = await nhostUser({}, hash);
    await importUsers(svc, [bundle]);
    const renewed = await sessionFromRefresh(svc, secrets.refreshToken);
    await svc.post("/signout", { refreshToken: renewed.refreshToken, all: true }, renewed.accessToken);
    expect(await count("sessions", "user_id", id)).toBe(0);

    // A delta run: Nhost still lists the token (the user never came back there) and the row changed.
    const changed = { ...bundle, lastSeen: iso(Date.now()), updatedAt: iso(Date.now()) };
    const { results } = await importUsers(svc, [changed]);
    expect(results[0]!.outcome).not.toBe("skipped");
    expect(await count("sessions", "user_id", id)).toBe(0);
    await expectError(
      await svc.post("/token", { refreshToken: secrets.refreshToken }),
      401,
      "invalid-refresh-token",
    );
  });

  it("a session Nhost no longer has (signed out there before the cut-over) ends here on the delta run", async () => {
    const { bundle, secrets, id } = await nhostUser({}, hash);
    await importUsers(svc, [bundle]);
    const tokens = bundle.refreshTokens as { type: string }[];
    const signedOut = {
      ...bundle,
      refreshTokens: tokens.filter((t) => t.type === "pat"),
      updatedAt: iso(Date.now()),
    };
    expect((await importUsers(svc, [signedOut])).results[0]!.outcome).toBe("updated");
    expect(await count("sessions", "user_id", id)).toBe(0);
    await expectError(
      await svc.post("/token", { refreshToken: secrets.refreshToken }),
      401,
      "invalid-refresh-token",
    );
    expect((await svc.post("/signin/pat", { personalAccessToken: secrets.pat })).status).toBe(200);
  });
});

describe("delta runs around the cut-over", () => {
  it("Nhost rotated a session's token in place (same row, new hash): the new token refreshes here, the old does not", async () => {
    const { bundle, secrets, id } = await nhostUser({}, hash);
    await importUsers(svc, [bundle]);
    const rotated = crypto.randomUUID();
    const refreshTokens = (bundle.refreshTokens as Record<string, unknown>[]).map((t) =>
      t.type === "regular" ? { ...t, hash: "" } : t,
    );
    refreshTokens[0]!.hash = `\\x${await sha256Hex(rotated)}`;
    const delta = { ...bundle, refreshTokens, lastSeen: iso(Date.now()), updatedAt: iso(Date.now()) };
    const deltaResult = (await importUsers(svc, [delta])).results[0]!;
    expect(deltaResult.outcome, JSON.stringify(deltaResult)).toBe("updated");
    await expectError(
      await svc.post("/token", { refreshToken: secrets.refreshToken }),
      401,
      "invalid-refresh-token",
    );
    const renewed = await sessionFromRefresh(svc, rotated);
    expect(renewed.user.id).toBe(id);
    expect(renewed.refreshTokenId).toBe((bundle.refreshTokens as { id: string }[])[0]!.id);
  });

  it("Nhost refreshed a session that had already moved here (a second client): the user is still written, the moved session goes on", async () => {
    const { bundle, secrets } = await nhostUser({}, hash);
    await importUsers(svc, [bundle]);
    const moved = await sessionFromRefresh(svc, secrets.refreshToken);
    const refreshTokens = (bundle.refreshTokens as Record<string, unknown>[]).map((t) => ({ ...t }));
    refreshTokens[0]!.hash = `\\x${await sha256Hex(crypto.randomUUID())}`;
    const delta = { ...bundle, refreshTokens, lastSeen: iso(Date.now()), updatedAt: iso(Date.now()) };
    const result = (await importUsers(svc, [delta])).results[0]!;
    expect(result.outcome, JSON.stringify(result)).not.toBe("skipped");
    expect((await sessionFromRefresh(svc, moved.refreshToken)).user.id).toBe(moved.user.id);
  });

  it("a run after the cut-over never ends a session that moved here, though Nhost's old row for it is gone", async () => {
    const { bundle, secrets } = await nhostUser({}, hash);
    await importUsers(svc, [bundle]);
    const moved = await sessionFromRefresh(svc, secrets.refreshToken);
    const tokens = bundle.refreshTokens as { type: string }[];
    const later = {
      ...bundle,
      refreshTokens: tokens.filter((t) => t.type === "pat"),
      updatedAt: iso(Date.now()),
    };
    await importUsers(svc, [later]);
    expect((await sessionFromRefresh(svc, moved.refreshToken)).user.id).toBe(moved.user.id);
  });
});

describe("nothing half written", () => {
  it("a user with one bad part is skipped whole, with the table, id and reason; the others of the batch are imported", async () => {
    const good = await nhostUser({}, hash);
    const badToken = await nhostUser({}, hash);
    const tokens = badToken.bundle.refreshTokens as Record<string, unknown>[];
    tokens[1] = { ...tokens[1], hash: "sha1:abcdef" };
    const unknownHash = await nhostUser({}, "pbkdf2_sha256$260000$salt$hash");
    const caseTwin = await nhostUser({ email: (good.bundle.email as string).toUpperCase() }, hash);
    const { results } = await importUsers(svc, [
      good.bundle,
      badToken.bundle,
      unknownHash.bundle,
      caseTwin.bundle,
    ]);
    expect(results.map((r) => r.outcome)).toEqual(["imported", "skipped", "skipped", "skipped"]);
    expect(results[1]!.reasons).toEqual([
      { table: "auth.refresh_tokens", id: tokens[1]!.id, reason: expect.stringMatching(/unknown format/) },
    ]);
    expect(results[2]!.reasons![0]!.reason).toMatch(/password hash in an unknown format/);
    expect(results[3]!.reasons![0]!.reason).toMatch(/belongs to another user.*differing only in case/);
    for (const skipped of [badToken, unknownHash, caseTwin]) {
      expect(await userRow(skipped.id)).toBeNull();
      expect(await count("sessions", "user_id", skipped.id)).toBe(0);
      expect(await count("personal_access_tokens", "user_id", skipped.id)).toBe(0);
      expect(await count("user_providers", "user_id", skipped.id)).toBe(0);
    }
    await expectError(
      await svc.post("/token", { refreshToken: badToken.secrets.refreshToken }),
      401,
      "invalid-refresh-token",
    );
  });

  it("a dry run checks and reports without writing", async () => {
    const { bundle, id } = await nhostUser({}, hash);
    expect((await importUsers(svc, [bundle], true)).results).toEqual([{ id, outcome: "imported" }]);
    expect(await userRow(id)).toBeNull();
  });

  it("a user with a bcrypt cost that would hold a sign-in for minutes is refused, as is a malformed row", async () => {
    const bomb = await nhostUser({}, `$2a$31$${"a".repeat(53)}`);
    // A row that is an object is checked and skipped alone; a row that is not one at all refuses the batch
    // (test/move-in/bad-batches.test.ts).
    const { results } = await importUsers(svc, [bomb.bundle, { id: "not-a-user" }, { users: "text" }]);
    expect(results.map((r) => r.outcome)).toEqual(["skipped", "skipped", "skipped"]);
    expect(results[0]!.reasons![0]!.reason).toMatch(/cost 31/);
  });

  it("removals delete what an earlier run imported and Nhost no longer has, never a user created here", async () => {
    const moved = await nhostUser({}, hash);
    await importUsers(svc, [moved.bundle]);
    const native = await svc.request("POST", "/admin/users", {
      json: { email: `native-${crypto.randomUUID()}@example.com` },
      headers: admin(),
    });
    const nativeId = ((await native.json()) as { id: string }).id;
    const response = await svc.request("POST", "/admin/import/nhost/removals", {
      json: { kind: "user", ids: [moved.id, nativeId] },
      headers: admin(),
    });
    expect(await response.json()).toEqual({
      results: [
        { id: moved.id, outcome: "deleted" },
        { id: nativeId, outcome: "absent" },
      ],
    });
    expect(await userRow(moved.id)).toBeNull();
    expect(await userRow(nativeId)).not.toBeNull();
    // The ledger no longer lists it, so the next delta run doesn't ask again; its tokens stay tombstoned.
    const ledger = await svc.request("GET", `/admin/import/nhost/ledger?kind=user&limit=1000`, {
      headers: admin(),
    });
    expect(((await ledger.json()) as { items: string[] }).items).not.toContain(moved.id);
    await importUsers(svc, [moved.bundle]);
    await expectError(
      await svc.post("/token", { refreshToken: moved.secrets.refreshToken }),
      401,
      "invalid-refresh-token",
    );
  });

  it("bad batches get a 4xx in the contract's shape; without the admin secret, 401", async () => {
    const post = (json: unknown, headers: Record<string, string> = admin()) =>
      svc.request("POST", "/admin/import/nhost/users", { json, headers });
    await expectContractError(await post({ users: [] }), "empty batch");
    await expectContractError(await post({ users: Array(101).fill({}) }), "101 users");
    await expectContractError(await post({ users: "x" }), "not an array");
    await expectContractError(await post({ users: [{}] }, {}), "no admin secret");
    const huge = await svc.request("POST", "/admin/import/nhost/users", {
      body: JSON.stringify({ users: ["x".repeat(5 * 1024 * 1024)] }),
      headers: { ...admin(), "content-type": "application/json" },
    });
    expect(huge.status).toBe(413);
  });
});

/** The switch recorded (contract supabase.md §6): before it, no old token is accepted (test/move-in/imported-tokens.test.ts). */
const cutOver = async () => {
  const recorded = await svc.request("POST", "/admin/import/cut-over", { json: {}, headers: admin() });
  expect(recorded.status).toBe(200);
};

describe("access tokens the old Nhost project signed (AUTH_IMPORTED_JWT_SECRET)", () => {
  const key = "an-old-nhost-project-hs256-secret-of-32+chars";
  const moved = service({ AUTH_IMPORTED_JWT_SECRET: JSON.stringify({ type: "HS256", key }) });
  beforeAll(cutOver);

  async function nhostAccessToken(
    userId: string,
    options: { key?: string; issuer?: string; expiresIn?: number } = {},
  ) {
    const { SignJWT } = await import("jose");
    // Issued before the cut-over recorded above.
    const now = Math.floor(Date.now() / 1000) - 60;
    return new SignJWT({
      "https://hasura.io/jwt/claims": {
        "x-hasura-allowed-roles": ["user", "me"],
        "x-hasura-default-role": "user",
        "x-hasura-user-id": userId,
        "x-hasura-user-is-anonymous": "false",
      },
    })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setSubject(userId)
      .setIssuer(options.issuer ?? "hasura-auth")
      .setIssuedAt(now)
      .setExpirationTime(now + (options.expiresIn ?? 900))
      .sign(new TextEncoder().encode(options.key ?? key));
  }

  it("are accepted at GET /user until they expire; another key, issuer or an expired one is not", async () => {
    const { bundle, id } = await nhostUser({}, hash);
    await importUsers(moved, [bundle]);
    const me = await moved.get("/user", await nhostAccessToken(id));
    expect(me.status).toBe(200);
    expect(((await me.json()) as { id: string }).id).toBe(id);
    await expectError(
      await moved.get("/user", await nhostAccessToken(id, { key: `${key}-other` })),
      401,
      "unauthorized",
    );
    await expectError(
      await moved.get("/user", await nhostAccessToken(id, { issuer: "someone" })),
      401,
      "unauthorized",
    );
    await expectError(
      await moved.get("/user", await nhostAccessToken(id, { expiresIn: 50 })),
      401,
      "unauthorized",
    );
    // Without the setting, the old project's tokens mean nothing here.
    await expectError(await svc.get("/user", await nhostAccessToken(id)), 401, "unauthorized");
  });

  it("a token naming one user in sub and another in x-hasura-user-id is refused", async () => {
    const { SignJWT } = await import("jose");
    const now = Math.floor(Date.now() / 1000) - 60;
    const forged = await new SignJWT({
      "https://hasura.io/jwt/claims": { "x-hasura-user-id": crypto.randomUUID() },
    })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject(crypto.randomUUID())
      .setIssuer("hasura-auth")
      .setIssuedAt(now)
      .setExpirationTime(now + 600)
      .sign(new TextEncoder().encode(key));
    await expectError(await moved.get("/user", forged), 401, "unauthorized");
  });
});

describe("an RS256 project's tokens", () => {
  it("verify with the PEM public key; an HS256 token keyed with that public key (alg confusion) does not", async () => {
    const { SignJWT, exportSPKI, generateKeyPair } = await import("jose");
    const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
    const pem = await exportSPKI(publicKey);
    const rs = service({ AUTH_IMPORTED_JWT_SECRET: JSON.stringify({ type: "RS256", key: pem }) });
    const { bundle, id } = await nhostUser({}, hash);
    await importUsers(rs, [bundle]);
    await cutOver();
    const now = Math.floor(Date.now() / 1000) - 60;
    const token = (alg: string) =>
      new SignJWT({
        "https://hasura.io/jwt/claims": { "x-hasura-user-id": id, "x-hasura-default-role": "user" },
      })
        .setProtectedHeader({ alg })
        .setSubject(id)
        .setIssuer("hasura-auth")
        .setIssuedAt(now)
        .setExpirationTime(now + 600);
    expect((await rs.get("/user", await token("RS256").sign(privateKey))).status).toBe(200);
    const confused = await token("HS256").sign(new TextEncoder().encode(pem));
    await expectError(await rs.get("/user", confused), 401, "unauthorized");
  });
});

describe("the import's refresh tokens under a crowd", () => {
  it("fifty refreshes of one imported token in flight: one successor, no sign-out (the grace window)", async () => {
    const { bundle, secrets } = await nhostUser({}, hash);
    await importUsers(svc, [bundle]);
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => svc.post("/token", { refreshToken: secrets.refreshToken })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(50).fill(200));
    const tokens = new Set(
      await Promise.all(answers.map(async (a) => ((await a.json()) as WireSession).refreshToken)),
    );
    expect(tokens.size).toBe(1);
  });
});

describe("the import under faults", () => {
  /** A Nhost user whose id falls in the second shard, and that shard's binding. */
  async function userOfShard1() {
    for (;;) {
      const user = await nhostUser({}, hash);
      if (testShards().indexOfUser(user.id) === 1) return user;
    }
  }
  const failingBatch = (binding: D1Database) =>
    new Proxy(binding, {
      get(target, property) {
        if (property === "batch")
          return () => Promise.reject(new Error("D1_ERROR: Network connection lost."));
        const value = Reflect.get(target, property);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  const keysOf = directoryKeysOf;

  // The user's shard fails its batch (the directory's keys in DB are written): the keys claimed for the user go back.
  it("D1 failing the write: 503 with Retry-After, nothing written, no user reported bad (the command retries)", async () => {
    const faulty = service({ DB_1: failingBatch(env.DB_1 as D1Database) });
    const { bundle, id } = await userOfShard1();
    const response = await faulty.request("POST", "/admin/import/nhost/users", {
      json: { users: [bundle] },
      headers: admin(),
    });
    await expectError(response, 503, "service-unavailable");
    expect(response.headers.get("retry-after")).toBe("5");
    expect(await userRow(id)).toBeNull();
    expect(await keysOf(id)).toBe(0);
    expect((await importUsers(svc, [bundle])).results[0]!.outcome).toBe("imported");
    expect(await keysOf(id)).toBeGreaterThan(0);
  });

  // The directory is sharded by key: DB failing fails the claim of the keys it holds, and DB_1's go back.
  it("a directory shard failing (DB): 503, nothing written in the user's shard, no key left", async () => {
    const faulty = service({ DB: failingBatch(env.DB) });
    // A user with a key DB holds (their email's): with every key in DB_1 (a user's few keys land there together one
    // time in sixteen or so), DB would be asked nothing and the import would rightly succeed.
    let user = await userOfShard1();
    const emailInDb = async (email: string) =>
      testShards().indexOfSlot(slotOfKey(await sha256Hex(`email:${email.toLowerCase()}`))) === 0;
    while (!(await emailInDb(user.email))) user = await userOfShard1();
    const { bundle, id } = user;
    const response = await faulty.request("POST", "/admin/import/nhost/users", {
      json: { users: [bundle] },
      headers: admin(),
    });
    await expectError(response, 503, "service-unavailable");
    expect(await userRow(id)).toBeNull();
    expect((await importUsers(svc, [bundle])).results[0]!.outcome).toBe("imported");
  });
});
