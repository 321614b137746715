import { Hono } from "hono";
import { z } from "zod";
import { auditAdminAction } from "../audit/admin-action";
import { findUserById } from "../auth";
import { AppError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { operation } from "../http/documented";
import { pageQuery, pageSchema } from "../http/paging";
import { jsonBody, queryParams } from "../http/validation";
import { addMember } from "./members";
import { createOrg, getOrg, listOrgs } from "./organizations";
import { type OrgGuard, orgResourceRoutes } from "./resource-routes";
import { adminAddMemberBody, adminCreateOrgBody, memberSchema, orgSchema, toWireMember } from "./wire";

/**
 * Organizations in the admin API (contract organizations.md §1: "the admin API mirrors these routes under
 * `/admin/orgs/…`, any org, no membership needed"), behind the admin secret (mounted by src/runtime/app.ts). The
 * last-owner rule holds here too: an org without an owner has nobody to manage it but the operator.
 */

const listQuery = pageQuery.extend({
  q: z.string().max(200).optional().describe("A part of the name or slug"),
});
/** The operator: acts as an owner would in any org that exists, every change audited as `admin.org.*`. */
const operatorGuard: OrgGuard = {
  security: "admin-secret",
  refusals: "404 `not-found` for an unknown organization. Audited.",
  actor: async (c, orgId) => {
    await getOrg(c.var.deps, orgId);
    return { userId: null, role: "owner" };
  },
  orgAnswer: { schema: orgSchema, shape: (org) => org },
  audit: auditAdminAction,
};

export const orgAdminRoutes = new Hono<AppEnv>()
  .get(
    "/orgs",
    operation({
      summary: "List organizations",
      description: "Every organization, newest first; `q` matches a part of the name or slug.",
      security: "admin-secret",
      answers: { 200: { description: "A page of organizations.", schema: pageSchema(orgSchema) } },
    }),
    queryParams(listQuery),
    async (c) => c.json(await listOrgs(c.var.deps, c.req.valid("query"))),
  )
  .post(
    "/orgs",
    operation({
      summary: "Create an organization",
      description:
        "With `ownerUserId` as its first owner (404 `not-found` for an unknown user). Slug as in `POST /orgs`. Audited.",
      security: "admin-secret",
      answers: { 201: { description: "The organization.", schema: orgSchema } },
    }),
    jsonBody(adminCreateOrgBody),
    async (c) => {
      const { ownerUserId, ...input } = c.req.valid("json");
      if (!(await findUserById(c.var.deps.shards, ownerUserId)))
        throw new AppError("not-found", "no such user");
      const org = await createOrg(c.var.deps, input, ownerUserId, "admin");
      auditAdminAction(c, "org.create", ownerUserId, { orgId: org.id });
      return c.json(org, 201);
    },
  )
  .post(
    "/orgs/:orgId/members",
    operation({
      summary: "Add a member",
      description:
        "Adds `userId` with `role` (no invitation). 404 for an unknown org or user; a user who already is a " +
        "member: 200 with the membership unchanged. Audited.",
      security: "admin-secret",
      answers: {
        201: { description: "The new membership.", schema: memberSchema },
        200: { description: "Already a member: the membership as it is.", schema: memberSchema },
      },
    }),
    jsonBody(adminAddMemberBody),
    async (c) => {
      const { deps } = c.var;
      const orgId = c.req.param("orgId");
      const { userId, role } = c.req.valid("json");
      await getOrg(deps, orgId);
      const user = await findUserById(deps.shards, userId);
      if (!user) throw new AppError("not-found", "no such user");
      const { added, member } = await addMember(deps, { orgId, userId, role, source: "admin" });
      if (added) auditAdminAction(c, "org.member.add", userId, { orgId, role });
      return c.json(toWireMember(member, user), added ? 201 : 200);
    },
  )
  .route("/", orgResourceRoutes(operatorGuard));
