// The app's GraphQL API for test/compat/custom-claims.test.ts: a real GraphQL server over HTTP (node:http and the
// `graphql` reference implementation) whose schema is shaped as Hasura exposes an app's tables (Nhost's `user(id:)`
// root field on `auth.users`, object and array relationships, `jsonb`), each field resolved by a query of a real
// Postgres. It answers only with Hasura's admin secret, as Hasura does, and counts the requests it was sent.
import { createServer, type Server } from "node:http";
import { buildSchema, graphql } from "graphql";
import pg from "pg";

const schema = buildSchema(`
  scalar uuid
  scalar jsonb

  type organisations { id: uuid! name: String! }
  type projects { id: uuid! name: String! }
  type contributions { project: projects! }
  type profiles { organisation: organisations contributesTo: [contributions!]! }
  type users { id: uuid! metadata: jsonb profile: profiles }

  type query_root { user(id: uuid!): users }
  schema { query: query_root }
`);

/** The app's tables, beside the `auth.users` its Nhost project had (the columns this test reads). */
export const APP_TABLES_SQL = `
  CREATE SCHEMA IF NOT EXISTS auth;
  CREATE TABLE auth.users (id uuid PRIMARY KEY, metadata jsonb);
  CREATE TABLE organisations (id uuid PRIMARY KEY, name text NOT NULL);
  CREATE TABLE projects (id uuid PRIMARY KEY, name text NOT NULL);
  CREATE TABLE profiles (user_id uuid PRIMARY KEY REFERENCES auth.users (id),
                         organisation_id uuid REFERENCES organisations (id));
  CREATE TABLE contributions (user_id uuid REFERENCES profiles (user_id), project_id uuid REFERENCES projects (id),
                              PRIMARY KEY (user_id, project_id));
`;

export interface GraphqlServer {
  url: string;
  /** The bodies of the requests answered with data. */
  queries: { query: string; variables: Record<string, unknown> }[];
  close(): Promise<void>;
}

export async function startHasuraGraphql(
  databaseUrl: string,
  port: number,
  adminSecret: string,
): Promise<GraphqlServer> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  const one = async (sql: string, values: unknown[]) => (await pool.query(sql, values)).rows[0] ?? null;

  const rootValue = {
    user: async ({ id }: { id: string }) => {
      const row = await one("SELECT id, metadata FROM auth.users WHERE id = $1", [id]);
      if (!row) return null;
      return {
        id: row.id,
        metadata: row.metadata,
        profile: async () => {
          const profile = await one("SELECT organisation_id FROM profiles WHERE user_id = $1", [id]);
          if (!profile) return null;
          return {
            organisation: () =>
              profile.organisation_id
                ? one("SELECT id, name FROM organisations WHERE id = $1", [profile.organisation_id])
                : null,
            contributesTo: async () =>
              (
                await pool.query(
                  "SELECT p.id, p.name FROM contributions c JOIN projects p ON p.id = c.project_id WHERE c.user_id = $1 ORDER BY p.id",
                  [id],
                )
              ).rows.map((project) => ({ project })),
          };
        },
      };
    },
  };

  const queries: GraphqlServer["queries"] = [];
  const server: Server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(body));
    };
    if (request.method !== "POST" || request.url !== "/v1/graphql") return send(404, { error: "not found" });
    if (request.headers["x-hasura-admin-secret"] !== adminSecret) {
      return send(200, {
        errors: [
          {
            extensions: { path: "$", code: "access-denied" },
            message: "invalid x-hasura-admin-secret/x-hasura-access-key",
          },
        ],
      });
    }
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as GraphqlServer["queries"][number];
    const result = await graphql({ schema, source: body.query, variableValues: body.variables, rootValue });
    if (!result.errors) queries.push(body);
    send(200, result);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  return {
    url: `http://127.0.0.1:${port}/v1/graphql`,
    queries,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await pool.end();
    },
  };
}
