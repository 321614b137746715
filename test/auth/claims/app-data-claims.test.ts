import { beforeEach, describe, expect, it } from "vitest";
import {
  decodeJwt,
  expectError,
  NO_VERIFICATION,
  PASSWORD,
  service,
  signUp,
  uniqueEmail,
  type WireSession,
} from "../../helpers";
import { userD1 } from "../../support/shards";
import { ADMIN_SECRET, GRAPHQL_URL, hasuraGraphql } from "./hasura-graphql";

/**
 * Custom claims from the app's data (contract move-in §4): with `HASURA_GRAPHQL_GRAPHQL_URL`, every sign-in and every
 * refresh sends Nhost's one GraphQL query to the app's GraphQL API, here a real GraphQL server (hasura-graphql.ts)
 * executing it against a Hasura-shaped schema over tables the test changes.
 */

const PATHS = {
  "organisation-id": "profile.organisation.id",
  "project-ids": "profile.contributesTo[].project.id",
  level: "profile.level",
  active: "profile.active",
  nickname: "profile.nickname",
  plan: "metadata.plan",
  "Beta-Flags": "metadata.flags[]",
};

const ORG = "8bdc4f57-7d64-4146-a663-6bcb05ea2ac1";
const ORG_2 = "0c9e9f0e-1f7c-4c57-9a41-3f1f2b1d4e77";
const PROJECTS = ["3af1b33f-fd0f-425e-92e2-0db09c8b2e29", "979cb94c-d873-4d5b-8ee0-74527428f58f"];

const claimsOf = (token: string) =>
  decodeJwt(token).payload["https://hasura.io/jwt/claims"] as Record<string, unknown>;

const sessionCount = async (userId: string) =>
  (await userD1(userId)
    .prepare("SELECT count(*) AS n FROM sessions WHERE user_id = ?")
    .bind(userId)
    .first<{ n: number }>())!.n;

