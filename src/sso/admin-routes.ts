import { Hono } from "hono";
import type { AppEnv } from "../http/app-env";
import { NO_CONTENT, operation } from "../http/documented";
import { pageSchema } from "../http/paging";
import { jsonBody } from "../http/validation";
import { getOrg } from "../orgs";
import {
  connectionPatchSchema,
  connectionSchema,
  createConnection,
  deleteConnection,
  getConnection,
  listConnections,
  newConnectionSchema,
  toWireConnection,
  updateConnection,
} from "./connections";
import { addDomain, deleteDomain, domainSchema, listDomains, toWireDomain, verifyDomain } from "./domains";
import { setEnforceSso } from "./enforcement";
import { domainBody, enforceBody, enforceSchema } from "./org-routes";

/**
 * Enterprise sign-in in the admin API (behind the admin secret, mounted by src/runtime/app.ts): the owner's routes of
 * ./org-routes.ts for any org (contract organizations.md: "the admin API mirrors these routes"), and a domain marked
 * verified without DNS. An org that does not exist: 404 `not-found`.
 */

const ANY_ORG = "Any organization (404 `not-found` when there is none).";

export const ssoAdminRoutes = new Hono<AppEnv>()
  .post(
    "/orgs/:orgId/connections",
    operation({
      summary: "Add an org's enterprise connection",
      description: `As \`POST /orgs/{orgId}/connections\`. ${ANY_ORG}`,
      security: "admin-secret",
      answers: { 201: { description: "The connection.", schema: connectionSchema } },
    }),
    jsonBody(newConnectionSchema),
    async (c) => {
      const org = await getOrg(c.var.deps, c.req.param("orgId"));
      const row = await createConnection(c.var.deps, org.id, c.req.valid("json"));
      return c.json(toWireConnection(c.var.deps, row), 201);
    },
  )
  .get(
    "/orgs/:orgId/connections",
    operation({
      summary: "List an org's enterprise connections",
      description: `Oldest first, all of them. ${ANY_ORG}`,
      security: "admin-secret",
      answers: { 200: { description: "The connections.", schema: pageSchema(connectionSchema) } },
    }),
    async (c) => {
      const org = await getOrg(c.var.deps, c.req.param("orgId"));
      const rows = await listConnections(c.var.deps, org.id);
      return c.json({ items: rows.map((row) => toWireConnection(c.var.deps, row)), nextCursor: null });
    },
  )
  .get(
    "/orgs/:orgId/connections/:id",
    operation({
      summary: "Get an org's enterprise connection",
      description: "Another org's connection: 404 `not-found`.",
      security: "admin-secret",
      answers: { 200: { description: "The connection.", schema: connectionSchema } },
    }),
    async (c) => {
      const row = await getConnection(c.var.deps, c.req.param("orgId"), c.req.param("id"));
      return c.json(toWireConnection(c.var.deps, row));
    },
  )
  .patch(
    "/orgs/:orgId/connections/:id",
    operation({
      summary: "Change an org's enterprise connection",
      description: "As `PATCH /orgs/{orgId}/connections/{id}`.",
      security: "admin-secret",
      answers: { 200: { description: "The connection as it is now.", schema: connectionSchema } },
    }),
    jsonBody(connectionPatchSchema),
    async (c) => {
      const { orgId, id } = c.req.param();
      return c.json(
        toWireConnection(c.var.deps, await updateConnection(c.var.deps, orgId, id, c.req.valid("json"))),
      );
    },
  )
  .delete(
    "/orgs/:orgId/connections/:id",
    operation({
      summary: "Remove an org's enterprise connection",
      description: "Sign-ins under way through it fail.",
      security: "admin-secret",
      answers: { 204: NO_CONTENT("Removed.") },
    }),
    async (c) => {
      await deleteConnection(c.var.deps, c.req.param("orgId"), c.req.param("id"));
      return c.body(null, 204);
    },
  )
  .post(
    "/orgs/:orgId/domains",
    operation({
      summary: "Claim an email domain for an org",
      description: `As \`POST /orgs/{orgId}/domains\`. ${ANY_ORG}`,
      security: "admin-secret",
      answers: { 201: { description: "The domain, unverified.", schema: domainSchema } },
    }),
    jsonBody(domainBody),
    async (c) => {
      const org = await getOrg(c.var.deps, c.req.param("orgId"));
      return c.json(toWireDomain(await addDomain(c.var.deps, org.id, c.req.valid("json").domain)), 201);
    },
  )
  .get(
    "/orgs/:orgId/domains",
    operation({
      summary: "List an org's email domains",
      description: `Verified or not, alphabetical. ${ANY_ORG}`,
      security: "admin-secret",
      answers: { 200: { description: "The domains.", schema: pageSchema(domainSchema) } },
    }),
    async (c) => {
      const org = await getOrg(c.var.deps, c.req.param("orgId"));
      return c.json({ items: (await listDomains(c.var.deps, org.id)).map(toWireDomain), nextCursor: null });
    },
  )
  .delete(
    "/orgs/:orgId/domains/:domain",
    operation({
      summary: "Remove an org's email domain",
      description: "Its emails are no longer routed to the org's connection nor under its enforced SSO.",
      security: "admin-secret",
      answers: { 204: NO_CONTENT("Removed.") },
    }),
    async (c) => {
      await deleteDomain(c.var.deps, c.req.param("orgId"), c.req.param("domain"));
      return c.body(null, 204);
    },
  )
  .post(
    "/orgs/:orgId/domains/:domain/verify",
    operation({
      summary: "Mark an org's email domain verified",
      description:
        "Without DNS (local development, tests, or an operator who checked another way). The domain must have " +
        "been claimed by the org (404 `not-found`); verified by another org: 409 `domain-already-verified`.",
      security: "admin-secret",
      answers: { 200: { description: "The domain, verified.", schema: domainSchema } },
    }),
    async (c) => {
      const row = await verifyDomain(c.var.deps, c.req.param("orgId"), c.req.param("domain"), "admin");
      return c.json(toWireDomain(row));
    },
  )
  .patch(
    "/orgs/:orgId/sso",
    operation({
      summary: "Enforce SSO for an org's domains",
      description: "As `PATCH /orgs/{orgId}/sso`, for any org.",
      security: "admin-secret",
      answers: { 200: { description: "The setting as it is now.", schema: enforceSchema } },
    }),
    jsonBody(enforceBody),
    async (c) => c.json(await setEnforceSso(c.var.deps, c.req.param("orgId"), c.req.valid("json").enforce)),
  );
