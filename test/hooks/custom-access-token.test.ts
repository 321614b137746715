// The app's CUSTOM_ACCESS_TOKEN hook (contract move-in §5.3): before an access token is signed, the app sees the
// claims namespace as it would be signed and answers the custom part. The claims the service decides (who the user
// is, their roles, anonymity, elevation) and the token's own sub, iat, exp and iss stay the service's; no answer
// means no token (503), and a refresh refused that way has not spent its refresh token.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  decodeJwt,
  expectError,
  NO_VERIFICATION,
  PASSWORD,
  service,
  uniqueEmail,
  type WireSession,
} from "../helpers";
import { allInShards, userD1, userIdByEmail } from "../support/shards";
import { answers, hookEvents, hookReceiver, type Scenario } from "./support";

const NAMESPACE = "https://hasura.io/jwt/claims";

const claimsOf = (session: WireSession) => decodeJwt(session.accessToken).payload;

async function sessionsOf(userId: string): Promise<number> {
  const row = await userD1(userId)
    .prepare("SELECT count(*) AS n FROM sessions WHERE user_id = ?")
    .bind(userId)
    .first<{ n: number }>();
  return row!.n;
}

async function userIdOf(email: string): Promise<string> {
  return (await userIdByEmail(email))!;
}

describe("CUSTOM_ACCESS_TOKEN sets the custom claims", () => {
  let issued = 0;
  // The app's answer: its own claims, and attempts at the service's, which must not take.
  const app: Scenario = () =>
    Response.json({
      claims: {
        "x-hasura-organisation-id": "org-7",
        "x-hasura-project-ids": "{1,2}",
        "x-hasura-issued": String(++issued),
        "x-hasura-user-id": "someone-else",
        "x-hasura-default-role": "admin",
        "x-hasura-allowed-roles": ["admin"],
        "x-hasura-user-is-anonymous": "true",
        "x-hasura-auth-elevated": "someone-else",
        "X-Hasura-Role": "admin",
        "x-hasura-org-id": "another-org",
        sub: "someone-else",
      },
    });
  const receiver = hookReceiver({ CUSTOM_ACCESS_TOKEN: app });
  const svc = service({
    ...NO_VERIFICATION,
    ...receiver.bindings,
    // A configured custom claim: the app sees it, and its answer replaces it.
    AUTH_JWT_CUSTOM_CLAIMS: JSON.stringify({ plan: "metadata.plan" }),
  });

  it("a sign-up's token: the app's claims, the built-in ones untouched; the app saw the namespace as it would be", async () => {
    const email = uniqueEmail("claims");
    const response = await svc.post("/signup/email-password", {
      email,
      password: PASSWORD,
      options: { metadata: { plan: "pro" } },
    });
    const { session } = (await response.json()) as { session: WireSession };
    const payload = claimsOf(session);
    const userId = session.user.id;
    expect(payload.sub).toBe(userId);
    expect(payload[NAMESPACE]).toEqual({
      "x-hasura-user-id": userId,
      "x-hasura-default-role": "user",
      "x-hasura-allowed-roles": ["user", "me"],
      "x-hasura-user-is-anonymous": "false",
      "x-hasura-organisation-id": "org-7",
      "x-hasura-project-ids": "{1,2}",
      "x-hasura-issued": expect.any(String),
      // A claim of the app's own inside the namespace: the token's subject is the top-level `sub`, unchanged.
      sub: "someone-else",
    });
    const [asked] = receiver.callsOf("CUSTOM_ACCESS_TOKEN").filter((p) => p.userId === userId);
    expect(asked).toEqual({
      userId,
      claims: {
        "x-hasura-plan": "pro",
        "x-hasura-user-id": userId,
        "x-hasura-default-role": "user",
        "x-hasura-allowed-roles": ["user", "me"],
        "x-hasura-user-is-anonymous": "false",
      },
      authenticationMethod: "email-password",
    });
    expect(receiver.unverified).toEqual([]);
    expect(await hookEvents(userId)).toEqual([
      { hook: "CUSTOM_ACCESS_TOKEN", outcome: "claims", status: 200, ms: expect.any(Number) },
    ]);
  });

  it("every refresh asks again, as a refresh", async () => {
    const email = uniqueEmail("claims-refresh");
    const { session } = (await (
      await svc.post("/signup/email-password", { email, password: PASSWORD })
    ).json()) as {
      session: WireSession;
    };
    const refreshed = await svc.post("/token", { refreshToken: session.refreshToken });
    expect(refreshed.status).toBe(200);
    const next = (await refreshed.json()) as WireSession;
    const before = (claimsOf(session)[NAMESPACE] as Record<string, string>)["x-hasura-issued"];
    const after = (claimsOf(next)[NAMESPACE] as Record<string, string>)["x-hasura-issued"];
    expect(Number(after)).toBeGreaterThan(Number(before));
    const methods = receiver
      .callsOf("CUSTOM_ACCESS_TOKEN")
      .filter((p) => p.userId === session.user.id)
      .map((p) => p.authenticationMethod);
    expect(methods).toEqual(["email-password", "refresh"]);
  });

  it("an answer of no claims leaves only the built-in ones (the configured ones replaced too)", async () => {
    const empty = hookReceiver({ CUSTOM_ACCESS_TOKEN: answers.json({ claims: {} }) });
    const bare = service({
      ...NO_VERIFICATION,
      ...empty.bindings,
      AUTH_JWT_CUSTOM_CLAIMS: JSON.stringify({ plan: "metadata.plan" }),
    });
    const response = await bare.post("/signup/email-password", {
      email: uniqueEmail("bare"),
      password: PASSWORD,
      options: { metadata: { plan: "pro" } },
    });
    const { session } = (await response.json()) as { session: WireSession };
    expect(Object.keys(claimsOf(session)[NAMESPACE] as object).sort()).toEqual([
      "x-hasura-allowed-roles",
      "x-hasura-default-role",
      "x-hasura-user-id",
      "x-hasura-user-is-anonymous",
    ]);
  });
});

