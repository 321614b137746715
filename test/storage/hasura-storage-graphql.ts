// A real GraphQL server in the test's own isolate, standing in for the app's Hasura as Nhost Storage meets it
// (contract move-in §5.1b): the `graphql` reference implementation executes whatever document the service sends
// against a schema per role, shaped as Hasura exposes `storage.files` to that role (Nhost's root fields `file`,
// `files` (its `where` on the bucket only), `insertFile`, `updateFile`, `deleteFile`; an insert input without the
// columns a role may not set; no mutations at all for a role without write permissions), so a document Hasura would
// reject fails here too. Sessions are Hasura's JWT mode: the bearer token's signature is checked against the
// service's own JWKS (the test hands it over), and the role is `x-hasura-role` if the token allows it, else the
// token's default; no token is the unauthorized role; the admin secret is the admin. Row permissions are predicates
// over tables held in memory, each beside the Hasura boolean expression it stands for. Errors come back as Hasura
// sends them: HTTP 200, `errors[].extensions.code`.
import { buildSchema, execute, GraphQLError, type GraphQLSchema, parse, validate } from "graphql";
import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from "jose";

export const ADMIN_SECRET = "hasura-admin-secret-for-storage-tests";
export const GRAPHQL_URL = "https://hasura.example.com/v1/graphql";
/** The bucket Hasura's unauthorized role may read. */
export const PUBLIC_BUCKET = "hasura-public";

/** A `storage.files` row as Hasura names its columns. */
export interface FileRow {
  id: string;
  bucketId: string;
  name: string | null;
  mimeType: string | null;
  size: number | null;
  etag: string | null;
  isUploaded: boolean;
  uploadedByUserId: string | null;
  metadata: unknown;
}

interface Session {
  role: string;
  userId: string | null;
}

export interface Received {
  role: string | null;
  field: string;
  headers: Headers;
  variables: Record<string, unknown>;
}

/** How the server behaves: answering, or failing in one of the ways an outside service fails. */
export type Mode = "ok" | "down" | "hang" | "500" | "not-json" | "not-graphql" | "internal-error";

const COLUMNS = `id: uuid bucketId: String name: String mimeType: String size: Int etag: String isUploaded: Boolean
  uploadedByUserId: uuid metadata: jsonb`;
const TYPES = `
  scalar uuid
  scalar jsonb
  type files { id: uuid! bucketId: String! name: String mimeType: String size: Int etag: String isUploaded: Boolean
    uploadedByUserId: uuid metadata: jsonb }
  input files_pk_columns_input { id: uuid! }
  input String_comparison_exp { _eq: String }
  input files_bool_exp { bucketId: String_comparison_exp }
  type query_root { file(id: uuid!): files files(where: files_bool_exp, limit: Int): [files!]! }
`;
const MUTATIONS = `
  type mutation_root {
    insertFile(object: files_insert_input!): files
    updateFile(pk_columns: files_pk_columns_input!, _set: files_set_input): files
    deleteFile(id: uuid!): files
  }
  schema { query: query_root mutation: mutation_root }
`;

const SCHEMAS: Record<string, GraphQLSchema> = {
  admin: buildSchema(`${TYPES}
    input files_insert_input { ${COLUMNS} }
    input files_set_input { ${COLUMNS} }
    ${MUTATIONS}`),
  // The user role's insert permission has a column preset, uploaded_by_user_id = X-Hasura-User-Id: Hasura takes that
  // column out of the role's insert input, so a service sending it would be refused (validation-failed).
  user: buildSchema(`${TYPES}
    input files_insert_input { id: uuid bucketId: String name: String mimeType: String size: Int metadata: jsonb }
    input files_set_input { bucketId: String name: String mimeType: String size: Int etag: String isUploaded: Boolean
      metadata: jsonb }
    ${MUTATIONS}`),
  // The unauthorized role may only select.
  public: buildSchema(`${TYPES} schema { query: query_root }`),
  // A role with no permission on storage.files at all (`me`, which every user also has).
  me: buildSchema(`type query_root { nothing: Boolean } schema { query: query_root }`),
};

class HasuraError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const errorAnswer = (code: string, message: string) =>
  Response.json({ errors: [{ extensions: { path: "$", code }, message }] });

