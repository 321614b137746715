import { Hono } from "hono";
import { z } from "zod";
import { auditAdminAction } from "../audit/admin-action";
import { findUserById, resolveRedirectTo } from "../auth";
import { AppError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { NO_CONTENT, operation } from "../http/documented";
import { pageQuery, pageSchema } from "../http/paging";
import { jsonBody, queryParams } from "../http/validation";
import { createInvitation, deleteInvitation, listInvitations } from "./invitations";
import { addMember, listMembers, removeMember, setMemberRole } from "./members";
import { createOrg, deleteOrg, getOrg, listOrgs, updateOrg } from "./organizations";
import {
  adminAddMemberBody,
  adminCreateOrgBody,
  invitationSchema,
  inviteBody,
  memberRoleBody,
  memberSchema,
  orgSchema,
  toWireMember,
  toWireOrg,
  updateOrgBody,
} from "./wire";

/**
 * Organizations in the admin API (contract organizations.md §1: "the admin API mirrors these routes under
 * `/admin/orgs/…`, any org, no membership needed"), behind the admin secret (mounted by src/runtime/app.ts). The
 * last-owner rule holds here too: an org without an owner has nobody to manage it but the operator.
 */

const listQuery = pageQuery.extend({
  q: z.string().max(200).optional().describe("A part of the name or slug"),
});
const adminInviteBody = inviteBody.extend({ redirectTo: z.string().max(2048).optional() });

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
  .get(
    "/orgs/:orgId",
    operation({
      summary: "Get an organization",
      description: "404 `not-found` for an unknown id.",
      security: "admin-secret",
      answers: { 200: { description: "The organization.", schema: orgSchema } },
    }),
    async (c) => c.json(toWireOrg(await getOrg(c.var.deps, c.req.param("orgId")))),
  )
  .patch(
    "/orgs/:orgId",
    operation({
      summary: "Change an organization",
      description: "Any of `name`, `slug`, `metadata`. 409 `slug-already-in-use`. Audited.",
      security: "admin-secret",
      answers: { 200: { description: "The organization as it is now.", schema: orgSchema } },
    }),
    jsonBody(updateOrgBody),
    async (c) => {
      const org = await updateOrg(c.var.deps, c.req.param("orgId"), c.req.valid("json"));
      auditAdminAction(c, "org.update", null, { orgId: org.id });
      return c.json(org);
    },
  )
  .delete(
    "/orgs/:orgId",
    operation({
      summary: "Delete an organization",
      description:
        "With everything it holds; sessions switched into it lose it at their next refresh. Audited.",
      security: "admin-secret",
      answers: { 204: NO_CONTENT("Deleted.") },
    }),
    async (c) => {
      const orgId = c.req.param("orgId");
      await deleteOrg(c.var.deps, orgId);
      auditAdminAction(c, "org.delete", null, { orgId });
      return c.body(null, 204);
    },
  )
  .get(
    "/orgs/:orgId/members",
    operation({
      summary: "List an organization's members",
      description: "Oldest first, with each member's email and display name.",
      security: "admin-secret",
      answers: { 200: { description: "A page of members.", schema: pageSchema(memberSchema) } },
    }),
    queryParams(pageQuery),
    async (c) => {
      const orgId = c.req.param("orgId");
      await getOrg(c.var.deps, orgId);
      return c.json(await listMembers(c.var.deps, orgId, c.req.valid("query")));
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
  .patch(
    "/orgs/:orgId/members/:userId",
    operation({
      summary: "Change a member's role",
      description: "409 `last-owner` when it would leave the org without an owner. Audited.",
      security: "admin-secret",
      answers: { 200: { description: "The membership as it is now.", schema: memberSchema } },
    }),
    jsonBody(memberRoleBody),
    async (c) => {
      const [orgId, userId] = [c.req.param("orgId"), c.req.param("userId")];
      const { role } = c.req.valid("json");
      const member = await setMemberRole(c.var.deps, orgId, userId, role);
      auditAdminAction(c, "org.member.role", userId, { orgId, role });
      const user = await findUserById(c.var.deps.shards, userId);
      return c.json(toWireMember(member, user));
    },
  )
  .delete(
    "/orgs/:orgId/members/:userId",
    operation({
      summary: "Remove a member",
      description:
        "409 `last-owner` for the last owner. Its sessions lose the org at their next refresh. Audited.",
      security: "admin-secret",
      answers: { 204: NO_CONTENT("Removed.") },
    }),
    async (c) => {
      const [orgId, userId] = [c.req.param("orgId"), c.req.param("userId")];
      await removeMember(c.var.deps, orgId, userId);
      auditAdminAction(c, "org.member.remove", userId, { orgId });
      return c.body(null, 204);
    },
  )
  .post(
    "/orgs/:orgId/invitations",
    operation({
      summary: "Invite someone by email",
      description: "As `POST /orgs/{orgId}/invitations`, any role. Audited.",
      security: "admin-secret",
      answers: { 201: { description: "The invitation (never its ticket).", schema: invitationSchema } },
    }),
    jsonBody(adminInviteBody),
    async (c) => {
      const { deps } = c.var;
      const orgId = c.req.param("orgId");
      const { email, role, redirectTo } = c.req.valid("json");
      const target = resolveRedirectTo(deps.config, redirectTo);
      const invitation = await createInvitation(
        deps,
        orgId,
        { email, role, redirectTo: target },
        { userId: null },
      );
      auditAdminAction(c, "org.invitation.create", null, { orgId, invitationId: invitation.id });
      return c.json(invitation, 201);
    },
  )
  .get(
    "/orgs/:orgId/invitations",
    operation({
      summary: "List pending invitations",
      description: "Unexpired invitations, oldest first.",
      security: "admin-secret",
      answers: { 200: { description: "A page of invitations.", schema: pageSchema(invitationSchema) } },
    }),
    queryParams(pageQuery),
    async (c) => {
      const orgId = c.req.param("orgId");
      await getOrg(c.var.deps, orgId);
      return c.json(await listInvitations(c.var.deps, orgId, c.req.valid("query")));
    },
  )
  .delete(
    "/orgs/:orgId/invitations/:id",
    operation({
      summary: "Withdraw an invitation",
      description: "404 for an unknown one. Audited.",
      security: "admin-secret",
      answers: { 204: NO_CONTENT("Withdrawn.") },
    }),
    async (c) => {
      const orgId = c.req.param("orgId");
      await deleteInvitation(c.var.deps, orgId, c.req.param("id"));
      auditAdminAction(c, "org.invitation.delete", null, { orgId });
      return c.body(null, 204);
    },
  );
