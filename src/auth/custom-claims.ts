/**
 * `AUTH_JWT_CUSTOM_CLAIMS` as Nhost reads it (contract move-in §4): the GraphQL query built from the paths, the value
 * each path picks out of the answer, and the way a value is written into the token. Pure: no I/O (the query is sent by
 * custom-claims-graphql.ts, and token-claims.ts decides what a failure means).
 *
 * Matched against Nhost Auth's own Go code (github.com/nhost/hasura-auth, `go/controller/custom_claims.go` and
 * `go/controller/jwt.go`, as of commit 838f397d):
 * - the query: `smartSplit`, `parseClaims` (the `[` suffix cut off, `metadata` a leaf wherever it appears: Hasura
 *   cannot select inside a JSON column), `mergeMaps` (a selection set wins over a leaf) and `claimsMapToGraphql` (keys
 *   sorted, a leaf followed by one space), inside `query GetClaims($id: uuid!) { user(id:$id) … }`;
 * - the values: a path ending in `[]` goes through `getClaimsBackwardsCompatibility` (an array met on the way is
 *   mapped element by element); any other path through Kubernetes' JSONPath, `{ .<path> }` with `[]` read as `[*]`
 *   (missing keys and nulls skipped, nothing found at all is "no value"; a path with `[]` or `[*]` gives an array,
 *   another its first match); no value → the claim's default (`AUTH_JWT_CUSTOM_CLAIMS_DEFAULTS`) or nothing;
 * - the encoding, `pgEncode`: nothing → the string `null`; an array → its JSON with the outer brackets turned into
 *   braces (a Postgres array literal: `{"a","b"}`, `{1,2}`); a string as it is; anything else its JSON text (Go's
 *   `encoding/json`: object keys sorted, `<`, `>`, `&`, U+2028 and U+2029 escaped);
 * - the names, `addClaimsToMap`: `x-hasura-` prepended unless the name has it, lower-cased (the contract lower-cases
 *   a name given with the prefix too), and a name already in the claims (a built-in one) never overwritten.
 * An index (`m.l[2]`) picks one element, as there. JSONPath filters (`[?(@.v == 'a')]`) are not supported: config.ts
 * refuses such a path at start.
 */

export type ClaimPaths = Readonly<Record<string, string>>;

export const CLAIM_PREFIX = "x-hasura-";

/** The claim a configured name becomes: `organisation-id` → `x-hasura-organisation-id`. */
export function claimName(name: string): string {
  const lower = name.toLowerCase();
  return lower.startsWith(CLAIM_PREFIX) ? lower : `${CLAIM_PREFIX}${lower}`;
}

/** A path's parts, split at dots outside brackets (Nhost's `smartSplit`). */
function smartSplit(path: string): string[] {
  const parts: string[] = [];
  let current = "";
  let depth = 0;
  for (const char of path) {
    if (char === "[") depth++;
    else if (char === "]") depth--;
    if (char === "." && depth === 0) {
      parts.push(current);
      current = "";
    } else current += char;
  }
  if (current.length > 0) parts.push(current);
  return parts;
}

/** A selection set: a field maps to its own selection set, or to null for a leaf. */
type Selection = { [field: string]: Selection | null };

/** Nhost's `parseClaims`: the selection one path needs. */
function selectionOf(parts: string[]): Selection {
  const field = parts[0]!.split("[")[0]!;
  if (parts.length === 1 || field === "metadata") return { [field]: null };
  return { [field]: selectionOf(parts.slice(1)) };
}

/** Nhost's `mergeMaps`: two selection sets into one; a field that is a leaf in one and a set in the other is the set. */
function merge(a: Selection, b: Selection): Selection {
  const result: Selection = { ...a };
  for (const [field, value] of Object.entries(b)) {
    const have = result[field];
    if (have && value) result[field] = merge(have, value);
    else result[field] = have ?? value;
  }
  return result;
}

/** Nhost's `claimsMapToGraphql`: fields in sorted order, a leaf followed by a space, no other white space. */
function selectionText(selection: Selection): string {
  let text = "{";
  for (const field of Object.keys(selection).sort()) {
    const sub = selection[field];
    text += sub ? field + selectionText(sub) : `${field} `;
  }
  return `${text}}`;
}

