import { Hono } from "hono";
import { z } from "zod";
import { auditAdminAction } from "../audit/admin-action";
import { AppError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { NO_CONTENT, operation } from "../http/documented";
import { jsonBody, queryParams } from "../http/validation";
import { rememberActiveSet } from "./active-set";
import { policiesProblem, schemaProblem } from "./engine";
import { forgetRelationships } from "./evaluate";
import { CEDAR_TYPE, USER_ATTRIBUTES } from "./request";
import {
  addRelationship,
  addVersion,
  type DocumentKind,
  documentVersion,
  listVersions,
  loadActiveSet,
  removeRelationship,
} from "./store";

/**
 * The admin API of permissions (contract platform.md §2), behind the admin secret: the Cedar schema, the policy set
 * (the whole set each time, every version kept) and the relationships. A text that does not parse or validate is
 * refused with Cedar's message and the one in force stays.
 */

const MAX_TEXT = 256 * 1024;
const VERSIONS_LISTED = 20;

const ref = z.object({
  type: z.string().regex(CEDAR_TYPE, "a Cedar entity type name (identifiers joined by ::)"),
  id: z.string().min(1).max(512),
});
const relationshipSchema = z.object({
  resource: ref,
  relation: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, "an identifier: letters, digits and _"),
  subject: ref,
});
const schemaBody = z.object({ schema: z.string().min(1).max(MAX_TEXT) });
const policiesBody = z.object({ policies: z.string().max(MAX_TEXT) });
const versionQuery = z.object({ version: z.coerce.number().int().positive().optional() });

const documentAnswer = (kind: DocumentKind) =>
  z.object({
    [kind]: z.string().nullable(),
    version: z.number().int().describe("This text's version; versions count every change to either document"),
    versions: z.array(z.object({ version: z.number().int(), createdAt: z.number().int() })),
  });

/** The text in force (or the version asked for) and the latest versions of it. */
async function readDocument(deps: AppEnv["Variables"]["deps"], kind: DocumentKind, version?: number) {
  const versions = await listVersions(deps.db, kind, VERSIONS_LISTED);
  if (version !== undefined) {
    const row = await documentVersion(deps.db, kind, version);
    if (!row) throw new AppError("not-found", `no ${kind} version ${version}`);
    return { [kind]: row.text, version: row.version, versions };
  }
  const newest = versions[0];
  const row = newest ? await documentVersion(deps.db, kind, newest.version) : undefined;
  return { [kind]: row?.text ?? null, version: row?.version ?? 0, versions };
}

/** Writes a new version while nothing changed since `expected`; the writer's isolate sees it at once. */
async function write(deps: AppEnv["Variables"]["deps"], kind: DocumentKind, text: string, expected: number) {
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

const documentRoutes = (kind: DocumentKind, summary: string) =>
  operation({
    summary: `Show the ${summary}`,
    description: `The ${summary} in force (\`?version=\` for an older one) and its latest versions, newest first.`,
    security: "admin-secret",
    answers: { 200: { description: `The ${summary}.`, schema: documentAnswer(kind) } },
  });

export const permissionAdminRoutes = new Hono<AppEnv>()
  .get("/authz/schema", documentRoutes("schema", "Cedar schema"), queryParams(versionQuery), async (c) =>
    c.json(await readDocument(c.var.deps, "schema", c.req.valid("query").version)),
  )
  .put(
    "/authz/schema",
    operation({
      summary: "Replace the Cedar schema",
      description:
        "The schema in Cedar's text form. Refused (400, Cedar's message) when it does not parse, or when the policy " +
        "set in force does not validate against it; the schema in force then stays. Audited (`admin.authz.schema`).",
      security: "admin-secret",
      answers: { 200: { description: "The new version.", schema: z.object({ version: z.number().int() }) } },
    }),
    jsonBody(schemaBody),
    async (c) => {
      const { schema } = c.req.valid("json");
      const current = await loadActiveSet(c.var.deps.db);
      const problem =
        schemaProblem(schema) ?? (current.policies ? policiesProblem(current.policies, schema) : null);
      if (problem) throw new AppError("invalid-request", problem);
      const version = await write(c.var.deps, "schema", schema, current.version);
      auditAdminAction(c, "authz.schema", null, { version });
      return c.json({ version });
    },
  )
  .get(
    "/authz/policies",
    documentRoutes("policies", "Cedar policy set"),
    queryParams(versionQuery),
    async (c) => c.json(await readDocument(c.var.deps, "policies", c.req.valid("query").version)),
  )
  .put(
    "/authz/policies",
    operation({
      summary: "Replace the Cedar policy set",
      description:
        "The whole set, in Cedar's text form, validated against the schema in force (strict mode). Refused (400, " +
        "Cedar's message) when it does not parse or validate, or when there is no schema yet; the set in force then " +
        "stays. Every version is kept. Seen by every check within one second. Audited (`admin.authz.policies`).",
      security: "admin-secret",
      answers: { 200: { description: "The new version.", schema: z.object({ version: z.number().int() }) } },
    }),
    jsonBody(policiesBody),
    async (c) => {
      const { policies } = c.req.valid("json");
      const current = await loadActiveSet(c.var.deps.db);
      if (!current.schema) {
        throw new AppError("invalid-request", "no schema yet: PUT /admin/authz/schema first");
      }
      const problem = policiesProblem(policies, current.schema);
      if (problem) throw new AppError("invalid-request", problem);
      const version = await write(c.var.deps, "policies", policies, current.version);
      auditAdminAction(c, "authz.policies", null, { version });
      return c.json({ version });
    },
  )
  .post(
    "/authz/relationships",
    operation({
      summary: "Store a relationship",
      description:
        "`{resource:{type,id}, relation, subject:{type,id}}`: in a check, the resource's attribute `relation` holds " +
        "its subjects (`principal in resource.editors`). 201 when new, 200 when it was there. Audited.",
      security: "admin-secret",
      answers: {
        200: { description: "It was there.", schema: relationshipSchema },
        201: { description: "Stored.", schema: relationshipSchema },
      },
    }),
    jsonBody(relationshipSchema),
    async (c) => {
      const tuple = c.req.valid("json");
      // A user's own attributes are the service's: no relationship may stand in for one.
      if (tuple.resource.type === "User" && USER_ATTRIBUTES.has(tuple.relation)) {
        throw new AppError(
          "invalid-request",
          `${tuple.relation} is an attribute the service supplies for User`,
        );
      }
      const added = await addRelationship(c.var.deps.db, tuple, c.var.deps.now());
      forgetRelationships(tuple.resource.type, tuple.resource.id);
      if (added) auditAdminAction(c, "authz.relationship.add", null, tuple);
      return c.json(tuple, added ? 201 : 200);
    },
  )
  .delete(
    "/authz/relationships",
    operation({
      summary: "Delete a relationship",
      description: "The tuple as the body. 204, or 404 when there was none. Audited.",
      security: "admin-secret",
      answers: { 204: NO_CONTENT("Deleted.") },
    }),
    jsonBody(relationshipSchema),
    async (c) => {
      const tuple = c.req.valid("json");
      const removed = await removeRelationship(c.var.deps.db, tuple);
      forgetRelationships(tuple.resource.type, tuple.resource.id);
      if (!removed) throw new AppError("not-found", "no such relationship");
      auditAdminAction(c, "authz.relationship.delete", null, tuple);
      return c.body(null, 204);
    },
  );
