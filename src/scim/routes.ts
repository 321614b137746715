import { type Context, Hono, type MiddlewareHandler } from "hono";
import type { ZodType } from "zod";
import type { AppEnv } from "../http/app-env";
import { documented, NO_CONTENT, operation } from "../http/documented";
import { notJsonBodyReason } from "../http/validation";
import { auditScimWrite } from "./audit";
import { resourceTypes, schemas, serviceProviderConfig } from "./discovery";
import { ScimError, scimErrorResponse, scimJson } from "./errors";
import {
  createScimGroup,
  deleteScimGroup,
  getScimGroup,
  listScimGroups,
  patchScimGroup,
  replaceScimGroup,
} from "./groups";
import { type ListQuery, listQueryOf, listResponse, projected } from "./list-query";
import { type PatchRequest, patchRequestSchema } from "./patch";
import { orgOfScimToken } from "./tokens";
import { userInputSchema } from "./user-resource";
import {
  createScimUser,
  deleteScimUser,
  getScimUser,
  listScimUsers,
  patchScimUser,
  replaceScimUser,
} from "./users";
import { discoverySchema, listSchema, SCIM_ERRORS, scim, scimGroupSchema, scimUserSchema } from "./wire";

type ScimEnv = {
  Bindings: AppEnv["Bindings"];
  Variables: AppEnv["Variables"] & { scimOrgId: string; scimLimited: boolean; scimBody: unknown };
};
type ScimContext = Context<ScimEnv>;

/**
 * Every SCIM handler and middleware answers its own failures in SCIM's body (RFC 7644 §3.12), so none reaches the
 * API's error handler, which speaks the auth API's shape. (A sub-app's `onError` would do it too, but Hono wraps
 * each route's handler for it, which hides the routes' documentation from the OpenAPI document.)
 */
function guarded(handler: MiddlewareHandler<ScimEnv>): MiddlewareHandler<ScimEnv> {
  return async (c, next) => {
    try {
      return await handler(c, next);
    } catch (error) {
      return scimErrorResponse(error, c as never);
    }
  };
}

const WHOLE: ListQuery = { startIndex: 1, count: 2 };

/** `Authorization: Bearer <SCIM token>` → the organization it acts for; anything else 401 in SCIM's body. */
const scimToken = guarded(async (c, next) => {
  const match = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "");
  const found = match ? await orgOfScimToken(c.var.deps, match[1]!) : undefined;
  if (!found) throw new ScimError(401, "a valid SCIM bearer token is required");
  c.set("scimOrgId", found.orgId);
  c.set("scimLimited", found.limited);
  // The IdP's directory acts, for the organization whose token it holds.
  c.var.deps.audit.actAs({ kind: "scim", name: found.orgId });
  await next();
  await auditScimWrite(c as never, found.orgId);
});

/**
 * The body as JSON, `application/scim+json` or `application/json` (RFC 7644 §3.1); malformed JSON or another type is
 * 400 `invalidSyntax` in SCIM's body. `schema` is for the document only: each service validates what it stores.
 */
function scimBody(schema: ZodType): MiddlewareHandler<ScimEnv> {
  const read: MiddlewareHandler<ScimEnv> = async (c, next) => {
    const notJson = await notJsonBodyReason(c as never);
    if (notJson)
      throw new ScimError(400, notJson.replace("application/json", "application/scim+json"), "invalidSyntax");
    let body: unknown;
    try {
      body = JSON.parse(await c.req.text());
    } catch {
      throw new ScimError(400, "the body is not JSON", "invalidSyntax");
    }
    if (typeof body !== "object" || body === null || Array.isArray(body))
      throw new ScimError(400, "the body must be a JSON object", "invalidSyntax");
    c.set("scimBody", body);
    await next();
  };
  return documented(guarded(read), { target: "json", schema });
}

function patchOf(c: ScimContext): PatchRequest {
  const result = patchRequestSchema.safeParse(c.var.scimBody);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  throw new ScimError(
    400,
    `${issue.path.map(String).join(".") || "body"}: ${issue.message}`,
    "invalidSyntax",
  );
}

/** The resource id of the path (`/Users/:id`); the handlers are typed without their paths, hence the fallback. */
const idParam = (c: ScimContext) => c.req.param("id") ?? "";
const base = (c: ScimContext) => c.var.config.urls.auth("/scim/v2");
const AUTH_NOTE =
  "Authenticated by a SCIM token of the organization (`Authorization: Bearer scim_…`, contract organizations.md §3); " +
  "answers and errors are `application/scim+json`.";
const single = (c: ScimContext, resource: Record<string, unknown>, status: 200 | 201 = 200) =>
  scimJson(projected(resource, listQueryOf(c.req.query())), status, {
    ...(status === 201 ? { Location: String((resource.meta as { location: string }).location) } : {}),
  });