/**
 * The query sent to `HASURA_GRAPHQL_GRAPHQL_URL`, character for character Nhost's: for
 * `{"organisation-id":"profile.organisation.id","project-ids":"profile.contributesTo[].project.id"}` it is
 * `query GetClaims($id: uuid!) { user(id:$id) {profile{contributesTo{project{id }}organisation{id }}} }`.
 */
export function claimsQuery(paths: ClaimPaths): string {
  let selection: Selection = {};
  for (const path of Object.values(paths)) selection = merge(selection, selectionOf(smartSplit(path)));
  return `query GetClaims($id: uuid!) { user(id:$id) ${selectionText(selection)} }`;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const has = (object: Record<string, unknown>, key: string) => Object.hasOwn(object, key);

/** Nhost's `getClaimsBackwardsCompatibility`, for paths ending in `[]`: an array met on the way is mapped. */
function backwardsCompatible(data: unknown, parts: string[]): unknown {
  if (parts.length === 0) return data;
  const field = parts[0]!.replace(/[[\]]+$/, "");
  if (isObject(data)) return has(data, field) ? backwardsCompatible(data[field], parts.slice(1)) : null;
  if (Array.isArray(data)) return data.map((element) => backwardsCompatible(element, parts));
  return null;
}

const NOT_FOUND = Symbol("not found");

/**
 * Kubernetes' JSONPath as Nhost runs it (`{ .a.b[*].c }`, `allowMissingKeys` off): each step maps the current list
 * of values, skipping nulls and values without the key; a field step that finds nothing at all is "not found"; an
 * array step over something that is not an array, or an index past the end, is an error (also "no value").
 */
function jsonPath(data: unknown, parts: string[]): unknown[] | typeof NOT_FOUND {
  let values: unknown[] = [data];
  for (const part of parts) {
    const field = part.split("[")[0]!;
    const found: unknown[] = [];
    for (const value of values) {
      if (isObject(value) && has(value, field)) found.push(value[field]);
    }
    // "If there's no input, there's no output": nothing left (an empty array on the way) is an empty result.
    if (found.length === 0 && values.length > 0) return NOT_FOUND;
    values = found;
    const bracket = /\[(\*|\d+)?\]$/.exec(part);
    if (bracket) {
      const elements: unknown[] = [];
      for (const value of values) {
        if (value === null || value === undefined) continue;
        if (!Array.isArray(value)) return NOT_FOUND;
        if (bracket[1] === undefined || bracket[1] === "*") elements.push(...value);
        else if (Number(bracket[1]) < value.length) elements.push(value[Number(bracket[1])]);
        else return NOT_FOUND;
      }
      values = elements;
    }
  }
  return values;
}

/** What `path` picks out of `data` (the `user` object of the answer, or the service's own user); null: nothing. */
export function valueAt(data: unknown, path: string): unknown {
  if (path.endsWith("[]")) return backwardsCompatible(data, path.split(".")) ?? null;
  const found = jsonPath(data, smartSplit(path));
  if (found === NOT_FOUND) return null;
  if (path.includes("[]") || path.includes("[*]")) return found;
  return found[0] ?? null;
}

/** Go's `encoding/json` text of a JSON value: object keys sorted, HTML characters and line separators escaped. */
function goJson(value: unknown): string {
  const sorted = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sorted);
    if (isObject(v)) {
      return Object.fromEntries(
        Object.keys(v)
          .sort()
          .map((key) => [key, sorted(v[key])]),
      );
    }
    return v;
  };
  return (JSON.stringify(sorted(value)) ?? "null").replace(
    /[<>&\u2028\u2029]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** Nhost's `pgEncode`: how a value is written into the token (see the top of this file). */
export function encodeClaim(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (Array.isArray(value)) {
    const text = goJson(value);
    return `{${text.slice(1, -1)}}`;
  }
  if (typeof value === "string") return value;
  return goJson(value);
}

/**
 * The custom claims of one user: each configured name, as `x-hasura-<name>`, with the value its path picks out of
 * `data` or else its default, encoded as Nhost does. `data` null (no such user) gives every claim its default.
 */
export function customClaimValues(
  paths: ClaimPaths,
  data: unknown,
  defaults: Readonly<Record<string, unknown>>,
): Record<string, string> {
  const claims: Record<string, string> = {};
  for (const [name, path] of Object.entries(paths)) {
    const value = valueAt(data, path);
    claims[claimName(name)] = encodeClaim(
      value === null && Object.hasOwn(defaults, name) ? defaults[name] : value,
    );
  }
  return claims;
}