export function hasuraStorageGraphql() {
  const tables = {
    files: new Map<string, FileRow>(),
    /** The app's `documents` table: a file shared with an organisation (`files.document`, an object relationship). */
    documents: new Map<string, string>(),
    /** The app's `organisation_members`: `organisations.members`, an array relationship. */
    members: [] as { organisationId: string; userId: string }[],
  };
  const received: Received[] = [];
  let mode: Mode = "ok";
  /** Only requests this matches fail with the mode (default: every request). */
  let failing: (request: Received) => boolean = () => true;
  let keys: ReturnType<typeof createLocalJWKSet> | null = null;

  const isMember = (userId: string | null, fileId: string) =>
    tables.members.some(
      (m) => m.organisationId === tables.documents.get(fileId) && m.userId === userId && userId !== null,
    );
  const own = (row: FileRow, s: Session) => s.userId !== null && row.uploadedByUserId === s.userId;
  const notHtml = (row: FileRow) => !(row.mimeType ?? "").startsWith("text/html");

  /** The permissions of storage.files per role, as the app configured them in Hasura. */
  const PERMISSIONS: Record<
    string,
    {
      select?: (row: FileRow, s: Session) => boolean;
      insert?: { check: (row: FileRow, s: Session) => boolean; preset: (s: Session) => Partial<FileRow> };
      update?: { filter: (row: FileRow, s: Session) => boolean; check: (row: FileRow) => boolean };
      delete?: (row: FileRow, s: Session) => boolean;
    }
  > = {
    user: {
      // {_or: [{uploaded_by_user_id: {_eq: X-Hasura-User-Id}},
      //        {document: {organisation: {members: {user_id: {_eq: X-Hasura-User-Id}}}}}]}
      select: (row, s) => own(row, s) || isMember(s.userId, row.id),
      insert: {
        // {_and: [{uploaded_by_user_id: {_eq: X-Hasura-User-Id}}, {bucket_id: {_eq: "default"}},
        //         {mime_type: {_nlike: "text/html%"}}]}, preset uploaded_by_user_id = X-Hasura-User-Id
        check: (row, s) => own(row, s) && row.bucketId === "default" && notHtml(row),
        preset: (s) => ({ uploadedByUserId: s.userId }),
      },
      // filter {uploaded_by_user_id: {_eq: X-Hasura-User-Id}}, check {mime_type: {_nlike: "text/html%"}}
      update: { filter: own, check: notHtml },
      // {uploaded_by_user_id: {_eq: X-Hasura-User-Id}}
      delete: own,
    },
    // {bucket_id: {_eq: "hasura-public"}}
    public: { select: (row) => row.bucketId === PUBLIC_BUCKET },
  };

  const ALL = { select: () => true, filter: () => true, check: () => true };
  const permissionsOf = (role: string) =>
    role === "admin"
      ? {
          select: ALL.select,
          insert: { check: ALL.check, preset: () => ({}) },
          update: { filter: ALL.filter, check: ALL.check },
          delete: ALL.filter,
        }
      : (PERMISSIONS[role] ?? {});

  const rootValue = {
    file: ({ id }: { id: string }, s: Session) => {
      const row = tables.files.get(id);
      return row && permissionsOf(s.role).select?.(row, s) ? row : null;
    },
    // The select permission's filter and the `where` together, as Hasura's `files` applies them.
    files: ({ where, limit }: { where?: { bucketId?: { _eq?: string } }; limit?: number }, s: Session) =>
      [...tables.files.values()]
        .filter((row) => permissionsOf(s.role).select?.(row, s))
        .filter((row) => where?.bucketId?._eq === undefined || row.bucketId === where.bucketId._eq)
        .slice(0, limit ?? Number.POSITIVE_INFINITY),
    insertFile: ({ object }: { object: Partial<FileRow> }, s: Session) => {
      const insert = permissionsOf(s.role).insert!;
      const row: FileRow = {
        // The columns' defaults in Nhost's storage.files.
        id: crypto.randomUUID(),
        bucketId: "default",
        name: null,
        mimeType: null,
        size: null,
        etag: null,
        isUploaded: false,
        uploadedByUserId: null,
        metadata: null,
        ...object,
        ...insert.preset(s),
      };
      if (tables.files.has(row.id)) {
        throw new HasuraError(
          "constraint-violation",
          'Uniqueness violation. duplicate key value violates unique constraint "files_pkey"',
        );
      }
      if (!insert.check(row, s)) {
        throw new HasuraError("permission-error", "check constraint of an insert permission has failed");
      }
      tables.files.set(row.id, row);
      return permissionsOf(s.role).select?.(row, s) ? row : null;
    },
    updateFile: (
      { pk_columns, _set }: { pk_columns: { id: string }; _set: Partial<FileRow> },
      s: Session,
    ) => {
      const update = permissionsOf(s.role).update!;
      const row = tables.files.get(pk_columns.id);
      if (!row || !update.filter(row, s)) return null;
      const next = { ...row, ..._set };
      if (!update.check(next)) {
        throw new HasuraError("permission-error", "check constraint of an update permission has failed");
      }
      tables.files.set(row.id, next);
      return next;
    },
    deleteFile: ({ id }: { id: string }, s: Session) => {
      const row = tables.files.get(id);
      if (!row || !permissionsOf(s.role).delete?.(row, s)) return null;
      tables.files.delete(id);
      return row;
    },
  };

  /** Hasura's JWT mode: the session a request runs as, or the error Hasura answers instead. */
  async function sessionOf(headers: Headers): Promise<Session | Response> {
    const secret = headers.get("x-hasura-admin-secret");
    if (secret !== null) {
      if (secret !== ADMIN_SECRET) {
        return errorAnswer("access-denied", "invalid x-hasura-admin-secret/x-hasura-access-key");
      }
      return { role: "admin", userId: null };
    }
    const token = /^Bearer (\S+)$/.exec(headers.get("authorization") ?? "")?.[1];
    if (!token) return { role: "public", userId: null };
    let claims: Record<string, unknown>;
    try {
      if (!keys) throw new Error("no JWKS handed over");
      const { payload } = await jwtVerify(token, keys);
      claims = payload["https://hasura.io/jwt/claims"] as Record<string, unknown>;
    } catch (error) {
      return errorAnswer("invalid-jwt", `Could not verify JWT: ${(error as Error).message}`);
    }
    const allowed = claims["x-hasura-allowed-roles"] as string[];
    const role = headers.get("x-hasura-role") ?? String(claims["x-hasura-default-role"]);
    if (!allowed.includes(role))
      return errorAnswer("access-denied", "Your requested role is not in allowed roles");
    return { role, userId: String(claims["x-hasura-user-id"]) };
  }

  async function fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
    const request = new Request(input, init);
    if (request.url !== GRAPHQL_URL) return new Response("not found", { status: 404 });
    const body = (await request.json()) as { query: string; variables: Record<string, unknown> };
    const document = parse(body.query);
    const field = /\{\s*(\w+)/.exec(body.query)?.[1] ?? "?";
    const session = await sessionOf(request.headers);
    const call: Received = {
      role: session instanceof Response ? null : session.role,
      field,
      headers: request.headers,
      variables: body.variables,
    };
    received.push(call);
    if (mode !== "ok" && failing(call)) {
      if (mode === "down") throw new TypeError("Network connection lost.");
      if (mode === "hang") return new Promise<Response>(() => {});
      if (mode === "500") return new Response("internal error", { status: 500 });
      if (mode === "not-json") return new Response("<html>a proxy's error page</html>", { status: 200 });
      if (mode === "not-graphql") return Response.json({ result: "ok" });
      return errorAnswer("unexpected", "database query error");
    }
    if (session instanceof Response) return session;
    const schema = SCHEMAS[session.role] ?? SCHEMAS.me!;
    const invalid = validate(schema, document);
    if (invalid.length > 0) return errorAnswer("validation-failed", invalid[0]!.message);
    const result = await execute({
      schema,
      document,
      variableValues: body.variables,
      rootValue: Object.fromEntries(
        Object.entries(rootValue).map(([name, resolve]) => [
          name,
          (args: never) => (resolve as (args: never, s: Session) => unknown)(args, session),
        ]),
      ),
    });
    const [first] = result.errors ?? [];
    if (first) {
      const original = first.originalError;
      if (original instanceof HasuraError) return errorAnswer(original.code, original.message);
      if (!original || original instanceof GraphQLError)
        return errorAnswer("validation-failed", first.message);
      return errorAnswer("unexpected", first.message);
    }
    return Response.json({ data: result.data });
  }

  return {
    tables,
    received,
    fetch,
    /** The service's JWKS: tokens it forwards are checked against it, as Hasura's `jwk_url` would. */
    trust(jwks: JSONWebKeySet) {
      keys = createLocalJWKSet(jwks);
    },
    setMode(next: Mode, only: (request: Received) => boolean = () => true) {
      mode = next;
      failing = only;
    },
    /** What the service asked, as `role:field`. */
    asked: () => received.map((request) => `${request.role}:${request.field}`),
  };
}
