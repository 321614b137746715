import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { rememberActiveSet } from "./active-set";
import { loadCedar } from "./cedar";
import {
  type ActiveSet,
  addVersion,
  type DocumentKind,
  documentVersion,
  listVersions,
  loadActiveSet,
} from "./store";

/**
 * The changes an operator makes to permissions, the same through the admin API (admin-routes.ts) and the console
 * (console-routes.ts): a schema or policy set is validated by Cedar against what is in force and written only while
 * nothing changed meanwhile. Relationships have theirs in relationships.ts.
 */

type Store = Pick<Deps, "db" | "now">;

const VERSIONS_LISTED = 20;

/** The text in force (or the version asked for) and the latest versions of it. */
export async function readDocument(deps: Store, kind: DocumentKind, version?: number) {
  const versions = await listVersions(deps.db, kind, VERSIONS_LISTED);
  if (version !== undefined) {
    const row = await documentVersion(deps.db, kind, version);
    if (!row) throw new AppError("not-found", `no ${kind} version ${version}`);
    return { text: row.text, version: row.version, versions };
  }
  const newest = versions[0];
  const row = newest ? await documentVersion(deps.db, kind, newest.version) : undefined;
  return { text: row?.text ?? null, version: row?.version ?? 0, versions };
}

/** Writes a new version while nothing changed since `expected`; the writer's isolate sees it at once. */
async function write(deps: Store, kind: DocumentKind, text: string, expected: number): Promise<number> {
  const version = await addVersion(deps.db, kind, text, expected, deps.now());
  if (version === null) {
    throw new AppError(
      "invalid-request",
      "the schema or the policies changed meanwhile: read them and send again",
    );
  }
  rememberActiveSet(await loadActiveSet(deps.db), deps.now());
  return version;
}

/** Why `schema` cannot replace the schema of `current` (Cedar's message: it does not parse, or the policies fail it). */
async function schemaProblemFor(current: ActiveSet, schema: string): Promise<string | null> {
  const { policiesProblem, schemaProblem } = await loadCedar();
  return schemaProblem(schema) ?? (current.policies ? policiesProblem(current.policies, schema) : null);
}

/** Why `policies` cannot replace the set of `current` (no schema yet, or Cedar's message). */
async function policiesProblemFor(current: ActiveSet, policies: string): Promise<string | null> {
  if (!current.schema) return "no schema yet: set the schema first";
  const { policiesProblem } = await loadCedar();
  return policiesProblem(policies, current.schema);
}

/** Why this schema cannot replace the one in force, or null: the console's Validate, which writes nothing. */
export async function schemaRefusal(deps: Store, schema: string): Promise<string | null> {
  return schemaProblemFor(await loadActiveSet(deps.db), schema);
}

/** Why this policy set cannot replace the one in force, or null: the console's Validate, which writes nothing. */
export async function policiesRefusal(deps: Store, policies: string): Promise<string | null> {
  return policiesProblemFor(await loadActiveSet(deps.db), policies);
}

/** Replaces the schema; refused (400, Cedar's message) when it does not parse or the policies in force fail it. */
export async function replaceSchema(deps: Store, schema: string): Promise<number> {
  const current = await loadActiveSet(deps.db);
  const problem = await schemaProblemFor(current, schema);
  if (problem) throw new AppError("invalid-request", problem);
  return write(deps, "schema", schema, current.version);
}

/** Replaces the whole policy set; refused (400, Cedar's message) when it does not validate against the schema. */
export async function replacePolicies(deps: Store, policies: string): Promise<number> {
  const current = await loadActiveSet(deps.db);
  const problem = await policiesProblemFor(current, policies);
  if (problem) throw new AppError("invalid-request", problem);
  return write(deps, "policies", policies, current.version);
}
