// The user's session list (contract auth.md §13): GET /user/sessions, DELETE /user/sessions/{id},
// DELETE /user/sessions?others=true. Threats: a person cannot see that someone else signed in as them, or cannot end
// that session before its refresh token lives out its month; a revoked session keeps refreshing (revocation that is
// not immediate); one user lists, ends or learns of another user's sessions by id.
import { describe, expect, it } from "vitest";
import {
  expectError,
  NO_VERIFICATION,
  PASSWORD,
  service,
  sessionFromRefresh,
  signUp,
  uniqueAddress,
  uniqueEmail,
  type WireSession,
} from "../../helpers";
import { userD1 } from "../../support/shards";

const svc = service(NO_VERIFICATION);

interface ListedSession {
  id: string;
  current: boolean;
  createdAt: string;
  lastUsedAt: string;
  expiresAt: string;
  userAgent: string | null;
  ip: string | null;
  place: string | null;
  method: string | null;
}

async function signIn(
  email: string,
  from: { userAgent?: string; address?: string; cf?: Record<string, string> } = {},
): Promise<WireSession> {
  const headers: Record<string, string> = {};
  if (from.userAgent) headers["user-agent"] = from.userAgent;
  if (from.address) headers["cf-connecting-ip"] = from.address;
  const response = await svc.request("POST", "/signin/email-password", {
    json: { email, password: PASSWORD },
    headers,
    cf: from.cf,
  });
  const body = (await response.json()) as { session: WireSession };
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body.session;
}

async function listOf(accessToken: string): Promise<ListedSession[]> {
  const response = await svc.get("/user/sessions", accessToken);
  expect(response.status).toBe(200);
  return ((await response.json()) as { items: ListedSession[] }).items;
}

const revoke = (id: string, accessToken: string) =>
  svc.request("DELETE", `/user/sessions/${encodeURIComponent(id)}`, { token: accessToken });

const refreshFails = async (refreshToken: string) =>
  expectError(await svc.post("/token", { refreshToken }), 401, "invalid-refresh-token");

describe("GET /user/sessions", () => {
  it("lists the user's sessions newest first: where and how each began, and which one is asking", async () => {
    const email = uniqueEmail();
    const first = await signUp(svc, email);
    const address = uniqueAddress();
    const second = await signIn(email, {
      userAgent: "Mozilla/5.0 (Macintosh) Firefox/130.0",
      address,
      cf: { city: "Lyon", region: "Auvergne-Rhône-Alpes", country: "FR" },
    });
    const items = await listOf(second.accessToken);
    expect(items.map((item) => item.id)).toEqual([second.refreshTokenId, first.refreshTokenId]);
    expect(items[0]).toMatchObject({
      current: true,
      userAgent: "Mozilla/5.0 (Macintosh) Firefox/130.0",
      ip: address,
      place: "Lyon, Auvergne-Rhône-Alpes, FR",
      method: "email-password",
    });
    // The sign-up's request carried no address, agent or `cf`: what is not known is null, not made up.
    expect(items[1]).toMatchObject({ current: false, ip: null, place: null, userAgent: null });
    expect(items[1]!.method).toBe("email-password");
    expect(Date.parse(items[0]!.createdAt)).toBeGreaterThanOrEqual(Date.parse(items[1]!.createdAt));
    expect(Date.parse(items[0]!.expiresAt)).toBeGreaterThan(Date.now());

    // The access token of the first session sees the same list, itself as current.
    expect((await listOf(first.accessToken)).map((item) => item.current)).toEqual([false, true]);
    // A refresh keeps the session (its id is the token family's): still current, not a new entry.
    const renewed = await sessionFromRefresh(svc, second.refreshToken);
    const afterRefresh = await listOf(renewed.accessToken);
    expect(afterRefresh).toHaveLength(2);
    expect(afterRefresh.find((item) => item.current)?.id).toBe(second.refreshTokenId);
  });

  // Issue 42: under `npm start` every session showed wrangler's placeholder city (miniflare's fallback `request.cf`,
  // the same for every request) beside a loopback address. A place made up is worse than none: a user reading the list
  // to find a session that is not theirs is told where it is.
  it("no place for a loopback or private address, whatever request.cf says; a public one keeps its place", async () => {
    const email = uniqueEmail();
    const owner = await signUp(svc, email);
    const austin = { city: "Austin", region: "Texas", country: "US" };
    const local: string[] = [];
    for (const address of [
      "127.0.0.1",
      "::1",
      "192.168.1.20",
      "10.0.0.7",
      "::ffff:127.0.0.1",
      "fd12:3456::1",
    ])
      local.push((await signIn(email, { address, cf: austin })).refreshTokenId);
    const publicAddress = uniqueAddress();
    const placed = await signIn(email, { address: publicAddress, cf: austin });
    const items = await listOf(owner.accessToken);
    for (const id of local) expect(items.find((item) => item.id === id)).toMatchObject({ place: null });
    expect(items.find((item) => item.id === local[0])?.ip).toBe("127.0.0.1");
    expect(items.find((item) => item.id === placed.refreshTokenId)).toMatchObject({
      ip: publicAddress,
      place: "Austin, Texas, US",
    });
  });

  it("leaves out expired sessions and shows sessions from before with what is known (nulls)", async () => {
    const email = uniqueEmail();
    const kept = await signUp(svc, email);
    const old = await signIn(email, { userAgent: "Old Browser", address: uniqueAddress() });
    const expired = await signIn(email);
    const d1 = userD1(kept.user.id);
    // A session from before this list (or from an import): no address, place, method or agent recorded.
    await d1
      .prepare("UPDATE sessions SET ip = NULL, place = NULL, method = NULL, user_agent = NULL WHERE id = ?")
      .bind(old.refreshTokenId)
      .run();
    await d1
      .prepare("UPDATE sessions SET expires_at = ? WHERE id = ?")
      .bind(Date.now() - 1000, expired.refreshTokenId)
      .run();
    const items = await listOf(kept.accessToken);
    expect(items.map((item) => item.id).sort()).toEqual([kept.refreshTokenId, old.refreshTokenId].sort());
    expect(items.find((item) => item.id === old.refreshTokenId)).toMatchObject({
      current: false,
      userAgent: null,
      ip: null,
      place: null,
      method: null,
    });
  });

  it("marks a PAT's session as current for the token it gave, with method pat", async () => {
    const owner = await signUp(svc);
    const pat = (await (
      await svc.post(
        "/pat",
        { expiresAt: new Date(Date.now() + 86_400_000).toISOString() },
        owner.accessToken,
      )
    ).json()) as { personalAccessToken: string };
    const viaPat = (await (
      await svc.post("/signin/pat", { personalAccessToken: pat.personalAccessToken })
    ).json()) as { session: WireSession };
    const items = await listOf(viaPat.session.accessToken);
    expect(items.find((item) => item.current)).toMatchObject({
      id: viaPat.session.refreshTokenId,
      method: "pat",
    });
  });

  it("needs the user's access token: 401 without one or with a bad one", async () => {
    await expectError(await svc.get("/user/sessions"), 401, "unauthorized");
    await expectError(await svc.get("/user/sessions", "not-a-token"), 401, "unauthorized");
  });
});

