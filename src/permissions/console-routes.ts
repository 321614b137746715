import type { Context } from "hono";
import { Hono } from "hono";
import {
  type ConsoleChrome,
  consoleAction,
  consoleBack,
  consoleChrome,
  consoleFrame,
  consolePage,
  renderConsole,
} from "../admin";
import { auditAdminAction } from "../audit/admin-action";
import { AppError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { type PermissionsView, permissionsPage, type TryForm } from "./console-page";
import { policiesRefusal, readDocument, replacePolicies, replaceSchema, schemaRefusal } from "./documents";
import { evaluate } from "./evaluate";
import { deleteRelationship, writeRelationship } from "./relationships";
import { CEDAR_TYPE, PermissionRequestError } from "./request";
import { type Relationship, relationshipsOf } from "./store";

/**
 * The console's permissions pages (contract platform.md §2): the same changes as the admin API (documents.ts), each a
 * form post behind the console's session, Origin and CSRF checks (src/admin/console/handlers.ts), audited under the
 * admin API's names. A refused text comes back in its form with Cedar's message, and the one in force stays.
 */

type Ctx = Context<AppEnv>;
type Form = Record<string, unknown>;

const MAX_TEXT = 256 * 1024;
const RELATION = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

const field = (form: Form, name: string, max = 512) => {
  const value = form[name];
  return typeof value === "string" ? value.slice(0, max) : "";
};

async function viewOf(c: Ctx, extra: Partial<PermissionsView> = {}): Promise<PermissionsView> {
  const { deps } = c.var;
  const [schema, policies] = await Promise.all([
    readDocument(deps, "schema"),
    readDocument(deps, "policies"),
  ]);
  return { schema, policies, ...extra };
}

const show = async (c: Ctx, chrome: ConsoleChrome, view: PermissionsView, status: 200 | 400 = 200) =>
  renderConsole(c, "Permissions", consoleFrame(chrome, permissionsPage(chrome, view)), status);

/** A resource named in a form: its Cedar type and id, or null when the type is no Cedar name. */
function resourceOf(form: Form): { type: string; id: string } | null {
  const type = field(form, "resourceType", 256).trim();
  const id = field(form, "resourceId");
  return CEDAR_TYPE.test(type) && id ? { type, id } : null;
}

function tupleOf(form: Form): Relationship | null {
  const resource = resourceOf(form);
  const relation = field(form, "relation", 64).trim();
  const subject = { type: field(form, "subjectType", 256).trim(), id: field(form, "subjectId") };
  if (!resource || !RELATION.test(relation) || !CEDAR_TYPE.test(subject.type) || !subject.id) return null;
  return { resource, relation, subject };
}

async function lookupOf(c: Ctx, resource: { type: string; id: string }) {
  const rows = await relationshipsOf(c.var.deps.db, resource);
  const relationships = rows.map((row) => ({
    resource,
    relation: row.relation,
    subject: { type: row.subjectType, id: row.subjectId },
  }));
  return { ...resource, relationships };
}

/** Validate or save one document; a refusal shows the text again with Cedar's message (400). */
const documentAction = (kind: "schema" | "policies") =>
  consoleAction(async (c, session) => {
    const form = (await c.req.parseBody()) as Form;
    const text = field(form, "text", MAX_TEXT + 1);
    const chrome = await consoleChrome(c, session, "permissions");
    const draft = { kind, text };
    if (text.length > MAX_TEXT || (kind === "schema" && !text.trim())) {
      const error = text.length > MAX_TEXT ? "the text is longer than 256 KiB" : "the schema is empty";
      return show(c, chrome, await viewOf(c, { draft, outcome: { kind, error } }), 400);
    }
    if (field(form, "intent", 16) === "validate") {
      const problem =
        kind === "schema" ? await schemaRefusal(c.var.deps, text) : await policiesRefusal(c.var.deps, text);
      const outcome = problem ? { kind, error: problem } : { kind, ok: "Valid: nothing is saved yet." };
      return show(c, chrome, await viewOf(c, { draft, outcome }), problem ? 400 : 200);
    }
    try {
      const version =
        kind === "schema" ? await replaceSchema(c.var.deps, text) : await replacePolicies(c.var.deps, text);
      auditAdminAction(c, kind === "schema" ? "authz.schema" : "authz.policies", null, { version });
    } catch (error) {
      if (!(error instanceof AppError) || error.status >= 500) throw error;
      return show(c, chrome, await viewOf(c, { draft, outcome: { kind, error: error.message } }), 400);
    }
    return consoleBack(c, "/permissions", kind === "schema" ? "schema-saved" : "policies-saved");
  });

/** The object a JSON field holds, or the reason it is not one. */
function objectOf(text: string, name: string): Record<string, unknown> | string {
  try {
    const value = JSON.parse(text.trim() || "{}") as unknown;
    if (value && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Shown as the reason below.
  }
  return `${name} must be a JSON object`;
}

const tryAction = consoleAction(async (c, session) => {
  const form = (await c.req.parseBody()) as Form;
  const tried: TryForm = {
    subject: field(form, "subject"),
    action: field(form, "action", 256),
    resourceType: field(form, "resourceType", 256),
    resourceId: field(form, "resourceId"),
    properties: field(form, "properties", 65536),
    context: field(form, "context", 65536),
  };
  const chrome = await consoleChrome(c, session, "permissions");
  const properties = objectOf(tried.properties, "the resource's properties");
  const context = objectOf(tried.context, "the context");
  const refused = typeof properties === "string" ? properties : typeof context === "string" ? context : null;
  if (refused) {
    return show(
      c,
      chrome,
      await viewOf(c, { tried: { form: tried }, outcome: { kind: "try", error: refused } }),
      400,
    );
  }
  try {
    const decision = await evaluate(c.var.deps, {
      subject: { type: "user", id: tried.subject.trim() },
      action: { name: tried.action.trim() },
      resource: { type: tried.resourceType.trim(), id: tried.resourceId, properties },
      context,
    });
    return show(c, chrome, await viewOf(c, { tried: { form: tried, decision } }));
  } catch (error) {
    if (!(error instanceof PermissionRequestError)) throw error;
    return show(
      c,
      chrome,
      await viewOf(c, { tried: { form: tried }, outcome: { kind: "try", error: error.message } }),
      400,
    );
  }
});

const relationshipAction = (change: "add" | "remove") =>
  consoleAction(async (c, session) => {
    const form = (await c.req.parseBody()) as Form;
    const tuple = tupleOf(form);
    const chrome = await consoleChrome(c, session, "permissions");
    const resource = resourceOf(form);
    const lookup = resource ? await lookupOf(c, resource) : undefined;
    const refuse = (error: string) =>
      viewOf(c, { lookup, outcome: { kind: "relationships", error } }).then((view) =>
        show(c, chrome, view, 400),
      );
    if (!tuple)
      return refuse(
        "a resource (a Cedar type and an id), a relation (letters, digits, _) and a subject are needed",
      );
    try {
      if (change === "add") {
        if ((await writeRelationship(c.var.deps, tuple)).created)
          auditAdminAction(c, "authz.relationship.add", null, { ...tuple });
      } else {
        await deleteRelationship(c.var.deps, tuple);
        auditAdminAction(c, "authz.relationship.delete", null, { ...tuple });
      }
    } catch (error) {
      if (!(error instanceof AppError) || error.status >= 500) throw error;
      return refuse(error.message);
    }
    const query = `resourceType=${encodeURIComponent(tuple.resource.type)}&resourceId=${encodeURIComponent(tuple.resource.id)}`;
    return c.redirect(
      `${chrome.base}/permissions?${query}&done=${change === "add" ? "relationship-added" : "relationship-removed"}#relationships`,
      303,
    );
  });

export const permissionConsoleRoutes = new Hono<AppEnv>()
  .get(
    "/permissions",
    consolePage(async (c, session) => {
      const chrome = await consoleChrome(c, session, "permissions");
      const resource = resourceOf(c.req.query());
      return show(c, chrome, await viewOf(c, resource ? { lookup: await lookupOf(c, resource) } : {}));
    }),
  )
  .post("/permissions/schema", documentAction("schema"))
  .post("/permissions/policies", documentAction("policies"))
  .post("/permissions/try", tryAction)
  .post("/permissions/relationships/add", relationshipAction("add"))
  .post("/permissions/relationships/remove", relationshipAction("remove"));
