import { Hono } from "hono";
import { z } from "zod";
import { findUserById, resolveRedirectTo } from "../auth";
import { AppError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { requireAuth } from "../http/auth";
import type { Deps } from "../http/deps";
import { NO_CONTENT, operation } from "../http/documented";
import { pageQuery, pageSchema } from "../http/paging";
import { jsonBody, queryParams } from "../http/validation";
import { HASURA_NAMESPACE } from "../lib/jwt";
import { rateLimit } from "../rate-limits/middleware";
import { acceptInvitation, createInvitation, deleteInvitation, listInvitations } from "./invitations";
import {
  findMember,
  listMembers,
  MANAGERS,
  OWNERS,
  removeMember,
  requireOrgRole,
  setMemberRole,
} from "./members";
import { createOrg, deleteOrg, getOrg, listUserOrgs, updateOrg } from "./organizations";
import {
  acceptBody,
  createOrgBody,
  invitationSchema,
  inviteBody,
  memberRoleBody,
  memberSchema,
  myOrgSchema,
  orgSchema,
  toWireMember,
  toWireOrg,
  updateOrgBody,
} from "./wire";

/**
 * The organizations' user routes (contract organizations.md §1), bearer access token. Every `/orgs/{orgId}…` route
 * first asks `requireOrgRole`: no active membership answers 404 `not-found` (an outsider can't tell the org
 * exists), a role that does not allow the action 403 `insufficient-org-role`.
 */

const NOT_MEMBER =
  "404 `not-found` when the caller is no active member (the org's existence is not revealed)";
const inviteWithRedirect = inviteBody.extend({
  redirectTo: z
    .string()
    .max(2048)
    .optional()
    .describe("Where the mailed link leads (allow-listed); default the client URL"),
});

export const orgRoutes = new Hono<AppEnv>()
  .use("/orgs", requireAuth)
  .use("/orgs/*", requireAuth)
  .post(
    "/orgs",
    operation({
      summary: "Create an organization",
      description:
        "The caller becomes its `owner`. `slug` is generated from the name when absent (with a random suffix when " +
        "taken); a chosen slug that is taken: 409 `slug-already-in-use`. Anonymous users: 403 `forbidden-anonymous`.",
      security: "bearer",
      answers: { 201: { description: "The organization.", schema: orgSchema } },
    }),
    jsonBody(createOrgBody),
    async (c) => {
      const auth = c.var.auth!;
      if (auth[HASURA_NAMESPACE]?.["x-hasura-user-is-anonymous"] === "true")
        throw new AppError("forbidden-anonymous");
      return c.json(await createOrg(c.var.deps, c.req.valid("json"), auth.sub), 201);
    },
  )
  .get(
    "/orgs",
    operation({
      summary: "List my organizations",
      description:
        "The caller's organizations (active memberships), oldest first, each with the caller's `role`.",
      security: "bearer",
      answers: { 200: { description: "A page of organizations.", schema: pageSchema(myOrgSchema) } },
    }),
    queryParams(pageQuery),
    async (c) => c.json(await listUserOrgs(c.var.deps, c.var.auth!.sub, c.req.valid("query"))),
  )
  .post(
    "/orgs/invitations/accept",
    operation({
      summary: "Accept an invitation",
      description:
        "Joins the organization with the invitation's role. The ticket is single use and seven days; the caller's " +
        "email must be the invited one and verified, else 403 `invitation-email-mismatch` and the ticket stays " +
        "for its addressee. Unknown, used or expired: 401 `invalid-ticket`. A member already keeps their role.",
      security: "bearer",
      answers: {
        200: { description: "The organization joined, with the caller's role.", schema: myOrgSchema },
      },
    }),
    rateLimit("BRUTE_FORCE"),
    jsonBody(acceptBody),
    async (c) => {
      const { org, role } = await acceptInvitation(c.var.deps, c.req.valid("json").ticket, c.var.auth!.sub);
      return c.json({ ...toWireOrg(org), role });
    },
  )
  .get(
    "/orgs/:orgId",
    operation({
      summary: "Get an organization",
      description: `Any member. ${NOT_MEMBER}.`,
      security: "bearer",
      answers: { 200: { description: "The organization, with the caller's role.", schema: myOrgSchema } },
    }),
    async (c) => {
      const orgId = c.req.param("orgId");
      const { role } = await requireOrgRole(c.var.deps, orgId, c.var.auth!.sub);
      return c.json({ ...toWireOrg(await getOrg(c.var.deps, orgId)), role });
    },
  )
  .patch(
    "/orgs/:orgId",
    operation({
      summary: "Change an organization",
      description:
        "Owners and admins: any of `name`, `slug`, `metadata` (replaced whole); the rest stays. 403 " +
        `\`insufficient-org-role\` for other roles; 409 \`slug-already-in-use\`; ${NOT_MEMBER}.`,
      security: "bearer",
      answers: { 200: { description: "The organization as it is now.", schema: orgSchema } },
    }),
    jsonBody(updateOrgBody),
    async (c) => {
      const orgId = c.req.param("orgId");
      await requireOrgRole(c.var.deps, orgId, c.var.auth!.sub, MANAGERS);
      return c.json(await updateOrg(c.var.deps, orgId, c.req.valid("json")));
    },
  )
  .delete(
    "/orgs/:orgId",
    operation({
      summary: "Delete an organization",
      description:
        "Owners only; with its members, invitations, domains, connections and SCIM tokens. Sessions switched into " +
        `it lose it at their next refresh. ${NOT_MEMBER}.`,
      security: "bearer",
      answers: { 204: NO_CONTENT("Deleted.") },
    }),
    async (c) => {
      const orgId = c.req.param("orgId");
      await requireOrgRole(c.var.deps, orgId, c.var.auth!.sub, OWNERS);
      await deleteOrg(c.var.deps, orgId);
      return c.body(null, 204);
    },
  )
  .get(
    "/orgs/:orgId/members",
    operation({
      summary: "List an organization's members",
      description: `Any member; oldest first, with each member's email and display name. ${NOT_MEMBER}.`,
      security: "bearer",
      answers: { 200: { description: "A page of members.", schema: pageSchema(memberSchema) } },
    }),
    queryParams(pageQuery),
    async (c) => {
      const orgId = c.req.param("orgId");
      await requireOrgRole(c.var.deps, orgId, c.var.auth!.sub);
      return c.json(await listMembers(c.var.deps, orgId, c.req.valid("query")));
    },
  )
  .patch(
    "/orgs/:orgId/members/:userId",
    operation({
      summary: "Change a member's role",
      description:
        "Owners and admins; only an owner may make an owner or change an owner's role. The last owner can't be " +
        "demoted: 409 `last-owner`. An unknown role: 400. The member's tokens carry the new role from their next " +
        `refresh. ${NOT_MEMBER}.`,
      security: "bearer",
      answers: { 200: { description: "The membership as it is now.", schema: memberSchema } },
    }),
    jsonBody(memberRoleBody),
    async (c) => {
      const { deps } = c.var;
      const [orgId, userId] = [c.req.param("orgId"), c.req.param("userId")];
      const caller = await requireOrgRole(deps, orgId, c.var.auth!.sub, MANAGERS);
      const { role } = c.req.valid("json");
      if (caller.role !== "owner" && (role === "owner" || (await isOwner(deps, orgId, userId))))
        throw new AppError("insufficient-org-role", "only an owner may grant or change the owner role");
      const member = await setMemberRole(deps, orgId, userId, role);
      return c.json(toWireMember(member, await findUserById(deps.shards, userId)));
    },
  )
  .delete(
    "/orgs/:orgId/members/:userId",
    operation({
      summary: "Remove a member, or leave",
      description:
        "Any member may remove themself (leave); owners and admins remove others, and only an owner removes an " +
        "owner. The last owner can't leave: 409 `last-owner`. The member's sessions lose the org at their next " +
        `refresh. ${NOT_MEMBER}.`,
      security: "bearer",
      answers: { 204: NO_CONTENT("Removed.") },
    }),
    async (c) => {
      const { deps } = c.var;
      const [orgId, userId] = [c.req.param("orgId"), c.req.param("userId")];
      const self = c.var.auth!.sub;
      const caller = await requireOrgRole(deps, orgId, self, userId === self ? undefined : MANAGERS);
      if (userId !== self && caller.role !== "owner" && (await isOwner(deps, orgId, userId)))
        throw new AppError("insufficient-org-role", "only an owner may remove an owner");
      await removeMember(deps, orgId, userId);
      return c.body(null, 204);
    },
  )
  .post(
    "/orgs/:orgId/invitations",
    operation({
      summary: "Invite someone by email",
      description:
        "Owners and admins (only owners invite owners). Mails a link (template `org-invitation`, in the invitee's " +
        "language when they have an account). Without `redirectTo`, and with the built-in OAuth2 page on, it opens " +
        "the hosted page (`/oauth2/invitation?ticket=`: sign in or up with that address, then accept); otherwise " +
        "it leads to `redirectTo` (allow-listed; default the client URL) with `ticket` and `type=orgInvitation`, and " +
        "the app calls `POST /orgs/invitations/accept`. Seven days, single use; inviting the same address again replaces the " +
        `earlier invitation. ${NOT_MEMBER}.`,
      security: "bearer",
      answers: { 201: { description: "The invitation (never its ticket).", schema: invitationSchema } },
    }),
    rateLimit("EMAIL"),
    jsonBody(inviteWithRedirect),
    async (c) => {
      const { deps } = c.var;
      const orgId = c.req.param("orgId");
      const caller = await requireOrgRole(deps, orgId, c.var.auth!.sub, MANAGERS);
      const { email, role, redirectTo } = c.req.valid("json");
      const target = resolveRedirectTo(deps.config, redirectTo);
      const invitation = await createInvitation(
        deps,
        orgId,
        { email, role, redirectTo: target },
        { userId: c.var.auth!.sub, role: caller.role },
      );
      return c.json(invitation, 201);
    },
  )
  .get(
    "/orgs/:orgId/invitations",
    operation({
      summary: "List pending invitations",
      description: `Owners and admins; unexpired invitations, oldest first. ${NOT_MEMBER}.`,
      security: "bearer",
      answers: { 200: { description: "A page of invitations.", schema: pageSchema(invitationSchema) } },
    }),
    queryParams(pageQuery),
    async (c) => {
      const orgId = c.req.param("orgId");
      await requireOrgRole(c.var.deps, orgId, c.var.auth!.sub, MANAGERS);
      return c.json(await listInvitations(c.var.deps, orgId, c.req.valid("query")));
    },
  )
  .delete(
    "/orgs/:orgId/invitations/:id",
    operation({
      summary: "Withdraw an invitation",
      description: `Owners and admins; its ticket stops working. ${NOT_MEMBER}; also for an unknown invitation.`,
      security: "bearer",
      answers: { 204: NO_CONTENT("Withdrawn.") },
    }),
    async (c) => {
      const orgId = c.req.param("orgId");
      await requireOrgRole(c.var.deps, orgId, c.var.auth!.sub, MANAGERS);
      await deleteInvitation(c.var.deps, orgId, c.req.param("id"));
      return c.body(null, 204);
    },
  );

async function isOwner(deps: Deps, orgId: string, userId: string): Promise<boolean> {
  return (await findMember(deps, orgId, userId))?.role === "owner";
}
