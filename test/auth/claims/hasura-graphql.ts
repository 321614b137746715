// A real GraphQL server in the test's own isolate, standing in for the app's Hasura (contract move-in §4): the
// `graphql` reference implementation executes whatever document the service sends against a schema shaped as Hasura
// exposes an app's tables (Nhost's `user(id:)` root field on `auth.users`, object and array relationships, `jsonb`),
// so a query Hasura would reject (an unknown field, a missing selection set, a wrong variable type) fails here too.
// It answers over the service's injected outbound fetch (`OUTBOUND`), as Hasura answers over HTTP: JSON, and GraphQL
// errors in the body. Tables are plain objects the test changes as the app would change its rows.
import { buildSchema, graphql } from "graphql";

export const ADMIN_SECRET = "hasura-admin-secret-for-tests";
export const GRAPHQL_URL = "https://hasura.example.com/v1/graphql";

const schema = buildSchema(`
  scalar uuid
  scalar jsonb

  type organisations { id: uuid! name: String! }
  type projects { id: uuid! name: String! }
  type contributions { project: projects! }
  type profiles {
    organisation: organisations
    contributesTo: [contributions!]!
    level: Int
    active: Boolean
    nickname: String
  }
  type users { id: uuid! metadata: jsonb profile: profiles }

  type query_root { user(id: uuid!): users }
  schema { query: query_root }
`);

export interface Tables {
  organisations: Record<string, { name: string }>;
  projects: Record<string, { name: string }>;
  /** By user id. */
  profiles: Record<
    string,
    {
      organisationId: string | null;
      level: number | null;
      active: boolean | null;
      nickname: string | null;
      projectIds: string[];
    }
  >;
  /** The `auth.users` rows the app's database has: by id, with their metadata. */
  users: Record<string, { metadata: Record<string, unknown> }>;
}

export interface Received {
  headers: Headers;
  body: { query: string; variables: Record<string, unknown> };
}

/** How the server behaves: answering, down (connection refused), 500, a GraphQL error, or never answering. */
export type Mode = "ok" | "down" | "500" | "graphql-error" | "hang";

export function hasuraGraphql() {
  const tables: Tables = { organisations: {}, projects: {}, profiles: {}, users: {} };
  const received: Received[] = [];
  let mode: Mode = "ok";

  const rootValue = {
    user: ({ id }: { id: string }) => {
      const row = tables.users[id];
      if (!row) return null;
      return {
        id,
        metadata: row.metadata,
        profile: () => {
          const profile = tables.profiles[id];
          if (!profile) return null;
          return {
            level: profile.level,
            active: profile.active,
            nickname: profile.nickname,
            organisation: () =>
              profile.organisationId
                ? { id: profile.organisationId, ...tables.organisations[profile.organisationId] }
                : null,
            contributesTo: () =>
              profile.projectIds.map((projectId) => ({
                project: () => ({ id: projectId, ...tables.projects[projectId] }),
              })),
          };
        },
      };
    },
  };

  async function fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
    const request = new Request(input, init);
    if (request.url !== GRAPHQL_URL) return new Response("not found", { status: 404 });
    const body = (await request.json()) as Received["body"];
    received.push({ headers: request.headers, body });
    if (mode === "down") throw new TypeError("Network connection lost.");
    if (mode === "500") return new Response("internal error", { status: 500 });
    if (mode === "hang") return new Promise<Response>(() => {});
    if (request.method !== "POST" || request.headers.get("content-type") !== "application/json") {
      return Response.json({ errors: [{ message: "expected a JSON POST" }] }, { status: 400 });
    }
    if (mode === "graphql-error" || request.headers.get("x-hasura-admin-secret") !== ADMIN_SECRET) {
      // Hasura's answer to a wrong admin secret.
      return Response.json({
        errors: [
          {
            extensions: { path: "$", code: "access-denied" },
            message: "invalid x-hasura-admin-secret/x-hasura-access-key",
          },
        ],
      });
    }
    const result = await graphql({
      schema,
      source: body.query,
      variableValues: body.variables,
      rootValue,
    });
    return Response.json(result);
  }

  return {
    tables,
    received,
    fetch,
    setMode(next: Mode) {
      mode = next;
    },
  };
}
