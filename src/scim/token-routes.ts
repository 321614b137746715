import { type Context, Hono } from "hono";
import { z } from "zod";
import { auditAdminAction } from "../audit/admin-action";
import type { AppEnv } from "../http/app-env";
import { requireAuth } from "../http/auth";
import { NO_CONTENT, operation } from "../http/documented";
import { jsonBody } from "../http/validation";
import { requireOrg, requireOrgOwner } from "./org-access";
import {
  createdTokenSchema,
  createScimToken,
  deleteScimToken,
  listScimTokens,
  newTokenSchema,
  wireScimTokenSchema,
} from "./tokens";

type Guard = (c: Context<AppEnv>, orgId: string) => Promise<void>;

/**
 * The SCIM tokens' routes, once for an org's owner (bearer) and once for the admin API (admin secret): the same
 * operations behind a different guard.
 */
function tokenRoutes(guard: Guard, security: "bearer" | "admin-secret", audit: boolean) {
  const who = security === "bearer" ? "The org's owner only." : "Any organization (admin secret).";
  return new Hono<AppEnv>()
    .post(
      "/orgs/:orgId/scim-tokens",
      operation({
        summary: "Create a SCIM token",
        description: `A bearer token for the org's identity provider to call \`/scim/v2\` with (contract organizations.md §3); \`token\` is in this answer only (kept as SHA-256). ${who}`,
        security,
        answers: {
          201: { description: "The token's id and the token, shown once.", schema: createdTokenSchema },
        },
      }),
      jsonBody(newTokenSchema),
      async (c) => {
        const orgId = c.req.param("orgId");
        await guard(c, orgId);
        const created = await createScimToken(c.var.deps, orgId, c.req.valid("json").name);
        if (audit) auditAdminAction(c, "scim-token.create", null, { orgId, tokenId: created.id });
        return c.json(created, 201);
      },
    )
    .get(
      "/orgs/:orgId/scim-tokens",
      operation({
        summary: "List SCIM tokens",
        description: `The org's SCIM tokens, oldest first, without the tokens themselves. ${who}`,
        security,
        answers: { 200: { description: "The tokens.", schema: z.array(wireScimTokenSchema) } },
      }),
      async (c) => {
        const orgId = c.req.param("orgId");
        await guard(c, orgId);
        return c.json(await listScimTokens(c.var.deps, orgId));
      },
    )
    .delete(
      "/orgs/:orgId/scim-tokens/:id",
      operation({
        summary: "Revoke a SCIM token",
        description: `The token stops working at once (the next SCIM call with it is 401). 404 \`not-found\` for a token of another org. ${who}`,
        security,
        answers: { 204: NO_CONTENT("Revoked.") },
      }),
      async (c) => {
        const orgId = c.req.param("orgId");
        await guard(c, orgId);
        await deleteScimToken(c.var.deps, orgId, c.req.param("id"));
        if (audit) auditAdminAction(c, "scim-token.delete", null, { orgId, tokenId: c.req.param("id") });
        return c.body(null, 204);
      },
    );
}

/** Mounted under the auth prefix: an org owner manages the org's SCIM tokens. */
export const scimTokenRoutes = new Hono<AppEnv>()
  .use("/orgs/:orgId/scim-tokens", requireAuth)
  .use("/orgs/:orgId/scim-tokens/*", requireAuth)
  .route(
    "/",
    tokenRoutes((c, orgId) => requireOrgOwner(c.var.deps, orgId, c.var.auth!.sub), "bearer", false),
  );

/** Mounted in the admin API (behind the admin secret): any organization's SCIM tokens. */
export const scimTokenAdminRoutes = tokenRoutes(
  (c, orgId) => requireOrg(c.var.deps, orgId),
  "admin-secret",
  true,
);