describe("custom claims from the app's data", () => {
  let gql: ReturnType<typeof hasuraGraphql>;
  const serviceWith = (overrides: Record<string, unknown> = {}) =>
    service({
      ...NO_VERIFICATION,
      OUTBOUND: { fetch: gql.fetch },
      HASURA_GRAPHQL_GRAPHQL_URL: GRAPHQL_URL,
      HASURA_GRAPHQL_ADMIN_SECRET: ADMIN_SECRET,
      AUTH_JWT_CUSTOM_CLAIMS: JSON.stringify(PATHS),
      ...overrides,
    });

  beforeEach(() => {
    gql = hasuraGraphql();
    gql.tables.organisations[ORG] = { name: "Acme" };
    gql.tables.organisations[ORG_2] = { name: "Globex" };
    for (const id of PROJECTS) gql.tables.projects[id] = { name: id.slice(0, 4) };
  });

  /** The app writes its rows for `userId` (as the mirror and the app's own tables would hold them). */
  function appHasUser(userId: string) {
    gql.tables.users[userId] = { metadata: { plan: "pro", flags: ["a", "b"] } };
    gql.tables.profiles[userId] = {
      organisationId: ORG,
      level: 3,
      active: true,
      nickname: null,
      projectIds: [...PROJECTS],
    };
  }

  async function signIn(svc: ReturnType<typeof service>, email: string) {
    return svc.post("/signin/email-password", { email, password: PASSWORD });
  }

  it("puts the app's values into the token, encoded as Nhost does, with one query per sign-in and per refresh", async () => {
    const svc = serviceWith({
      AUTH_JWT_CUSTOM_CLAIMS_DEFAULTS: JSON.stringify({ "organisation-id": ORG_2 }),
    });
    const email = uniqueEmail();
    // A sign-up the app's database does not have yet (its mirror writes it a moment later): the defaults, or null.
    const first = await signUp(svc, email);
    expect(claimsOf(first.accessToken)).toMatchObject({
      "x-hasura-organisation-id": ORG_2,
      "x-hasura-project-ids": "null",
      "x-hasura-level": "null",
      "x-hasura-plan": "null",
    });
    expect(gql.received).toHaveLength(1);

    appHasUser(first.user.id);
    const response = await signIn(svc, email);
    expect(response.status).toBe(200);
    const { session } = (await response.json()) as { session: WireSession };
    expect(claimsOf(session.accessToken)).toEqual({
      "x-hasura-user-id": first.user.id,
      "x-hasura-default-role": "user",
      "x-hasura-allowed-roles": ["user", "me"],
      "x-hasura-user-is-anonymous": "false",
      "x-hasura-organisation-id": ORG,
      "x-hasura-project-ids": `{"${PROJECTS[0]}","${PROJECTS[1]}"}`,
      "x-hasura-level": "3",
      "x-hasura-active": "true",
      // No value, no default: the string null, as Nhost writes it.
      "x-hasura-nickname": "null",
      "x-hasura-plan": "pro",
      "x-hasura-beta-flags": '{"a","b"}',
    });

    expect(gql.received).toHaveLength(2);
    const sent = gql.received[1]!;
    expect(sent.headers.get("x-hasura-admin-secret")).toBe(ADMIN_SECRET);
    expect(sent.headers.get("content-type")).toBe("application/json");
    expect(sent.body).toEqual({
      query:
        "query GetClaims($id: uuid!) { user(id:$id) {metadata profile{active contributesTo{project{id }}level nickname organisation{id }}} }",
      variables: { id: first.user.id },
    });

    // The app moves the user to another organisation and drops a project; the next refresh carries it at once.
    gql.tables.profiles[first.user.id]!.organisationId = ORG_2;
    gql.tables.profiles[first.user.id]!.projectIds = [PROJECTS[1]!];
    const refreshed = await svc.post("/token", { refreshToken: session.refreshToken });
    expect(refreshed.status).toBe(200);
    const renewed = (await refreshed.json()) as WireSession;
    expect(claimsOf(renewed.accessToken)).toMatchObject({
      "x-hasura-organisation-id": ORG_2,
      "x-hasura-project-ids": `{"${PROJECTS[1]}"}`,
    });
    expect(gql.received).toHaveLength(3);

    // An empty array relationship is an empty array literal.
    gql.tables.profiles[first.user.id]!.projectIds = [];
    const again = (await (
      await svc.post("/token", { refreshToken: renewed.refreshToken })
    ).json()) as WireSession;
    expect(claimsOf(again.accessToken)["x-hasura-project-ids"]).toBe("{}");
  });

  it("fail (the default): a sign-in the claims cannot be had for answers 503 and issues nothing", async () => {
    const svc = serviceWith();
    const email = uniqueEmail();
    const { user } = await signUp(svc, email);
    appHasUser(user.id);
    for (const mode of ["down", "500", "graphql-error"] as const) {
      gql.setMode(mode);
      const before = await sessionCount(user.id);
      const response = await signIn(svc, email);
      expect(response.headers.get("retry-after")).toBeTruthy();
      await expectError(response, 503, "service-unavailable");
      // Threat: a token without the claim the app's permissions hang on (a tenant id) reads as another tenant's,
      // or as none; and a session nobody holds would linger.
      expect(await sessionCount(user.id)).toBe(before);
    }
    gql.setMode("ok");
    expect((await signIn(svc, email)).status).toBe(200);
  });

  it("fail: a refresh refused for its claims leaves the refresh token unspent, so the client's retry works", async () => {
    // Threat: if the token rotated before the query failed, the client would hold a spent token; its retry after the
    // grace window (none here) would read as a replay and end the session: an outage of the app's GraphQL API would
    // sign everybody out.
    const svc = serviceWith({ AUTH_REFRESH_TOKEN_REUSE_INTERVAL: "0" });
    const first = await signUp(svc, uniqueEmail());
    appHasUser(first.user.id);
    gql.setMode("down");
    const refused = await svc.post("/token", { refreshToken: first.refreshToken });
    await expectError(refused, 503, "service-unavailable");
    gql.setMode("ok");
    const retried = await svc.post("/token", { refreshToken: first.refreshToken });
    expect(retried.status).toBe(200);
    const renewed = (await retried.json()) as WireSession;
    expect(claimsOf(renewed.accessToken)["x-hasura-organisation-id"]).toBe(ORG);
    // …and the token was spent by that successful refresh, exactly once.
    await expectError(
      await svc.post("/token", { refreshToken: first.refreshToken }),
      401,
      "invalid-refresh-token",
    );
  });

  it("gives up after 2 s: a GraphQL API that never answers is a failure, not a hung sign-in", async () => {
    const svc = serviceWith();
    const email = uniqueEmail();
    const { user } = await signUp(svc, email);
    appHasUser(user.id);
    gql.setMode("hang");
    const started = Date.now();
    await expectError(await signIn(svc, email), 503, "service-unavailable");
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(1_900);
    expect(elapsed).toBeLessThan(5_000);
  });

  it("omit (Nhost's behaviour): the token is issued without custom claims", async () => {
    const svc = serviceWith({ AUTH_JWT_CUSTOM_CLAIMS_ON_ERROR: "omit" });
    const email = uniqueEmail();
    const { user } = await signUp(svc, email);
    appHasUser(user.id);
    gql.setMode("500");
    const response = await signIn(svc, email);
    expect(response.status).toBe(200);
    const { session } = (await response.json()) as { session: WireSession };
    expect(claimsOf(session.accessToken)).toEqual({
      "x-hasura-user-id": user.id,
      "x-hasura-default-role": "user",
      "x-hasura-allowed-roles": ["user", "me"],
      "x-hasura-user-is-anonymous": "false",
    });
    const refreshed = await svc.post("/token", { refreshToken: session.refreshToken });
    expect(refreshed.status).toBe(200);
  });

  it("sends the admin secret it is given: a wrong one is Hasura's error, so a failure", async () => {
    const svc = serviceWith({ HASURA_GRAPHQL_ADMIN_SECRET: "not-the-secret" });
    const email = uniqueEmail();
    gql.setMode("ok");
    // The sign-up's own session fails too (fail mode): the account exists, no session was issued.
    const signUpAnswer = await svc.post("/signup/email-password", { email, password: PASSWORD });
    await expectError(signUpAnswer, 503, "service-unavailable");
    expect(gql.received.at(-1)!.headers.get("x-hasura-admin-secret")).toBe("not-the-secret");
  });

  it("keeps to the outbound-URL policy: a loopback GraphQL URL is refused unless local fetches are allowed", async () => {
    const local = "http://127.0.0.1:8080/v1/graphql";
    const received: string[] = [];
    const outbound = {
      fetch: async (input: RequestInfo | URL) => {
        received.push(String(input));
        return Response.json({ data: { user: null } });
      },
    };
    const svc = serviceWith({ HASURA_GRAPHQL_GRAPHQL_URL: local, OUTBOUND: outbound });
    await expectError(
      await svc.post("/signup/email-password", { email: uniqueEmail(), password: PASSWORD }),
      503,
      "service-unavailable",
    );
    expect(received).toEqual([]);
    const allowed = serviceWith({
      HASURA_GRAPHQL_GRAPHQL_URL: local,
      OUTBOUND: outbound,
      AUTH_OUTBOUND_ALLOW_LOCAL: "true",
    });
    await signUp(allowed, uniqueEmail());
    expect(received).toEqual([local]);
  });

  it("without HASURA_GRAPHQL_GRAPHQL_URL, resolves against the service's own user with Nhost's encoding", async () => {
    const svc = service({
      ...NO_VERIFICATION,
      OUTBOUND: { fetch: gql.fetch },
      AUTH_JWT_CUSTOM_CLAIMS: JSON.stringify({
        org: "metadata.org",
        teams: "metadata.teams[]",
        seats: "metadata.seats",
        roles: "roles[]",
        missing: "metadata.nothing",
        fallback: "metadata.none",
      }),
      AUTH_JWT_CUSTOM_CLAIMS_DEFAULTS: JSON.stringify({ fallback: ["x"] }),
    });
    const session = await signUp(svc, uniqueEmail(), {
      metadata: { org: "acme", teams: ["t1", "t2"], seats: 5 },
    });
    expect(claimsOf(session.accessToken)).toMatchObject({
      "x-hasura-org": "acme",
      "x-hasura-teams": '{"t1","t2"}',
      "x-hasura-seats": "5",
      "x-hasura-roles": '{"user","me"}',
      "x-hasura-missing": "null",
      "x-hasura-fallback": '{"x"}',
    });
    expect(gql.received).toEqual([]);
  });
});
