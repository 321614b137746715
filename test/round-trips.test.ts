// Issue 48, "Round trips": each hot path's storage calls in WAVES before the answer (calls side by side count once),
// through the recording bindings of `npm run bench:latency` (test/support/waves.ts). A wave is a trip across a region
// at the edge: these pin the budgets, so a change that puts a call back behind another fails here, with the calls in
// order in the message. The suite runs two shards (vitest.config.ts), as a sharded deployment does.
import { env, runInDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { tick } from "../bench/round-trips";
import { ORGS_BESIDE } from "../src/auth/org-membership";
import { isBookmark } from "../src/db/replica";
import { slotOfUser } from "../src/db/shards";
import { ADDRESS_LIMITER_BINDINGS } from "../src/rate-limits/buckets";
import { FACE, PUBLISHABLE_KEY, SECRET_KEY } from "./faces/supabase/support";
import { decodeJwt, NO_VERIFICATION, PASSWORD, signUp, uniqueEmail, type WireSession } from "./helpers";
import {
  basic,
  codeFor,
  form,
  newClient,
  PROVIDER_ON,
  provider,
  REDIRECT_URI,
  s256,
  type TokenAnswer,
  VERIFIER,
} from "./oauth2/support";
import { addMember as addOrgMember, createOrg, user as orgUser } from "./orgs/support";
import { uniquePhone } from "./support/phones";
import { allD1, userD1 } from "./support/shards";
import { delayCalls, waveService } from "./support/waves";

const SUPABASE_ON = {
  AUTH_SUPABASE_API_ENABLED: "true",
  AUTH_SUPABASE_PUBLISHABLE_KEYS: PUBLISHABLE_KEY,
  AUTH_SUPABASE_SECRET_KEYS: SECRET_KEY,
  ...NO_VERIFICATION,
};

/** Every address limit allows (the Rate Limiting bindings are the platform's): only the account's own counts are exact. */
const ADDRESS_LIMITS_ALLOW = Object.fromEntries(
  Object.values(ADDRESS_LIMITER_BINDINGS).map((name) => [name, { limit: async () => ({ success: true }) }]),
);

/** The [start, end] events of the first call of `trace` naming `needle`: two calls overlap when each starts before the other ends. */
const spanIn = (trace: string, needle: string) =>
  (/\[(\d+)-(\d+)\]/.exec(trace.split("\n").find((call) => call.includes(needle)) ?? "") ?? [])
    .slice(1)
    .map(Number);

/** Whether the first calls of `trace` naming `a` and `b` ran side by side. */
const overlapping = (trace: string, a: string, b: string) => {
  const [x, y] = [spanIn(trace, a), spanIn(trace, b)];
  return x.length === 2 && y.length === 2 && x[0]! < y[1]! && y[0]! < x[1]!;
};

const svc = waveService(NO_VERIFICATION);
/** The start of the user row's read (a call's label is its SQL's first 90 characters). */
const USER_ROW = 'select "id", "created_at", "updated_at", "last_seen"';

async function signIn(email: string): Promise<WireSession> {
  const { response } = await svc.post("/signin/email-password", { email, password: PASSWORD });
  expect(response.status).toBe(200);
  return ((await response.json()) as { session: WireSession }).session;
}

const email = uniqueEmail("waves");
let session: WireSession;

beforeAll(async () => {
  expect((await svc.post("/signup/email-password", { email, password: PASSWORD })).response.status).toBe(200);
  session = await signIn(email);
});

describe("refresh: one wave (the family's object, the session read beside it)", () => {
  it("POST /token rotates in its object while the session and its user are read, side by side", async () => {
    // Threat (of speed, not of security): the session read waiting for the rotation's answer again, a second
    // cross-region trip on the request every signed-in app makes every few minutes.
    for (let i = 0; i < 2; i++) {
      // Still a version-4 UUID's shape (contract §2), its first three hex digits the user's slot: the shard the read
      // goes to, from the token alone (docs/performance.md, "The refresh token's bits").
      expect(session.refreshToken).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
      expect(Number.parseInt(session.refreshToken.slice(0, 3), 16)).toBe(slotOfUser(session.user!.id));
      const { response, waves } = await svc.post("/token", { refreshToken: session.refreshToken });
      expect(response.status).toBe(200);
      expect(waves.sequential, waves.trace).toBe(1);
      expect(waves.perKind).toEqual(["d1-replica 1/1", "do 1/1"]);
      session = (await response.json()) as WireSession;
    }
  });

  it("a warm isolate's refresh reads neither the signing keys nor the slot map (the counts leave those rereads out)", async () => {
    // Threat (of speed): what an isolate keeps read again on every request — a wave more on every path, which the
    // counts here would not show, since they leave out the one request in ten seconds that rereads it.
    const warm = await svc.post("/token", { refreshToken: session.refreshToken });
    expect(warm.response.status).toBe(200);
    session = (await warm.response.json()) as WireSession;
    const { response, waves } = await svc.post("/token", { refreshToken: session.refreshToken });
    expect(response.status).toBe(200);
    session = (await response.json()) as WireSession;
    expect(waves.trace).not.toMatch(/from signing_keys|from service_settings where key in/i);
  });

  it("answers with the family's own session when another session shares its locator", async () => {
    // Threat: the beside read finds every live session of the token's locator (other users' too); answering with
    // any row but the one of the family the object rotated would hand one user's tokens for another's session.
    const mine = await signIn(email);
    const otherEmail = uniqueEmail("waves-other");
    expect(
      (await svc.post("/signup/email-password", { email: otherEmail, password: PASSWORD })).response.status,
    ).toBe(200);
    const theirs = await signIn(otherEmail);
    // Their session's row is given my locator (the other user may live in another shard: then only the fallback
    // below is exercised, which is what a locator from before sharding-by-locator does).
    await userD1(theirs.user!.id)
      .prepare("UPDATE sessions SET locator = ? WHERE id = ?")
      .bind(mine.refreshToken.slice(0, 6), theirs.refreshTokenId)
      .run();
    const refreshed = await svc.post("/token", { refreshToken: mine.refreshToken });
    expect(refreshed.response.status).toBe(200);
    const body = (await refreshed.response.json()) as WireSession;
    expect([body.refreshTokenId, body.user?.id]).toEqual([mine.refreshTokenId, mine.user!.id]);
    // Their token still refreshes their session: its row is not found by its locator any more, so it is read by the
    // family's id after the rotation (two waves), as a session minted before this change is on another shard.
    const theirsRefreshed = await svc.post("/token", { refreshToken: theirs.refreshToken });
    expect(theirsRefreshed.response.status).toBe(200);
    const theirBody = (await theirsRefreshed.response.json()) as WireSession;
    expect([theirBody.refreshTokenId, theirBody.user?.id]).toEqual([theirs.refreshTokenId, theirs.user!.id]);
    expect(theirsRefreshed.waves.sequential, theirsRefreshed.waves.trace).toBe(2);
  });
});

describe("session check: one read, from a replica", () => {
  it("GET /user reads the user once, nearby", async () => {
    const { response, waves } = await svc.get("/user", session.accessToken);
    expect(response.status).toBe(200);
    expect(waves.perKind, waves.trace).toEqual(["d1-replica 1/1"]);
  });
});

describe("OAuth2 code exchange: two waves (the code and its user in one batch; the grant beside its family)", () => {
  it("POST /oauth2/token with a code", async () => {
    // Threat (of speed): the code's take, the user's read, the grant's write and the family's start one after
    // another again (four cross-region trips where two do).
    const setup = provider();
    const client = await newClient(setup);
    const signedUp = await signUp(setup);
    const pkce = { code_challenge: await s256(VERIFIER), code_challenge_method: "S256" };
    const oauth = waveService(PROVIDER_ON);
    // The second exchange is measured: the first also reads the signing keys, once per isolate.
    for (const round of [1, 2]) {
      const { code } = await codeFor(setup, client, signedUp, { scope: "openid offline_access", ...pkce });
      const { response, waves } = await oauth.request("POST", "/oauth2/token", {
        body: form({
          grant_type: "authorization_code",
          code,
          redirect_uri: REDIRECT_URI,
          code_verifier: VERIFIER,
        }),
        headers: { "content-type": "application/x-www-form-urlencoded", ...basic(client) },
      });
      expect(response.status).toBe(200);
      expect((await response.json()) as TokenAnswer).toMatchObject({ refresh_token: expect.any(String) });
      if (round === 2) expect(waves.sequential, waves.trace).toBe(2);
    }
  });
});

describe("the Supabase face's refresh: one wave, as the Nhost face's", () => {
  it("grant_type=refresh_token reads the face's row beside the rotation", async () => {
    const face = waveService({ ...SUPABASE_ON });
    const { response: signedIn } = await face.request("POST", `${FACE}/auth/v1/token?grant_type=password`, {
      json: { email, password: PASSWORD },
      headers: { apikey: PUBLISHABLE_KEY },
    });
    expect(signedIn.status).toBe(200);
    const { refresh_token } = (await signedIn.json()) as { refresh_token: string };
    const { response, waves } = await face.request("POST", `${FACE}/auth/v1/token?grant_type=refresh_token`, {
      json: { refresh_token },
      headers: { apikey: PUBLISHABLE_KEY },
    });
    expect(response.status).toBe(200);
    expect(waves.sequential, waves.trace).toBe(1);
  });
});

describe("sign-in: three trips in line (the account located; its row, its lockout count and its session's reads side by side; the session)", () => {
  const overlap = (a: number[], b: number[]) =>
    a.length === 2 && b.length === 2 && a[0]! < b[1]! && b[0]! < a[1]!;

  it("POST /signin/email-password, two shards: the directory, then the user's row beside the lockout's count and the reads of the second step and the gates", async () => {
    // Threat (of speed): the lockout's count, the second-factor read and the gates' reads one after another again
    // (five trips in line before). Threat (of safety), each pinned below: the count or a read of the account started
    // before the checks before the first factor and the limit (the directory's wave) answered.
    const { response, waves } = await svc.post("/signin/email-password", { email, password: PASSWORD });
    expect(response.status).toBe(200);
    const span = (needle: string) => spanIn(waves.trace, needle);
    expect(overlap(span('"org_domains"'), span('from "directory"')), waves.trace).toBe(true);
    // The directory named the owner: the row, the count (its object is the owner's) and the session's reads together.
    expect(overlap(span(" do take"), span(USER_ROW)), waves.trace).toBe(true);
    expect(overlap(span(" do take"), span('"mfa_factors"')), waves.trace).toBe(true);
    expect(overlap(span(" do take"), span('"user_devices"')), waves.trace).toBe(true);
    expect(span(" do take")[0]! > span('"org_domains"')[1]!, waves.trace).toBe(true);
    // Seven before issue 48, five before this change: the directory; the row ∥ the count ∥ the factors ∥ the devices;
    // the session's batch ∥ its family's start (the count's forgiveness beside, not awaited).
    expect(waves.inLine, waves.trace).toBe(3);
  });

  it("one shard: the user's row beside the checks, then the count beside the session's reads; an unknown email and a wrong password take as many trips", async () => {
    const one = waveService({ ...NO_VERIFICATION, AUTH_D1_SHARDS: "DB" });
    const address = uniqueEmail("waves-one");
    expect(
      (await one.post("/signup/email-password", { email: address, password: PASSWORD })).response.status,
    ).toBe(200);
    const { response, waves } = await one.post("/signin/email-password", {
      email: address,
      password: PASSWORD,
    });
    expect(response.status).toBe(200);
    const span = (needle: string) => spanIn(waves.trace, needle);
    expect(overlap(span('"org_domains"'), span(USER_ROW)), waves.trace).toBe(true);
    expect(overlap(span(" do take"), span('"mfa_factors"')), waves.trace).toBe(true);
    expect(overlap(span(" do take"), span('"user_devices"')), waves.trace).toBe(true);
    // Four before this change: the row; the count; the factors ∥ the devices; the session ∥ its family.
    expect(waves.inLine, waves.trace).toBe(3);
    // Threat: the early reads making an account's existence (or its password's rightness) visible in the trips a
    // sign-in takes: an unknown email and a wrong password take three too (the row; the count; the guess released).
    const wrong = await one.post("/signin/email-password", { email: address, password: `${PASSWORD}-no` });
    const unknown = await one.post("/signin/email-password", {
      email: uniqueEmail("waves-nobody"),
      password: PASSWORD,
    });
    expect([wrong.response.status, unknown.response.status]).toEqual([401, 401]);
    expect(
      [wrong.waves.inLine, unknown.waves.inLine],
      `${wrong.waves.trace}\n\n${unknown.waves.trace}`,
    ).toEqual([3, 3]);
  });

  it("one shard: the factors and the devices are read at the row's bookmark, where a replica near the user may serve them; a factor added just before is seen", async () => {
    // Threat (of speed): trip 2's reads of the account's rows on the primary, the longest call of that trip where the
    // primary is far (the count runs under the hash). Threat (of safety): those reads from an unconstrained replica,
    // which may not have a factor enrolled a moment before: a sign-in that skips its second step. A session from the
    // bookmark of the row's read sees every factor committed before the row was read.
    // Each statement prepared on a session, with the session's constraint.
    const prepared: { constraint: string; sql: string }[] = [];
    const db = env.DB as D1Database;
    const recording = new Proxy(db, {
      get(target, property) {
        if (property === "withSession")
          return (constraint: string) => {
            const session = target.withSession(constraint as D1SessionConstraint);
            return {
              prepare: (sql: string) => {
                prepared.push({ constraint, sql });
                return session.prepare(sql);
              },
              batch: session.batch.bind(session),
              getBookmark: session.getBookmark.bind(session),
            };
          };
        const value = Reflect.get(target, property, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const one = waveService({
      ...NO_VERIFICATION,
      AUTH_D1_SHARDS: "DB",
      AUTH_DEV_SMS: "true",
      DB: recording,
    });
    const address = uniqueEmail("waves-bookmark");
    const signedUp = await one.post("/signup/email-password", { email: address, password: PASSWORD });
    expect(signedUp.response.status).toBe(200);
    const { id } = (await db
      .prepare("SELECT id FROM users WHERE email = ?")
      .bind(address)
      .first<{ id: string }>())!;
    const now = Date.now();
    await db
      .prepare(
        "INSERT INTO mfa_factors (id, user_id, factor_type, status, phone, created_at, updated_at) VALUES (?, ?, 'phone', 'verified', '+15550001234', ?, ?)",
      )
      .bind(crypto.randomUUID(), id, now, now)
      .run();
    prepared.length = 0;
    const { response, waves } = await one.post("/signin/email-password", {
      email: address,
      password: PASSWORD,
    });
    expect(response.status, waves.trace).toBe(200);
    const body = (await response.json()) as { session: unknown; mfa: { ticket: string } | null };
    expect(body.session).toBeNull();
    expect(body.mfa?.ticket).toBeTruthy();
    const sessionOf = (table: string) =>
      prepared.find(({ sql }) => sql.includes(`from "${table}"`))?.constraint;
    expect(sessionOf("users")).toBe("first-primary");
    expect(isBookmark(sessionOf("mfa_factors")), sessionOf("mfa_factors")).toBe(true);
    expect(isBookmark(sessionOf("user_devices")), sessionOf("user_devices")).toBe(true);
    const kindOf = (needle: string) =>
      waves.trace
        .split("\n")
        .find((call) => call.includes(needle))
        ?.split(" ")[1];
    expect([kindOf('"mfa_factors"'), kindOf('"user_devices"')], waves.trace).toEqual([
      "d1-replica",
      "d1-replica",
    ]);
  });

  it("the password's hash runs while the lockout's count is in flight, one shard or two: the sign-in waits for the longer of the two, not both", async () => {
    // Threat (of speed): the hash (tens of milliseconds of CPU) started only once the count answered, so a sign-in
    // waited for a trip to the account's object and then the hash. The count's call is held here until the hash's
    // constant-time comparison of its result (marked in the same order of events) has run, 5 s at most: a fixed hold
    // (25 ms, as the bench's profiles hold it) was outrun by the hash on a busy machine, and a hash that waits for the
    // count would still come after the held call and fail the check below.
    const one = waveService({ ...NO_VERIFICATION, AUTH_D1_SHARDS: "DB" });
    const address = uniqueEmail("waves-beside");
    expect(
      (await one.post("/signup/email-password", { email: address, password: PASSWORD })).response.status,
    ).toBe(200);
    const compared: number[] = [];
    let hashedNow = () => {};
    let hashed = Promise.resolve();
    const timingSafeEqual = crypto.subtle.timingSafeEqual.bind(crypto.subtle);
    const spy = vi.spyOn(crypto.subtle, "timingSafeEqual").mockImplementation((a, b) => {
      compared.push(tick());
      hashedNow();
      return timingSafeEqual(a, b);
    });
    const atMost = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    delayCalls({ durableObject: () => Promise.race([hashed, atMost(5_000)]) });
    try {
      for (const [where, service] of [
        ["one shard", one],
        ["two shards", svc],
      ] as const) {
        compared.length = 0;
        hashed = new Promise<void>((resolve) => {
          hashedNow = resolve;
        });
        const { response, waves } = await service.post("/signin/email-password", {
          email: where === "one shard" ? address : email,
          password: PASSWORD,
        });
        expect(response.status, where).toBe(200);
        const [start, end] = spanIn(waves.trace, " do take");
        expect(
          compared.some((at) => at > start! && at < end!),
          `${where}: the hash compared at ${compared.join(", ")}; the count's call:\n${waves.trace}`,
        ).toBe(true);
      }
    } finally {
      delayCalls({});
      spy.mockRestore();
    }
  });

  it("a locked account's right password makes the same calls as a wrong one: the hash's verdict is looked at only once the count answered", async () => {
    // Threat: with the hash beside the count, a right password acting on its verdict before the count refused it (a
    // session's batch, a rehash, a password kept elsewhere asked): what the lock exists to deny, a way to tell a right
    // password of a locked account by what the server does.
    const one = waveService({ ...NO_VERIFICATION, AUTH_D1_SHARDS: "DB" });
    const address = uniqueEmail("waves-locked");
    expect(
      (await one.post("/signup/email-password", { email: address, password: PASSWORD })).response.status,
    ).toBe(200);
    for (let i = 0; i < 10; i++) {
      const guess = await one.post("/signin/email-password", {
        email: address,
        password: `${PASSWORD}-${i}`,
      });
      expect(guess.response.status).toBe(401);
    }
    const right = await one.post("/signin/email-password", { email: address, password: PASSWORD });
    const wrong = await one.post("/signin/email-password", { email: address, password: `${PASSWORD}-no` });
    expect([right.response.status, wrong.response.status]).toEqual([429, 429]);
    const calls = (trace: string) => trace.split("\n").map((call) => call.replace(/^\[\d+-\d+\] /, ""));
    expect(calls(right.waves.trace)).toEqual(calls(wrong.waves.trace));
    expect(right.waves.trace).not.toMatch(/\binsert into\b|\bupdate "|batch of|do start/);
  });
});

describe("an org switch: one wave wherever the session is (the membership read beside the rotation)", () => {
  const orgOf = (accessToken: string) =>
    decodeJwt(accessToken).payload["https://hasura.io/jwt/claims"] as Record<string, string>;
  /** An owner of an org whose session is in the home database (`onHome`), or one whose session is not. */
  async function ownerWhere(onHome: boolean): Promise<WireSession> {
    for (let i = 0; i < 60; i++) {
      const candidate = await orgUser();
      if ((allD1()[0] === userD1(candidate.user!.id)) === onHome) return candidate;
    }
    throw new Error("no user in that placement");
  }

  it("POST /token {refreshToken, orgId}: the rotation records the switch while the membership is read beside it; the next refresh carries it", async () => {
    // Threat (of speed): the switch's reads and writes one after another again (seven before issue 48, five, three,
    // then two elsewhere). The rotation records the org in the family's object while the membership is read in the
    // same wave: where the session is in the home database (`org_members`' database) by the token's locator;
    // elsewhere the org's members of the token's slot (`org_members_slot`), the user's row picked once the session's
    // row names it (docs/decisions.md, "Issue 48: the org switch in one wave", "… a refresh in an org in one wave").
    for (const onHome of [true, false]) {
      const owner = await ownerWhere(onHome);
      const org = await createOrg(owner);
      const { response, waves } = await svc.post("/token", {
        refreshToken: owner.refreshToken,
        orgId: org.id,
      });
      expect(response.status).toBe(200);
      const switched = (await response.json()) as WireSession;
      expect(orgOf(switched.accessToken)["x-hasura-org-id"]).toBe(org.id);
      expect(waves.sequential, waves.trace).toBe(1);
      expect(waves.perKind, waves.trace).toEqual(["d1-primary 1/1", "d1-replica 1/1", "do 1/1"]);
      // Nothing is written before the answer: the row gets the org after it (the object is what refreshes read).
      expect(waves.trace, waves.trace).not.toMatch(/update "sessions"|raiseBookmark|setOrg/);
      // Out of any org: nothing to read, one wave wherever the session is.
      const out = await svc.post("/token", { refreshToken: switched.refreshToken, orgId: null });
      expect([out.response.status, out.waves.sequential], out.waves.trace).toEqual([200, 1]);
      const back = await svc.post("/token", {
        refreshToken: ((await out.response.json()) as WireSession).refreshToken,
        orgId: org.id,
      });
      expect([back.response.status, back.waves.sequential], back.waves.trace).toEqual([200, 1]);
      // The plain refresh after it carries the switch (it reads the membership again, as every refresh of a session
      // in an org does), beside the rotation: in the home database by the locator's sessions; elsewhere through the
      // hint the switch wrote after its answer (`org_session_hints`; test/orgs/session-org-hints.test.ts).
      const next = await svc.post("/token", {
        refreshToken: ((await back.response.json()) as WireSession).refreshToken,
      });
      expect([next.response.status, next.waves.sequential], next.waves.trace).toEqual([200, 1]);
      expect(orgOf(((await next.response.json()) as WireSession).accessToken)["x-hasura-org-id"]).toBe(
        org.id,
      );
    }
  });

  it("a refused switch: 403 with the token unspent and the org as it was, one wave more to put the rotation back, whoever shares the locator", async () => {
    // Threat: the membership read beside the session (every user with a session of the locator) answering for
    // another user's membership: a user switching into an org only someone sharing their locator belongs to. Threat:
    // a refused switch spending the client's token or moving its session out of its org. Both sessions in the home
    // database, where the membership is read beside the rotation.
    const [mine, theirs] = [await ownerWhere(true), await ownerWhere(true)];
    const [own, org] = [await createOrg(mine), await createOrg(theirs)];
    const inOwn = await svc.post("/token", { refreshToken: mine.refreshToken, orgId: own.id });
    const current = (await inOwn.response.json()) as WireSession;
    await userD1(theirs.user!.id)
      .prepare("UPDATE sessions SET locator = ? WHERE id = ?")
      .bind(current.refreshToken.slice(0, 6), theirs.refreshTokenId)
      .run();
    const refused = await svc.post("/token", { refreshToken: current.refreshToken, orgId: org.id });
    expect(refused.response.status).toBe(403);
    expect(((await refused.response.json()) as { error: string }).error).toBe("not-org-member");
    expect(refused.waves.sequential, refused.waves.trace).toBe(2);
    expect(refused.waves.trace, refused.waves.trace).toMatch(/ do undoSwitch/);
    const again = await svc.post("/token", { refreshToken: current.refreshToken });
    expect(again.response.status).toBe(200);
    expect(orgOf(((await again.response.json()) as WireSession).accessToken)["x-hasura-org-id"]).toBe(own.id);
  });
});

describe("a plain refresh of a session in an org: one wave where the session is in the home database", () => {
  const orgOf = (accessToken: string) =>
    decodeJwt(accessToken).payload["https://hasura.io/jwt/claims"] as Record<string, string | undefined>;
  /** The version digit of a refresh token: `8` when it was minted for a session in an org. */
  const versionOf = (refreshToken: string) => refreshToken[14];
  async function ownerOnHome(): Promise<WireSession> {
    for (let i = 0; i < 60; i++) {
      const candidate = await orgUser();
      if (allD1()[0] === userD1(candidate.user!.id)) return candidate;
    }
    throw new Error("no user on home");
  }
  const refresh = async (refreshToken: string) => {
    const { response, waves } = await svc.post("/token", { refreshToken });
    expect(response.status, waves.trace).toBe(200);
    return { session: (await response.json()) as WireSession, waves };
  };

  it("POST /token {refreshToken} reads every membership of the locator's users beside the rotation; a removed member's token comes back without the org in the same request", async () => {
    // Threat (of speed): a session in an org paying a second wave on every refresh, the membership read only once
    // the rotation named the org. Threat: the membership read beside answering from anything but the primary of the
    // home database in this request (a removed member must lose the org at once).
    const owner = await ownerOnHome();
    const org = await createOrg(owner);
    expect(versionOf(owner.refreshToken)).toBe("4");
    let session = (await svc.post("/token", { refreshToken: owner.refreshToken, orgId: org.id })).response;
    let current = (await session.json()) as WireSession;
    // The successor says its session acts in an org; its plain refreshes carry that on.
    expect(versionOf(current.refreshToken)).toBe("8");
    for (let i = 0; i < 2; i++) {
      const { session: next, waves } = await refresh(current.refreshToken);
      expect(waves.sequential, waves.trace).toBe(1);
      expect(waves.perKind).toEqual(["d1-primary 1/1", "d1-replica 1/1", "do 1/1"]);
      expect(orgOf(next.accessToken)["x-hasura-org-id"]).toBe(org.id);
      expect(versionOf(next.refreshToken)).toBe("8");
      current = next;
    }
    await allD1()[0]!
      .prepare("DELETE FROM org_members WHERE org_id = ? AND user_id = ?")
      .bind(org.id, owner.user!.id)
      .run();
    const { session: removed, waves } = await refresh(current.refreshToken);
    expect(waves.sequential, waves.trace).toBe(1);
    expect(orgOf(removed.accessToken)["x-hasura-org-id"]).toBeUndefined();
    expect(decodeJwt(removed.accessToken).payload.org_id).toBeUndefined();
    // A switch out of any org: the successor carries no hint, and its refreshes read nothing more than any.
    session = (await svc.post("/token", { refreshToken: removed.refreshToken, orgId: null })).response;
    current = (await session.json()) as WireSession;
    expect(versionOf(current.refreshToken)).toBe("4");
    const plain = await refresh(current.refreshToken);
    expect(plain.waves.perKind).toEqual(["d1-replica 1/1", "do 1/1"]);
  });

  it("the membership picked is the session's user's, whoever else shares the locator", async () => {
    // Threat: the read beside finds the memberships of every user with a session of the locator; a removed member
    // keeping the org because another user sharing the locator is a member of it.
    const [mine, theirs] = [await ownerOnHome(), await ownerOnHome()];
    const org = await createOrg(mine);
    await addOrgMember(org, theirs as never, "member");
    const switched = (await svc.post("/token", { refreshToken: mine.refreshToken, orgId: org.id })).response;
    const current = (await switched.json()) as WireSession;
    await userD1(theirs.user!.id)
      .prepare("UPDATE sessions SET locator = ?, org_id = ? WHERE id = ?")
      .bind(current.refreshToken.slice(0, 6), org.id, theirs.refreshTokenId)
      .run();
    await allD1()[0]!
      .prepare("DELETE FROM org_members WHERE org_id = ? AND user_id = ?")
      .bind(org.id, mine.user!.id)
      .run();
    const { session, waves } = await refresh(current.refreshToken);
    expect(waves.sequential, waves.trace).toBe(1);
    expect(session.user!.id).toBe(mine.user!.id);
    expect(orgOf(session.accessToken)["x-hasura-org-id"]).toBeUndefined();
  });

  it("a user in more orgs than the read beside takes: the org wanted is read after, never taken for none", async () => {
    // Threat: the bounded read of every membership (32 rows) taken as complete, and a member of many orgs losing the
    // org their session acts in. The session's row names another org than the object's (the row follows after the
    // answer, so they can differ for a moment): only the bounded part could have it.
    const owner = await ownerOnHome();
    for (let i = 0; i < ORGS_BESIDE; i++) await createOrg(owner);
    const org = await createOrg(owner);
    const switched = (await svc.post("/token", { refreshToken: owner.refreshToken, orgId: org.id })).response;
    const current = (await switched.json()) as WireSession;
    await userD1(owner.user!.id)
      .prepare("UPDATE sessions SET org_id = NULL WHERE id = ?")
      .bind(owner.refreshTokenId)
      .run();
    const { session, waves } = await refresh(current.refreshToken);
    expect(orgOf(session.accessToken)["x-hasura-org-id"]).toBe(org.id);
    // The last org joined is beyond the first 32 of the user's memberships: read after the rotation.
    expect(waves.sequential, waves.trace).toBe(2);
  });

  it("a token minted without the hint whose session is in an org still refreshes into it, in two waves as before", async () => {
    // Threat: sessions switched into an org before the hint existed losing their org (or their session) when their
    // token says nothing. Their row's org (the object never recorded one) is found after the rotation.
    const owner = await ownerOnHome();
    const org = await createOrg(owner);
    await userD1(owner.user!.id)
      .prepare("UPDATE sessions SET org_id = ? WHERE id = ?")
      .bind(org.id, owner.refreshTokenId)
      .run();
    const { session, waves } = await refresh(owner.refreshToken);
    expect(waves.sequential, waves.trace).toBe(2);
    expect(orgOf(session.accessToken)["x-hasura-org-id"]).toBe(org.id);
    expect(versionOf(session.refreshToken)).toBe("4");
  });

  it("the hint cannot be forged: a token with its version digit changed is unknown (401), and spends nothing", async () => {
    // Threat: a client flipping the hint to make a refresh read memberships it should not, or to pass its token
    // for another: the digit is part of the hashed token, so a changed one names no token of its family.
    const owner = await ownerOnHome();
    const org = await createOrg(owner);
    const forge = (token: string, digit: string) => `${token.slice(0, 14)}${digit}${token.slice(15)}`;
    const flipped = await svc.post("/token", { refreshToken: forge(owner.refreshToken, "8") });
    expect(flipped.response.status).toBe(401);
    expect(((await flipped.response.json()) as { error: string }).error).toBe("invalid-refresh-token");
    const switched = (await refresh(owner.refreshToken)).session;
    const inOrg = (await svc.post("/token", { refreshToken: switched.refreshToken, orgId: org.id })).response;
    const current = (await inOrg.json()) as WireSession;
    const unflagged = await svc.post("/token", { refreshToken: forge(current.refreshToken, "4") });
    expect(unflagged.response.status).toBe(401);
    expect(((await unflagged.response.json()) as { error: string }).error).toBe("invalid-refresh-token");
    // The real token was not spent by either.
    expect(orgOf((await refresh(current.refreshToken)).session.accessToken)["x-hasura-org-id"]).toBe(org.id);
  });
});

describe("sign-in: the account's rate limit counted beside the reads, awaited before anything is written", () => {
  // Every address limit allows (the Rate Limiting bindings are the platform's); the account's exact count allows one
  // sign-in per email in the window.
  const limited = waveService({
    ...NO_VERIFICATION,
    AUTH_RATE_LIMIT_ENABLE: "true",
    AUTH_RATE_LIMIT_BRUTE_FORCE_BURST: "1",
    ...ADDRESS_LIMITS_ALLOW,
  });

  it("POST /signin/email-password: the count adds no wave; over the limit, 429 with no lockout count and no write", async () => {
    // A first sign-in of another account also reads the signing keys (once per isolate and configuration).
    expect(
      (await limited.post("/signin/email-password", { email, password: PASSWORD })).response.status,
    ).toBe(200);
    const who = uniqueEmail("waves-limit");
    expect(
      (await svc.post("/signup/email-password", { email: who, password: PASSWORD })).response.status,
    ).toBe(200);
    const first = await limited.post("/signin/email-password", { email: who, password: PASSWORD });
    expect(first.response.status).toBe(200);
    const calls = first.waves.trace.split("\n");
    const hit = calls.find((call) => call.includes(" do hit"));
    const read = calls.find((call) => call.includes('"org_domains"'));
    const span = (call = "") => (/\[(\d+)-(\d+)\]/.exec(call) ?? []).slice(1).map(Number);
    const [hitStart, hitEnd] = span(hit);
    const [readStart, readEnd] = span(read);
    expect(hitStart! < readEnd! && readStart! < hitEnd!, first.waves.trace).toBe(true);
    // No more trips than without the limit (the tests above): the count rode beside the first reads, and the
    // lockout's count waited for it (after the first wave, never beside the limit's count).
    expect(first.waves.inLine, first.waves.trace).toBe(3);
    expect(span(calls.find((call) => call.includes(" do take")))[0]! > hitEnd!, first.waves.trace).toBe(true);
    // Threat: the count beside the reads letting a refused attempt reach the password or write anything (a lockout
    // count, a session): over the limit the answer is 429 and nothing but reads ran.
    const second = await limited.post("/signin/email-password", { email: who, password: PASSWORD });
    expect(second.response.status).toBe(429);
    const after = second.waves.trace.split("\n");
    expect(
      after.some((call) => / do (take|start)|insert|update|batch/.test(call)),
      second.waves.trace,
    ).toBe(false);
  });
});

describe("the Supabase face's password grant: the same core, its account limit beside the first reads too", () => {
  it("grant_type=password takes the Nhost face's three trips with the limit on; over it, 429 with no write", async () => {
    // Threat (of speed): the face counting the account's limit before its handler again (five trips before). Threat
    // (of safety): the count beside the reads letting a refused grant reach the lockout, the password or a write.
    const face = waveService({
      ...SUPABASE_ON,
      AUTH_RATE_LIMIT_ENABLE: "true",
      AUTH_RATE_LIMIT_BRUTE_FORCE_BURST: "1",
      ...ADDRESS_LIMITS_ALLOW,
    });
    const [warm, who] = [uniqueEmail("waves-face-warm"), uniqueEmail("waves-face-limit")];
    for (const address of [warm, who])
      expect(
        (await svc.post("/signup/email-password", { email: address, password: PASSWORD })).response.status,
      ).toBe(200);
    const grant = (address: string) =>
      face.request("POST", `${FACE}/auth/v1/token?grant_type=password`, {
        json: { email: address, password: PASSWORD },
        headers: { apikey: PUBLISHABLE_KEY },
      });
    // A first grant of another account also reads the signing keys (once per isolate and configuration).
    expect((await grant(warm)).response.status).toBe(200);
    const first = await grant(who);
    expect(first.response.status).toBe(200);
    const span = (needle: string) => spanIn(first.waves.trace, needle);
    const [hitStart, hitEnd] = span(" do hit");
    const [readStart, readEnd] = span('"org_domains"');
    expect(hitStart! < readEnd! && readStart! < hitEnd!, first.waves.trace).toBe(true);
    expect(span(" do take")[0]! > hitEnd!, first.waves.trace).toBe(true);
    expect(first.waves.inLine, first.waves.trace).toBe(3);
    const second = await grant(who);
    expect(second.response.status).toBe(429);
    expect(
      second.waves.trace.split("\n").some((call) => / do (take|start)|insert|update|batch/.test(call)),
      second.waves.trace,
    ).toBe(false);
  });

  it("grant_type=password with a phone number: the email's three trips, one database or two shards; the account's limit counts the number, however written", async () => {
    // Threat (of speed): a sign-in by number locating its account only after the limit, and reading its factors only
    // after the password (five trips in line before). Threat (of safety): the grant's per-account limit keyed by the
    // email alone, so a number's password could be tried from many addresses with only the lockout counting; or
    // keyed by the number as written, so `1415…` and `+1415…` each bought a fresh window.
    for (const layout of [{ AUTH_D1_SHARDS: "DB" }, {}]) {
      const face = waveService({
        ...SUPABASE_ON,
        ...layout,
        AUTH_SMS_PASSWORDLESS_ENABLED: "true",
        AUTH_DEV_SMS: "true",
        AUTH_RATE_LIMIT_ENABLE: "true",
        AUTH_RATE_LIMIT_BRUTE_FORCE_BURST: "3",
        ...ADDRESS_LIMITS_ALLOW,
      });
      const phone = uniquePhone().slice(1);
      const call = (path: string, json: unknown) =>
        face.request("POST", `${FACE}/auth/v1${path}`, { json, headers: { apikey: PUBLISHABLE_KEY } });
      expect((await call("/signup", { phone, password: PASSWORD })).response.status).toBe(200);
      const texted = (await (
        await face.request("GET", `/dev/sms?to=${encodeURIComponent(`+${phone}`)}`)
      ).response.json()) as { body: string }[];
      const token = /\b(\d{6})\b/.exec(texted[0]!.body)![1];
      expect((await call("/verify", { type: "sms", phone, token })).response.status).toBe(200);
      const { response, waves } = await call("/token?grant_type=password", { phone, password: PASSWORD });
      expect(response.status, waves.trace).toBe(200);
      expect(overlapping(waves.trace, " do take", '"mfa_factors"'), waves.trace).toBe(true);
      expect(waves.inLine, `${JSON.stringify(layout)}\n${waves.trace}`).toBe(3);
      const statuses: number[] = [];
      for (const written of [`+${phone}`, phone, `+${phone}`, phone]) {
        const again = await call("/token?grant_type=password", { phone: written, password: PASSWORD });
        statuses.push(again.response.status);
        if (again.response.status !== 429) continue;
        expect(
          again.waves.trace
            .split("\n")
            .some((line) => / do (take|start)|\binsert into\b|\bupdate "|batch of/.test(line)),
          again.waves.trace,
        ).toBe(false);
        break;
      }
      expect(statuses).toContain(429);
    }
  });
});

describe("sign-in from a public address: the risk velocity counted beside the lockout's count, taken back for a wrong password", () => {
  it("three trips in line with the velocity's count; a wrong password's count is taken back, a right one's stays", async () => {
    // Threat (of speed): the velocity's count (after the first factor, before the session) a trip of its own again,
    // on every production sign-in (four in line). Threat (of the signal): counting early leaving the count below the
    // sign-ins that got past their first factor, or a wrong guess counted as one (taken back after the answer).
    const limited = waveService({
      ...NO_VERIFICATION,
      AUTH_RATE_LIMIT_ENABLE: "true",
      ...ADDRESS_LIMITS_ALLOW,
    });
    const who = uniqueEmail("waves-velocity");
    expect(
      (await svc.post("/signup/email-password", { email: who, password: PASSWORD })).response.status,
    ).toBe(200);
    // An address of its own (TEST-NET-3 is not one this code treats as private), so its counter is this test's.
    const address = `203.0.113.${1 + Math.floor(Math.random() * 254)}`;
    const counter = env.RATE_LIMITERS.get(env.RATE_LIMITERS.idFromName(`RISK:ip:${address}`));
    const counted = () =>
      runInDurableObject(
        counter,
        (_object, state) => state.storage.kv.get<{ current: number }>("windows")?.current ?? 0,
      );
    const signIn = (password: string) =>
      limited.request("POST", "/signin/email-password", {
        json: { email: who, password },
        headers: { "cf-connecting-ip": address },
      });
    // A first sign-in of this configuration also reads the signing keys (once per isolate and configuration).
    expect(
      (await limited.post("/signin/email-password", { email, password: PASSWORD })).response.status,
    ).toBe(200);
    const right = await signIn(PASSWORD);
    expect(right.response.status).toBe(200);
    const span = (needle: string) => spanIn(right.waves.trace, needle);
    const calls = right.waves.trace.split("\n");
    const hits = calls.filter((call) => call.endsWith(" do hit"));
    const take = span(" do take");
    // The account limit's count (first trip) and the velocity's (beside the lockout's count).
    expect(hits.length, right.waves.trace).toBe(2);
    const velocity = (/\[(\d+)-(\d+)\]/.exec(hits[1]!) ?? []).slice(1).map(Number);
    expect(velocity[0]! < take[1]! && take[0]! < velocity[1]!, right.waves.trace).toBe(true);
    expect(right.waves.inLine, right.waves.trace).toBe(3);
    expect(await counted()).toBe(1);
    const wrong = await signIn(`${PASSWORD}-no`);
    expect(wrong.response.status).toBe(401);
    expect(await counted()).toBe(1);
  });
});