describe("DELETE /user/sessions/{id}", () => {
  it("ends the other session at once: its refresh fails with 401 and it leaves the list", async () => {
    const email = uniqueEmail();
    const other = await signUp(svc, email);
    const mine = await signIn(email);
    const ended = await revoke(other.refreshTokenId, mine.accessToken);
    expect(ended.status).toBe(204);
    expect(await ended.text()).toBe("");
    await refreshFails(other.refreshToken);
    expect((await listOf(mine.accessToken)).map((item) => item.id)).toEqual([mine.refreshTokenId]);
    // The caller's own session is untouched.
    expect((await svc.post("/token", { refreshToken: mine.refreshToken })).status).toBe(200);
    // Ended twice: the second time it is unknown.
    await expectError(await revoke(other.refreshTokenId, mine.accessToken), 404, "not-found");
  });

  it("answers 404 for another user's session and for an unknown id, the same way, and ends nothing", async () => {
    const victim = await signUp(svc);
    const attacker = await signUp(svc);
    const foreign = await expectError(
      await revoke(victim.refreshTokenId, attacker.accessToken),
      404,
      "not-found",
    );
    const unknown = await expectError(
      await revoke(crypto.randomUUID(), attacker.accessToken),
      404,
      "not-found",
    );
    expect(foreign.message).toBe(unknown.message);
    await expectError(await revoke("x".repeat(500), attacker.accessToken), 404, "not-found");
    // The victim's session still refreshes, and the attacker's list never shows it.
    expect((await svc.post("/token", { refreshToken: victim.refreshToken })).status).toBe(200);
    expect((await listOf(attacker.accessToken)).map((item) => item.id)).toEqual([attacker.refreshTokenId]);
  });

  it("may end the caller's own session (a sign-out)", async () => {
    const session = await signUp(svc);
    expect((await revoke(session.refreshTokenId, session.accessToken)).status).toBe(204);
    await refreshFails(session.refreshToken);
  });

  it("needs the user's access token", async () => {
    const session = await signUp(svc);
    await expectError(
      await svc.request("DELETE", `/user/sessions/${session.refreshTokenId}`),
      401,
      "unauthorized",
    );
    expect((await svc.post("/token", { refreshToken: session.refreshToken })).status).toBe(200);
  });
});

describe("DELETE /user/sessions?others=true", () => {
  it("ends every session but the caller's", async () => {
    const email = uniqueEmail();
    const first = await signUp(svc, email);
    const second = await signIn(email);
    const mine = await signIn(email);
    const stranger = await signUp(svc);
    const ended = await svc.request("DELETE", "/user/sessions?others=true", { token: mine.accessToken });
    expect(ended.status).toBe(204);
    await refreshFails(first.refreshToken);
    await refreshFails(second.refreshToken);
    const renewed = await sessionFromRefresh(svc, mine.refreshToken);
    expect((await listOf(renewed.accessToken)).map((item) => item.id)).toEqual([mine.refreshTokenId]);
    // Another user's sessions are not the caller's "others".
    expect((await svc.post("/token", { refreshToken: stranger.refreshToken })).status).toBe(200);
  });

  it("refuses without others=true (400) and without an access token (401), ending nothing", async () => {
    const email = uniqueEmail();
    const other = await signUp(svc, email);
    const mine = await signIn(email);
    await expectError(
      await svc.request("DELETE", "/user/sessions", { token: mine.accessToken }),
      400,
      "invalid-request",
    );
    await expectError(
      await svc.request("DELETE", "/user/sessions?others=false", { token: mine.accessToken }),
      400,
      "invalid-request",
    );
    await expectError(await svc.request("DELETE", "/user/sessions?others=true"), 401, "unauthorized");
    expect((await svc.post("/token", { refreshToken: other.refreshToken })).status).toBe(200);
  });
});