describe("a CUSTOM_ACCESS_TOKEN hook that does not answer: no token", () => {
  // Threat: permissions that hang on a claim (the tenant a user may read) signed without it, or with a stale one.
  it.each([
    ["is unreachable", answers.unreachable(), "unreachable"],
    ["answers 500", answers.status(500), "bad-status"],
    ["answers garbage", answers.garbage(), "malformed"],
    ["answers without claims", answers.json({ decision: "continue" }), "malformed"],
    ["answers claims that are not an object", answers.json({ claims: ["x"] }), "malformed"],
  ] as const)("when it %s: sign-in answers 503, and no session exists", async (_, scenario, outcome) => {
    const receiver = hookReceiver({ CUSTOM_ACCESS_TOKEN: scenario });
    const svc = service({ ...NO_VERIFICATION, ...receiver.bindings });
    const email = uniqueEmail("no-claims");
    const signUp = await svc.post("/signup/email-password", { email, password: PASSWORD });
    expect(signUp.headers.get("retry-after")).toBe("5");
    await expectError(signUp, 503, "service-unavailable");
    // The sign-up that got no session is undone (src/auth/accounts/sign-up.ts): its retry is the same request.
    const undone = await allInShards("SELECT count(*) AS n FROM users WHERE email = ?", email);
    expect(undone).toEqual(undone.map(() => ({ n: 0 })));
    // An account that exists (made through the admin API, which asks no hook), signing in while the hook is down.
    const created = await svc.request("POST", "/admin/users", {
      headers: { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) },
      json: { email, password: PASSWORD, emailVerified: true },
    });
    expect(created.status).toBe(201);
    const signIn = await svc.post("/signin/email-password", { email, password: PASSWORD });
    await expectError(signIn, 503, "service-unavailable");
    const userId = await userIdOf(email);
    expect(await sessionsOf(userId)).toBe(0);
    const events = await hookEvents(userId);
    expect(events.map((event) => event.outcome)).toEqual([outcome]);
  });

  // Threat: an outage of the app's hook spending refresh tokens, so that every client's retry reads as a replay and
  // everybody is signed out when it comes back.
  it("a refresh refused for want of claims keeps its refresh token: it works once the hook is back", async () => {
    let down = false;
    const receiver = hookReceiver({
      CUSTOM_ACCESS_TOKEN: () =>
        down ? new Response("down", { status: 502 }) : Response.json({ claims: { "x-hasura-ok": "1" } }),
    });
    const svc = service({ ...NO_VERIFICATION, ...receiver.bindings });
    const { session } = (await (
      await svc.post("/signup/email-password", { email: uniqueEmail("kept"), password: PASSWORD })
    ).json()) as {
      session: WireSession;
    };
    down = true;
    await expectError(
      await svc.post("/token", { refreshToken: session.refreshToken }),
      503,
      "service-unavailable",
    );
    // Past the reuse interval, a spent token would now be a replay.
    down = false;
    const again = await svc.post("/token", { refreshToken: session.refreshToken });
    expect(again.status).toBe(200);
    expect(
      (claimsOf((await again.json()) as WireSession)[NAMESPACE] as Record<string, string>)["x-hasura-ok"],
    ).toBe("1");
  });
});
