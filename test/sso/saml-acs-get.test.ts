import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { decodeJwt, sessionFromRefresh } from "../helpers";
import { location, openIn, type SamlOrg, samlOrg, samlService, startSignIn } from "./saml-support/connection";
import { signedResponse, toBase64 } from "./saml-support/idp";

// The SAML ACS's GET in three trips (issue 48, "Round trips"; the waves are pinned in ./saml-acs-waves.test.ts): with
// one shard the result's take also answers the asserted email's user, so that the user's row, the org's verified
// domains, the membership, the second factors and the risk gate's reads run side by side, and the membership is
// written beside the session. What must not change with it: every refusal still refuses with nothing written, and
// the membership and the session's org are the IdP's. One shard throughout: the take's hint is that path's.

const ONE_SHARD = { AUTH_D1_SHARDS: "DB" };
const svc = samlService(ONE_SHARD);
const refusing = samlService({ ...ONE_SHARD, AUTH_RISK_POLICY: "low=refuse,medium=refuse,high=refuse" });
const db = env.DB as D1Database;

/** A sign-in of `email` started in a fresh browser, answered by the IdP asserting `nameId`, posted: the GET to open. */
async function bounced(org: SamlOrg, email: string, nameId = email, groups?: string[]) {
  const started = await startSignIn(svc, email);
  const xml = await signedResponse({
    spEntityId: org.spEntityId,
    acsUrl: org.acsUrl,
    nameId,
    inResponseTo: started.requestId,
    ...(groups ? { attributes: { groups } } : {}),
  });
  const posted = await svc.request("POST", org.acsUrl, {
    body: new URLSearchParams({ SAMLResponse: toBase64(xml) }).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
  return { back: location(posted).toString(), cookie: started.cookie };
}

/** Where the GET lands: `refreshToken`, `mfaTicket` or `error` in its query. */
async function finish(bounce: { back: string; cookie: string }, through = svc) {
  return location(await openIn(through, bounce.back, bounce.cookie)).searchParams;
}

const signIn = async (org: SamlOrg, email: string, groups?: string[]) =>
  finish(await bounced(org, email, email, groups));

const userIdOf = async (email: string) =>
  (await db.prepare("SELECT id FROM users WHERE email = ?").bind(email).first<{ id: string }>())?.id;
const sessionsOf = async (userId: string) =>
  (await db
    .prepare("SELECT count(*) AS n FROM sessions WHERE user_id = ?")
    .bind(userId)
    .first<{ n: number }>())!.n;
const memberOf = (orgId: string, userId: string) =>
  db
    .prepare("SELECT role, source, active, updated_at FROM org_members WHERE org_id = ? AND user_id = ?")
    .bind(orgId, userId)
    .first<{ role: string; source: string; active: number; updated_at: number }>();
const run = (sql: string, ...values: unknown[]) =>
  db
    .prepare(sql)
    .bind(...values)
    .run();

/** A member made just in time by a first sign-in: their id. */
async function member(org: SamlOrg, name: string) {
  const email = `${name}-${crypto.randomUUID().slice(0, 6)}@${org.domain}`;
  expect((await signIn(org, email)).get("refreshToken")).toBeTruthy();
  return { email, userId: (await userIdOf(email))! };
}

describe("the SAML ACS's GET: every refusal still refuses, with nothing written", () => {
  it("an email outside the org's verified domains: an account of another org (its id answered by the take) and a new address", async () => {
    // Threat: the take's hint reading the asserted user before the domain check letting another org's IdP link,
    // prove, update or sign in an account it does not own (the "nOAuth" takeover), or make one.
    const [mine, theirs] = [await samlOrg(), await samlOrg()];
    const victim = await member(theirs, "kim");
    // An account whose address was never proven: the first proof would wipe its password (pre-hijacking defence).
    await run("UPDATE users SET email_verified = 0, password_hash = 'kept' WHERE id = ?", victim.userId);
    const before = await db.prepare("SELECT * FROM users WHERE id = ?").bind(victim.userId).first();
    const refused = await finish(await bounced(mine, `a@${mine.domain}`, victim.email));
    expect(refused.get("error")).toBe("sso-email-outside-domains");
    expect(await db.prepare("SELECT * FROM users WHERE id = ?").bind(victim.userId).first()).toEqual(before);
    expect(await memberOf(mine.orgId, victim.userId)).toBeNull();
    expect(await sessionsOf(victim.userId)).toBe(1);
    const stranger = `nobody-${crypto.randomUUID().slice(0, 6)}@elsewhere.test`;
    expect((await finish(await bounced(mine, `b@${mine.domain}`, stranger))).get("error")).toBe(
      "sso-email-outside-domains",
    );
    expect(await userIdOf(stranger)).toBeUndefined();
  });

  it("a disabled user, a suspended membership: refused before the membership's write and the session", async () => {
    // Threat: the membership's write, now beside the session, running for a sign-in that is refused; or a refusal
    // decided after the session was written.
    const org = await samlOrg();
    const { email, userId } = await member(org, "dana");
    const kept = await memberOf(org.orgId, userId);
    await run("UPDATE users SET disabled = 1 WHERE id = ?", userId);
    expect((await signIn(org, email)).get("error")).toBe("disabled-user");
    await run("UPDATE users SET disabled = 0 WHERE id = ?", userId);
    await run("UPDATE org_members SET active = 0 WHERE org_id = ? AND user_id = ?", org.orgId, userId);
    const suspended = await signIn(org, email);
    expect([suspended.get("error"), suspended.get("errorDescription")]).toEqual([
      "forbidden",
      "your membership of this organization is suspended",
    ]);
    expect(await memberOf(org.orgId, userId)).toEqual({ ...kept, active: 0 });
    expect(await sessionsOf(userId)).toBe(1);
  });

  it("a result taken twice at once signs in once; an expired one signs in no one", async () => {
    // Threat: the one-time result used twice (two tabs, a replayed URL) now that more runs after the take.
    const org = await samlOrg();
    const { email, userId } = await member(org, "eve");
    const twice = await bounced(org, email);
    const both = await Promise.all([finish(twice), finish(twice)]);
    expect(both.map((query) => (query.get("refreshToken") ? "session" : query.get("error"))).sort()).toEqual([
      "invalid-state",
      "session",
    ]);
    const late = await bounced(org, email);
    await run(
      "UPDATE sso_requests SET expires_at = 1 WHERE connection_id = ? AND result_hash IS NOT NULL",
      org.connectionId,
    );
    expect((await finish(late)).get("error")).toBe("invalid-state");
    expect(await sessionsOf(userId)).toBe(2);
  });

  it("a connection disabled between the POST and the GET: no user made, no membership", async () => {
    // Threat: a connection an owner has just disabled still signing people in (it is read from the primary).
    const org = await samlOrg();
    const email = `finn-${crypto.randomUUID().slice(0, 6)}@${org.domain}`;
    const bounce = await bounced(org, email);
    await run("UPDATE sso_connections SET enabled = 0 WHERE id = ?", org.connectionId);
    expect((await finish(bounce)).get("error")).toBe("sso-connection-not-found");
    expect(await userIdOf(email)).toBeUndefined();
  });

  it("a user with a second factor gets its ticket, and the risk gate's refusal refuses: no session either way", async () => {
    // Threat: the factors and the gate's device read early, beside the user's row, deciding on rows of another
    // account or not at all: a session without the second factor, or past the gate.
    const org = await samlOrg();
    const { email, userId } = await member(org, "gus");
    await run("UPDATE users SET active_mfa_type = 'totp', totp_secret = 'sealed' WHERE id = ?", userId);
    const ticketed = await signIn(org, email);
    expect([ticketed.get("refreshToken"), ticketed.get("mfaTicket")]).toEqual([
      null,
      expect.stringMatching(/^mfaTotp:/),
    ]);
    await run("UPDATE users SET active_mfa_type = NULL, totp_secret = NULL WHERE id = ?", userId);
    expect((await finish(await bounced(org, email), refusing)).get("error")).toBe("risk-refused");
    expect(await sessionsOf(userId)).toBe(1);
  });
});

describe("the SAML ACS's GET: the membership and the session's org", () => {
  it("writes the role the IdP's groups map to, follows it on the connection's memberships only, and opens the session in that org", async () => {
    // Threat: the session's org or role taken from anything but the membership the sign-in keeps (now that the
    // membership is written beside the session, not read back before it); an invitation's role overwritten.
    const org = await samlOrg();
    await run(
      `UPDATE sso_connections SET role_mapping = '{"it-admins":"admin"}' WHERE id = ?`,
      org.connectionId,
    );
    const email = `hana-${crypto.randomUUID().slice(0, 6)}@${org.domain}`;
    const orgOf = async (query: URLSearchParams) => {
      const session = await sessionFromRefresh(svc, query.get("refreshToken")!);
      const claims = decodeJwt(session.accessToken).payload["https://hasura.io/jwt/claims"] as Record<
        string,
        string
      >;
      const row = await db
        .prepare("SELECT org_id FROM sessions WHERE id = ?")
        .bind(session.refreshTokenId)
        .first<{ org_id: string }>();
      return [row?.org_id, claims["x-hasura-org-id"], claims["x-hasura-org-role"]];
    };
    expect(await orgOf(await signIn(org, email, ["it-admins"]))).toEqual([org.orgId, org.orgId, "admin"]);
    const userId = (await userIdOf(email))!;
    expect(await memberOf(org.orgId, userId)).toMatchObject({ role: "admin", source: "jit", active: 1 });
    // The IdP no longer says so: the connection's membership follows.
    expect(await orgOf(await signIn(org, email))).toEqual([org.orgId, org.orgId, "member"]);
    expect(await memberOf(org.orgId, userId)).toMatchObject({ role: "member", source: "jit" });
    // A membership an invitation made keeps its own role, whatever the IdP says.
    await run(
      "UPDATE org_members SET source = 'invitation', role = 'admin' WHERE org_id = ? AND user_id = ?",
      org.orgId,
      userId,
    );
    expect(await orgOf(await signIn(org, email))).toEqual([org.orgId, org.orgId, "admin"]);
    expect(await memberOf(org.orgId, userId)).toMatchObject({ role: "admin", source: "invitation" });
  });
});

describe("the SAML ACS's GET: the membership's write failing", () => {
  it("answers 503 and ends the session started beside it", async () => {
    // Threat: a session answered, or left refreshable in the user's list, whose membership was never written, now
    // that the write runs beside the session's start instead of before it.
    const org = await samlOrg();
    const { email, userId } = await member(org, "ivan");
    const fail = () => Promise.reject(new Error("D1_ERROR: Network connection lost."));
    const broken: object = { bind: () => broken, raw: fail, all: fail, first: fail, run: fail };
    const failing = samlService({
      ...ONE_SHARD,
      DB: new Proxy(db, {
        get(target, property) {
          if (property === "prepare")
            return (sql: string) => (/^insert into "org_members"/.test(sql) ? broken : target.prepare(sql));
          const value = Reflect.get(target, property);
          return typeof value === "function" ? value.bind(target) : value;
        },
      }),
    });
    const bounce = await bounced(org, email);
    const answer = await openIn(failing, bounce.back, bounce.cookie);
    expect(answer.status, await answer.clone().text()).toBe(503);
    expect(answer.headers.get("retry-after")).toBeTruthy();
    expect(await sessionsOf(userId)).toBe(1);
  });
});
