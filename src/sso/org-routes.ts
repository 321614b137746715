import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../http/app-env";
import { requireAuth } from "../http/auth";
import { NO_CONTENT, operation } from "../http/documented";
import { pageSchema } from "../http/paging";
import { jsonBody } from "../http/validation";
import { OWNERS, requireOrgRole } from "../orgs";
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

/**
 * An organization's enterprise sign-in settings (contract organizations.md §2), for its owners (bearer access
 * token): connections, domains, enforced SSO. No active membership: 404 `not-found` (an outsider can't tell the org
 * exists); a member who is not an owner: 403 `insufficient-org-role`. The admin API has the same (./admin-routes.ts).
 */

const OWNER_ONLY =
  "Org owners only: 403 `insufficient-org-role` for other members, 404 `not-found` for non-members.";

export const domainBody = z.strictObject({ domain: z.string().min(1).max(253) });
export const enforceBody = z.strictObject({ enforce: z.boolean() });
export const enforceSchema = z.object({ orgId: z.string(), enforceSso: z.boolean() });

const owner = (c: { var: AppEnv["Variables"]; req: { param: (name: "orgId") => string } }) =>
  requireOrgRole(c.var.deps, c.req.param("orgId"), c.var.auth!.sub, OWNERS);

export const ssoOrgRoutes = new Hono<AppEnv>()
  .post(
    "/orgs/:orgId/connections",
    operation({
      summary: "Add an enterprise connection",
      description:
        'OIDC `{type:"oidc", issuer, clientId, clientSecret, scopes?}` or SAML `{type:"saml", metadataXml | ' +
        "metadataUrl}`, with `defaultRole` and `roleMapping` (group → role). The answer never holds the secret; it " +
        `gives the redirect URI (OIDC) or the SP metadata and ACS URLs (SAML) to register at the IdP. ${OWNER_ONLY}`,
      security: "bearer",
      answers: { 201: { description: "The connection.", schema: connectionSchema } },
    }),
    requireAuth,
    jsonBody(newConnectionSchema),
    async (c) => {
      await owner(c);
      const row = await createConnection(c.var.deps, c.req.param("orgId"), c.req.valid("json"));
      return c.json(toWireConnection(c.var.deps, row), 201);
    },
  )
  .get(
    "/orgs/:orgId/connections",
    operation({
      summary: "List enterprise connections",
      description: `The org's connections, oldest first (all of them: at most 20). ${OWNER_ONLY}`,
      security: "bearer",
      answers: { 200: { description: "The connections.", schema: pageSchema(connectionSchema) } },
    }),
    requireAuth,
    async (c) => {
      await owner(c);
      const rows = await listConnections(c.var.deps, c.req.param("orgId"));
      return c.json({ items: rows.map((row) => toWireConnection(c.var.deps, row)), nextCursor: null });
    },
  )
  .get(
    "/orgs/:orgId/connections/:id",
    operation({
      summary: "Get an enterprise connection",
      description: `${OWNER_ONLY} Another org's connection: 404 \`not-found\`.`,
      security: "bearer",
      answers: { 200: { description: "The connection.", schema: connectionSchema } },
    }),
    requireAuth,
    async (c) => {
      await owner(c);
      const row = await getConnection(c.var.deps, c.req.param("orgId"), c.req.param("id"));
      return c.json(toWireConnection(c.var.deps, row));
    },
  )
  .patch(
    "/orgs/:orgId/connections/:id",
    operation({
      summary: "Change an enterprise connection",
      description:
        "Any of the creation fields of the connection's type (a new `clientSecret` replaces the old; new SAML " +
        `metadata replaces the IdP's settings), and \`enabled\`. ${OWNER_ONLY}`,
      security: "bearer",
      answers: { 200: { description: "The connection as it is now.", schema: connectionSchema } },
    }),
    requireAuth,
    jsonBody(connectionPatchSchema),
    async (c) => {
      await owner(c);
      const { orgId, id } = c.req.param();
      const row = await updateConnection(c.var.deps, orgId, id, c.req.valid("json"));
      return c.json(toWireConnection(c.var.deps, row));
    },
  )
  .delete(
    "/orgs/:orgId/connections/:id",
    operation({
      summary: "Remove an enterprise connection",
      description: `Sign-ins under way through it fail. ${OWNER_ONLY}`,
      security: "bearer",
      answers: { 204: NO_CONTENT("Removed.") },
    }),
    requireAuth,
    async (c) => {
      await owner(c);
      await deleteConnection(c.var.deps, c.req.param("orgId"), c.req.param("id"));
      return c.body(null, 204);
    },
  )
  .post(
    "/orgs/:orgId/domains",
    operation({
      summary: "Claim an email domain",
      description:
        "Add a TXT record `txtName` holding `txtValue`, then call verify. Public mail domains (gmail.com, …) and " +
        "non-domains: 400 `domain-not-allowed`; verified by another org: 409 `domain-already-verified`. Claiming " +
        `it again answers the same claim. ${OWNER_ONLY}`,
      security: "bearer",
      answers: { 201: { description: "The domain, unverified.", schema: domainSchema } },
    }),
    requireAuth,
    jsonBody(domainBody),
    async (c) => {
      await owner(c);
      const row = await addDomain(c.var.deps, c.req.param("orgId"), c.req.valid("json").domain);
      return c.json(toWireDomain(row), 201);
    },
  )
  .get(
    "/orgs/:orgId/domains",
    operation({
      summary: "List the org's email domains",
      description: `Verified or not, alphabetical. ${OWNER_ONLY}`,
      security: "bearer",
      answers: { 200: { description: "The domains.", schema: pageSchema(domainSchema) } },
    }),
    requireAuth,
    async (c) => {
      await owner(c);
      const rows = await listDomains(c.var.deps, c.req.param("orgId"));
      return c.json({ items: rows.map(toWireDomain), nextCursor: null });
    },
  )
  .delete(
    "/orgs/:orgId/domains/:domain",
    operation({
      summary: "Remove an email domain",
      description: `Its emails are no longer routed to the org's connection nor under its enforced SSO. ${OWNER_ONLY}`,
      security: "bearer",
      answers: { 204: NO_CONTENT("Removed.") },
    }),
    requireAuth,
    async (c) => {
      await owner(c);
      await deleteDomain(c.var.deps, c.req.param("orgId"), c.req.param("domain"));
      return c.body(null, 204);
    },
  )
  .post(
    "/orgs/:orgId/domains/:domain/verify",
    operation({
      summary: "Verify an email domain by DNS",
      description:
        "Looks up the TXT record over DNS-over-HTTPS. Not there (yet): 400 `domain-verification-failed`; verified " +
        `by another org meanwhile: 409 \`domain-already-verified\`; the resolver down: 503. ${OWNER_ONLY}`,
      security: "bearer",
      answers: { 200: { description: "The domain, verified.", schema: domainSchema } },
    }),
    requireAuth,
    async (c) => {
      await owner(c);
      const row = await verifyDomain(c.var.deps, c.req.param("orgId"), c.req.param("domain"), "dns");
      return c.json(toWireDomain(row));
    },
  )
  .patch(
    "/orgs/:orgId/sso",
    operation({
      summary: "Enforce SSO for the org's domains",
      description:
        "With `enforce: true`, password, magic-link, email-code and passkey sign-ins of emails in the org's verified " +
        "domains answer 403 `sso-required`, and their sessions end at their next refresh. Needs an enabled " +
        `connection (else 400). ${OWNER_ONLY}`,
      security: "bearer",
      answers: { 200: { description: "The setting as it is now.", schema: enforceSchema } },
    }),
    requireAuth,
    jsonBody(enforceBody),
    async (c) => {
      await owner(c);
      return c.json(await setEnforceSso(c.var.deps, c.req.param("orgId"), c.req.valid("json").enforce));
    },
  );