/** The discovery endpoints (RFC 7644 §4): the same for every organization, so they need no token. */
const discovery = new Hono<ScimEnv>()
  .get(
    "/ServiceProviderConfig",
    operation({
      summary: "SCIM service provider configuration",
      description:
        "What this SCIM service supports (RFC 7643 §5): PATCH and filters yes; bulk, sort, ETags no. No token needed.",
      answers: { 200: scim("The configuration.", discoverySchema) },
    }),
    guarded(async (c) => scimJson(serviceProviderConfig(base(c)))),
  )
  .get(
    "/ResourceTypes",
    operation({
      summary: "SCIM resource types",
      description: "User and Group (RFC 7643 §6), as a ListResponse. No token needed.",
      answers: { 200: scim("The resource types.", listSchema(discoverySchema)) },
    }),
    guarded(async (c) => {
      return scimJson(listResponse(resourceTypes(base(c)), 2, WHOLE));
    }),
  )
  .get(
    "/ResourceTypes/:id",
    operation({
      summary: "A SCIM resource type",
      description: "`User` or `Group` (RFC 7643 §6); 404 in SCIM's body for another. No token needed.",
      answers: { 200: scim("The resource type.", discoverySchema), 404: SCIM_ERRORS[404]! },
    }),
    guarded(async (c) => {
      const found = resourceTypes(base(c)).find((type) => type.id === idParam(c));
      if (!found) throw new ScimError(404, "no such resource type");
      return scimJson(found);
    }),
  )
  .get(
    "/Schemas",
    operation({
      summary: "SCIM schemas",
      description:
        "The User and Group schemas' attributes (RFC 7643 §7), as a ListResponse. No token needed.",
      answers: { 200: scim("The schemas.", listSchema(discoverySchema)) },
    }),
    guarded(async (c) => scimJson(listResponse(schemas(base(c)), 2, WHOLE))),
  )
  .get(
    "/Schemas/:id",
    operation({
      summary: "A SCIM schema",
      description: "A schema by its URN (RFC 7643 §7); 404 in SCIM's body for another. No token needed.",
      answers: { 200: scim("The schema.", discoverySchema), 404: SCIM_ERRORS[404]! },
    }),
    guarded(async (c) => {
      const found = schemas(base(c)).find((schema) => schema.id === idParam(c));
      if (!found) throw new ScimError(404, "no such schema");
      return scimJson(found);
    }),
  );

const USER = scim("The user.", scimUserSchema);
const GROUP = scim("The group.", scimGroupSchema);

const users = new Hono<ScimEnv>()
  .post(
    "/Users",
    operation({
      summary: "SCIM: create a user",
      description: `Creates the user (RFC 7644 §3.3) when \`userName\`, its email, is in one of the org's verified domains (else 400 invalidValue); an existing user with that email becomes a member. 409 uniqueness if it already is one. ${AUTH_NOTE}`,
      answers: { 201: scim("The user.", scimUserSchema), ...SCIM_ERRORS },
    }),
    scimToken,
    scimBody(userInputSchema),
    guarded(async (c) => single(c, await createScimUser(c.var.deps, c.var.scimOrgId, c.var.scimBody), 201)),
  )
  .get(
    "/Users",
    operation({
      summary: "SCIM: list users",
      description: `The org's users, oldest first, by \`startIndex\` (1-based) and \`count\` (at most 200), or those \`filter\` names: eq terms joined by and, on userName, externalId, id or emails[value eq …] (others 400 invalidFilter). ${AUTH_NOTE}`,
      answers: { 200: scim("A ListResponse.", listSchema(scimUserSchema)), ...SCIM_ERRORS },
    }),
    scimToken,
    guarded(async (c) =>
      scimJson(await listScimUsers(c.var.deps, c.var.scimOrgId, listQueryOf(c.req.query()))),
    ),
  )
  .get(
    "/Users/:id",
    operation({
      summary: "SCIM: get a user",
      description: `One user of the org. ${AUTH_NOTE}`,
      answers: { 200: USER, ...SCIM_ERRORS },
    }),
    scimToken,
    guarded(async (c) => single(c, await getScimUser(c.var.deps, c.var.scimOrgId, idParam(c)))),
  )
  .put(
    "/Users/:id",
    operation({
      summary: "SCIM: replace a user",
      description: `Replaces the user's attributes (RFC 7644 §3.5.1); \`userName\` can't change (400 mutability); \`active: false\` suspends the membership and ends the user's sessions in the org at once. ${AUTH_NOTE}`,
      answers: { 200: USER, ...SCIM_ERRORS },
    }),
    scimToken,
    scimBody(userInputSchema),
    guarded(async (c) =>
      single(
        c,
        await replaceScimUser(c.var.deps, c.var.scimOrgId, idParam(c), c.var.scimBody, c.var.scimLimited),
      ),
    ),
  )
  .patch(
    "/Users/:id",
    operation({
      summary: "SCIM: change a user",
      description: `RFC 7644 §3.5.2 add, replace, remove, with or without \`path\` (Entra's and Okta's forms). \`active: false\` suspends the membership and ends the user's sessions in the org at once; \`true\` restores it. ${AUTH_NOTE}`,
      answers: { 200: USER, ...SCIM_ERRORS },
    }),
    scimToken,
    scimBody(patchRequestSchema),
    guarded(async (c) =>
      single(c, await patchScimUser(c.var.deps, c.var.scimOrgId, idParam(c), patchOf(c), c.var.scimLimited)),
    ),
  )
  .delete(
    "/Users/:id",
    operation({
      summary: "SCIM: delete a user",
      description: `Removes the user from the org and ends its sessions in it; deletes the user itself only when this org created it and it belongs to no other. ${AUTH_NOTE}`,
      answers: { 204: NO_CONTENT("Removed."), ...SCIM_ERRORS },
    }),
    scimToken,
    guarded(async (c) => {
      await deleteScimUser(c.var.deps, c.var.scimOrgId, idParam(c), c.var.scimLimited);
      return c.body(null, 204);
    }),
  );

