import { Hono } from "hono";
import { z } from "zod";
import { auditAdminAction } from "../audit/admin-action";
import type { AppEnv } from "../http/app-env";
import { NO_CONTENT, operation } from "../http/documented";
import { jsonBody, queryParams } from "../http/validation";
import { readDocument, replacePolicies, replaceSchema } from "./documents";
import { deleteRelationship, relationshipSchema, writeRelationship } from "./relationships";
import type { DocumentKind } from "./store";

/**
 * The admin API of permissions (contract platform.md §2), behind the admin secret: the Cedar schema, the policy set
 * (the whole set each time, every version kept) and the relationships. A text that does not parse or validate is
 * refused with Cedar's message and the one in force stays.
 */

const MAX_TEXT = 256 * 1024;

// Cedar's parser throws on a text with a lone surrogate, rather than answering: `jsonBody` refuses every body holding
// one (src/http/validation.ts), these included.
const cedarText = () => z.string().max(MAX_TEXT);
const schemaBody = z.object({ schema: cedarText().pipe(z.string().min(1)) });
const policiesBody = z.object({ policies: cedarText() });
const versionQuery = z.object({ version: z.coerce.number().int().positive().optional() });

const documentAnswer = (kind: DocumentKind) =>
  z.object({
    [kind]: z.string().nullable(),
    version: z.number().int().describe("This text's version; versions count every change to either document"),
    versions: z.array(z.object({ version: z.number().int(), createdAt: z.number().int() })),
  });

/** The admin API's answer: the text under its kind's name. */
const wireDocument = (kind: DocumentKind, { text, ...rest }: Awaited<ReturnType<typeof readDocument>>) => ({
  [kind]: text,
  ...rest,
});

const documentRoutes = (kind: DocumentKind, summary: string) =>
  operation({
    summary: `Show the ${summary}`,
    description: `The ${summary} in force (\`?version=\` for an older one) and its latest versions, newest first.`,
    security: "admin-secret",
    answers: { 200: { description: `The ${summary}.`, schema: documentAnswer(kind) } },
  });

export const permissionAdminRoutes = new Hono<AppEnv>()
  .get("/authz/schema", documentRoutes("schema", "Cedar schema"), queryParams(versionQuery), async (c) =>
    c.json(wireDocument("schema", await readDocument(c.var.deps, "schema", c.req.valid("query").version))),
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
      const version = await replaceSchema(c.var.deps, c.req.valid("json").schema);
      auditAdminAction(c, "authz.schema", null, { version });
      return c.json({ version });
    },
  )
  .get(
    "/authz/policies",
    documentRoutes("policies", "Cedar policy set"),
    queryParams(versionQuery),
    async (c) =>
      c.json(
        wireDocument("policies", await readDocument(c.var.deps, "policies", c.req.valid("query").version)),
      ),
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
      const version = await replacePolicies(c.var.deps, c.req.valid("json").policies);
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
      const { relationship, created } = await writeRelationship(c.var.deps, c.req.valid("json"));
      if (created) auditAdminAction(c, "authz.relationship.add", null, { ...relationship });
      return c.json(relationship, created ? 201 : 200);
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
      await deleteRelationship(c.var.deps, tuple);
      auditAdminAction(c, "authz.relationship.delete", null, tuple);
      return c.body(null, 204);
    },
  );
