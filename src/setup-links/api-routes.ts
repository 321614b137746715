import { type Context, Hono, type MiddlewareHandler } from "hono";
import { auditAdminAction } from "../audit/admin-action";
import type { AppEnv } from "../http/app-env";
import { requireAuth } from "../http/auth";
import { NO_CONTENT, operation, type Security } from "../http/documented";
import { actorOf, refuseWhileImpersonating } from "../http/impersonation";
import { pageSchema } from "../http/paging";
import { jsonBody } from "../http/validation";
import { getOrg, OWNERS, requireOrgRole } from "../orgs";
import {
  createdLinkSchema,
  createLink,
  getLink,
  linkUrl,
  listLinks,
  newLinkSchema,
  revokeLink,
} from "./links";
import { setupLinkSchema, toWireLink } from "./progress";

/**
 * The setup links of an organization (contract operators.md §5), written once for its owners (bearer access token)
 * and for the operator (admin API, any org), as src/orgs/resource-routes.ts does for the org itself. Every link made
 * or revoked is audited (`setup-link.created`, `setup-link.revoked`; the operator's also as `admin.setup-link.*`).
 */

interface LinkGuard {
  security: Security;
  refusals: string;
  /** Checks the caller may act in the org; answers who made the link (an owner's id; null for the operator). */
  actor(c: Context<AppEnv>, orgId: string): Promise<string | null>;
  /** The operator's actions are admin actions too. */
  audit(c: Context<AppEnv>, action: string, detail: Record<string, unknown>): void;
  auth: MiddlewareHandler<AppEnv>;
}

function linkRoutes(guard: LinkGuard) {
  const { security, refusals } = guard;
  return new Hono<AppEnv>()
    .post(
      "/orgs/:orgId/setup-links",
      operation({
        summary: "Make a setup link for the org's IT admin",
        description:
          '`{intents: ["sso","scim","domains"], expiresIn?}` → the link\'s `url`, shown only here. Whoever opens ' +
          "it (no account needed) may do what `intents` allow through hosted pages: verify domains, make SSO " +
          "connections (off until an owner enables them after a successful test; serving only the domains verified " +
          "through the link), make SCIM tokens (no owner or admin role). Seven days unless `expiresIn` (seconds, " +
          `at most 30 days); at most 20 open links per org. ${refusals}`,
        security,
        answers: { 201: { description: "The link.", schema: createdLinkSchema } },
      }),
      guard.auth,
      jsonBody(newLinkSchema),
      async (c) => {
        const orgId = c.req.param("orgId");
        const createdBy = await guard.actor(c, orgId);
        const { row, token } = await createLink(c.var.deps, orgId, c.req.valid("json"), createdBy);
        const detail = { orgId, linkId: row.id, intents: row.intents, expiresAt: row.expiresAt };
        c.var.deps.audit({ type: "setup-link.created", userId: createdBy, detail });
        guard.audit(c, "setup-link.create", detail);
        return c.json(
          { id: row.id, url: linkUrl(c.var.deps, token), expiresAt: new Date(row.expiresAt).toISOString() },
          201,
        );
      },
    )
    .get(
      "/orgs/:orgId/setup-links",
      operation({
        summary: "List the org's setup links, with what was done through each",
        description: `Newest first (the last 100), never their tokens; each with its progress. ${refusals}`,
        security,
        answers: { 200: { description: "The links.", schema: pageSchema(setupLinkSchema) } },
      }),
      guard.auth,
      async (c) => {
        const orgId = c.req.param("orgId");
        await guard.actor(c, orgId);
        const rows = await listLinks(c.var.deps, orgId);
        const items = await Promise.all(rows.map((row) => toWireLink(c.var.deps, row)));
        return c.json({ items, nextCursor: null });
      },
    )
    .get(
      "/orgs/:orgId/setup-links/:id",
      operation({
        summary: "Get a setup link and its progress",
        description: `Another org's link: 404 \`not-found\`. ${refusals}`,
        security,
        answers: { 200: { description: "The link.", schema: setupLinkSchema } },
      }),
      guard.auth,
      async (c) => {
        const orgId = c.req.param("orgId");
        await guard.actor(c, orgId);
        return c.json(await toWireLink(c.var.deps, await getLink(c.var.deps, orgId, c.req.param("id"))));
      },
    )
    .delete(
      "/orgs/:orgId/setup-links/:id",
      operation({
        summary: "Revoke a setup link",
        description:
          "At once: its next use shows the same page as a mistyped link. What was made through it stays (revoke " +
          `SCIM tokens and remove connections on their own routes). ${refusals}`,
        security,
        answers: { 204: NO_CONTENT("Revoked (or revoked already).") },
      }),
      guard.auth,
      async (c) => {
        const orgId = c.req.param("orgId");
        const by = await guard.actor(c, orgId);
        const row = await revokeLink(c.var.deps, orgId, c.req.param("id"));
        c.var.deps.audit({ type: "setup-link.revoked", userId: by, detail: { orgId, linkId: row.id } });
        guard.audit(c, "setup-link.revoke", { orgId, linkId: row.id });
        return c.body(null, 204);
      },
    );
}

/** An org's owners, with a bearer token (no membership: 404; another role: 403 `insufficient-org-role`). */
export const setupLinkRoutes = linkRoutes({
  security: "bearer",
  refusals:
    "Org owners only: 403 `insufficient-org-role` for other members, 404 `not-found` for non-members.",
  auth: requireAuth,
  actor: async (c, orgId) => {
    // An impersonated session (`act`) may not make, list or revoke links (operators.md §1). Its writes are refused by
    // the token check already; the rule is named here, where the owner's grant is made.
    refuseWhileImpersonating(actorOf(c.var.auth), "setup links");
    const userId = c.var.auth!.sub;
    await requireOrgRole(c.var.deps, orgId, userId, OWNERS);
    return userId;
  },
  audit: () => {},
});

/** The operator, any org that exists (404 otherwise). */
export const setupLinkAdminRoutes = linkRoutes({
  security: "admin-secret",
  refusals: "404 `not-found` for an unknown organization. Audited.",
  auth: (_c, next) => next(),
  actor: async (c, orgId) => {
    await getOrg(c.var.deps, orgId);
    return null;
  },
  audit: (c, action, detail) => auditAdminAction(c, action, null, detail),
});