const groups = new Hono<ScimEnv>()
  .post(
    "/Groups",
    operation({
      summary: "SCIM: create a group",
      description: `A group of the org's users (RFC 7644 §3.3); a \`displayName\` that is an org role's name (admin, member or a custom role; never owner) gives its members that role. 409 uniqueness for a taken name. ${AUTH_NOTE}`,
      answers: { 201: scim("The group.", scimGroupSchema), ...SCIM_ERRORS },
    }),
    scimToken,
    scimBody(scimGroupSchema.partial()),
    guarded(async (c) =>
      single(c, await createScimGroup(c.var.deps, c.var.scimOrgId, c.var.scimBody, c.var.scimLimited), 201),
    ),
  )
  .get(
    "/Groups",
    operation({
      summary: "SCIM: list groups",
      description: `The org's groups by \`startIndex\` and \`count\`, or those \`filter\` names (eq on displayName, externalId or id, with members[value eq …]). \`excludedAttributes=members\` leaves members out. ${AUTH_NOTE}`,
      answers: { 200: scim("A ListResponse.", listSchema(scimGroupSchema)), ...SCIM_ERRORS },
    }),
    scimToken,
    guarded(async (c) =>
      scimJson(await listScimGroups(c.var.deps, c.var.scimOrgId, listQueryOf(c.req.query()))),
    ),
  )
  .get(
    "/Groups/:id",
    operation({
      summary: "SCIM: get a group",
      description: `One group of the org with its members. ${AUTH_NOTE}`,
      answers: { 200: GROUP, ...SCIM_ERRORS },
    }),
    scimToken,
    guarded(async (c) => {
      const query = listQueryOf(c.req.query());
      const withMembers = !query.excludedAttributes?.some((name) => name.toLowerCase() === "members");
      return single(c, await getScimGroup(c.var.deps, c.var.scimOrgId, idParam(c), withMembers));
    }),
  )
  .put(
    "/Groups/:id",
    operation({
      summary: "SCIM: replace a group",
      description: `Replaces the group's name and members (RFC 7644 §3.5.1); members' roles follow. ${AUTH_NOTE}`,
      answers: { 200: GROUP, ...SCIM_ERRORS },
    }),
    scimToken,
    scimBody(scimGroupSchema.partial()),
    guarded(async (c) =>
      single(
        c,
        await replaceScimGroup(c.var.deps, c.var.scimOrgId, idParam(c), c.var.scimBody, c.var.scimLimited),
      ),
    ),
  )
  .patch(
    "/Groups/:id",
    operation({
      summary: "SCIM: change a group",
      description: `RFC 7644 §3.5.2: members added, removed (by filter or by value) or replaced, the name replaced; members' roles follow. ${AUTH_NOTE}`,
      answers: { 200: GROUP, ...SCIM_ERRORS },
    }),
    scimToken,
    scimBody(patchRequestSchema),
    guarded(async (c) =>
      single(c, await patchScimGroup(c.var.deps, c.var.scimOrgId, idParam(c), patchOf(c), c.var.scimLimited)),
    ),
  )
  .delete(
    "/Groups/:id",
    operation({
      summary: "SCIM: delete a group",
      description: `Deletes the group; the roles it gave its members go with it. ${AUTH_NOTE}`,
      answers: { 204: NO_CONTENT("Deleted."), ...SCIM_ERRORS },
    }),
    scimToken,
    guarded(async (c) => {
      await deleteScimGroup(c.var.deps, c.var.scimOrgId, idParam(c), c.var.scimLimited);
      return c.body(null, 204);
    }),
  );

/** `{prefix}/scim/v2/…`: every answer, errors included, in SCIM's own shape. */
export const scimRoutes = new Hono<ScimEnv>()
  .route("/scim/v2", discovery)
  .route("/scim/v2", users)
  .route("/scim/v2", groups)
  .all(
    "/scim/v2/*",
    guarded(async () => {
      throw new ScimError(404, "no such SCIM endpoint");
    }),
  );
