// Custom claims from the app's data (contract move-in §4), as an app living beside Hasura has them: the `wrangler
// dev` server sends Nhost's GetClaims query to a real GraphQL server (hasura-graphql-server.ts) over a real Postgres
// holding the app's tables, and the JWT @nhost/nhost-js signs in with carries the user's organisation and projects
// from those rows. The server is configured for this (test/compat/wrangler-dev.ts: the GraphQL URL on a port only
// this file serves, `omit` on failure so that other files' sign-ins go on without the claims).
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type RunningPostgres, startPostgres } from "../support/postgres";
import { client, PASSWORD, verifiedUser } from "./client";
import { APP_TABLES_SQL, type GraphqlServer, startHasuraGraphql } from "./hasura-graphql-server";

const NAMESPACE = "https://hasura.io/jwt/claims";
const ORG = "8bdc4f57-7d64-4146-a663-6bcb05ea2ac1";
const ORG_2 = "0c9e9f0e-1f7c-4c57-9a41-3f1f2b1d4e77";
const PROJECTS = ["3af1b33f-fd0f-425e-92e2-0db09c8b2e29", "979cb94c-d873-4d5b-8ee0-74527428f58f"];

/** The Hasura claims of a JWT, as its payload holds them. */
const claimsIn = (token: string) =>
  JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString())[NAMESPACE] as Record<string, unknown>;

let postgres: RunningPostgres;
let db: pg.Client;
let graphqlServer: GraphqlServer;

beforeAll(async () => {
  postgres = await startPostgres();
  db = new pg.Client({ connectionString: postgres.url });
  await db.connect();
  await db.query(APP_TABLES_SQL);
  await db.query("INSERT INTO organisations (id, name) VALUES ($1, 'Acme'), ($2, 'Globex')", [ORG, ORG_2]);
  await db.query("INSERT INTO projects (id, name) VALUES ($1, 'Apollo'), ($2, 'Gemini')", PROJECTS);
  const { port, adminSecret } = inject("claimsGraphql");
  graphqlServer = await startHasuraGraphql(postgres.url, port, adminSecret);
});

afterAll(async () => {
  await graphqlServer?.close();
  await db?.end();
  await postgres?.stop();
});

describe("custom claims from the app's tables through GraphQL", () => {
  it("the JWT @nhost/nhost-js signs in with carries the organisation and projects the app's Postgres holds", async () => {
    const { email, accessToken } = await verifiedUser("claims");
    const userId = claimsIn(accessToken)["x-hasura-user-id"] as string;
    // The app's rows for this user (its auth.users row is what the mirror writes; here the test writes it).
    await db.query('INSERT INTO auth.users (id, metadata) VALUES ($1, \'{"plan":"pro"}\')', [userId]);
    await db.query("INSERT INTO profiles (user_id, organisation_id) VALUES ($1, $2)", [userId, ORG]);
    await db.query("INSERT INTO contributions (user_id, project_id) VALUES ($1, $2), ($1, $3)", [
      userId,
      ...PROJECTS,
    ]);

    const nhost = client();
    await nhost.auth.signInEmailPassword({ email, password: PASSWORD });
    const session = nhost.getUserSession()!;
    // The token carries what Nhost's would: arrays as Postgres array literals, which Hasura reads…
    expect(claimsIn(session.accessToken)).toMatchObject({
      "x-hasura-user-id": userId,
      "x-hasura-organisation-id": ORG,
      "x-hasura-project-ids": `{"${PROJECTS[0]}","${PROJECTS[1]}"}`,
      "x-hasura-plan": "pro",
    });
    // …and the client decodes them back into arrays, as it does Nhost's.
    expect(session.decodedToken[NAMESPACE]).toMatchObject({
      "x-hasura-organisation-id": ORG,
      "x-hasura-project-ids": PROJECTS,
    });
    const sent = graphqlServer.queries.filter((q) => q.variables.id === userId);
    expect(sent.at(-1)!.query).toBe(
      "query GetClaims($id: uuid!) { user(id:$id) {metadata profile{contributesTo{project{id }}organisation{id }}} }",
    );

    // The app moves the user to another organisation; the client's next refresh carries it (nothing cached).
    await db.query("UPDATE profiles SET organisation_id = $2 WHERE user_id = $1", [userId, ORG_2]);
    await db.query("DELETE FROM contributions WHERE user_id = $1 AND project_id = $2", [userId, PROJECTS[0]]);
    const renewed = await nhost.refreshSession(3600);
    const after = claimsIn(renewed!.accessToken);
    expect(after["x-hasura-organisation-id"]).toBe(ORG_2);
    expect(after["x-hasura-project-ids"]).toBe(`{"${PROJECTS[1]}"}`);
  });
});
