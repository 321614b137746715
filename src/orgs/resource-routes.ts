import { type Context, Hono, type MiddlewareHandler } from "hono";
import { z } from "zod";
import { findUserById, resolveRedirectTo } from "../auth";
import { AppError } from "../errors";
import type { AppEnv } from "../http/app-env";
import type { Deps } from "../http/deps";
import { NO_CONTENT, operation, type Security } from "../http/documented";
import { pageQuery, pageSchema } from "../http/paging";
import { jsonBody, queryParams } from "../http/validation";
import { createInvitation, deleteInvitation, listInvitations } from "./invitations";
import { findMember, listMembers, MANAGERS, OWNERS, removeMember, setMemberRole } from "./members";
import { deleteOrg, getOrg, updateOrg } from "./organizations";
import {
  invitationSchema,
  inviteBody,
  memberRoleBody,
  memberSchema,
  orgSchema,
  toWireMember,
  toWireOrg,
  updateOrgBody,
  type WireOrg,
} from "./wire";

/**
 * The routes on one organization's resources (the org, its members, its invitations: contract organizations.md §1),
 * written once for the two callers that act on them through the API: a member with a bearer token, whose role in the
 * org decides (`orgRoutes`), and the operator with the admin secret, who may do what an owner may in any org
 * (`orgAdminRoutes`, "the admin API mirrors these routes"). What differs is the guard; the rules (only an owner makes
 * or removes an owner, the last owner stays, anyone may leave) are here once. The console calls the same services
 * with its own forms (src/admin/console/org-routes.ts).
 */

/** Who is acting, as far as an org's rules care: their user id (none for the operator) and their role in the org. */
export interface OrgActor {
  userId: string | null;
  role: string;
}

export interface OrgGuard {
  security: Security;
  /** Ends each operation's description: what an unauthorized caller gets. */
  refusals: string;
  /**
   * The caller, allowed to act in `orgId` with one of `roles` (any role when absent); throws the surface's refusal.
   * The operator acts as an owner in any org that exists (404 otherwise).
   */
  actor(c: Context<AppEnv>, orgId: string, roles?: readonly string[]): Promise<OrgActor>;
  /** The org as this surface answers it (a member's answer carries their role). */
  orgAnswer: { schema: z.ZodType; shape(org: WireOrg, actor: OrgActor): unknown };
  /** An audited change (the admin API's `admin.org.*` events); nothing for a member's own actions. */
  audit(c: Context<AppEnv>, action: string, userId: string | null, detail: Record<string, unknown>): void;
  /** Sending mail: a member's invitations count in the EMAIL bucket, per client address and per invited address. */
  mailLimit?: MiddlewareHandler<AppEnv>;
}

const inviteWithRedirect = inviteBody.extend({
  redirectTo: z
    .string()
    .max(2048)
    .optional()
    .describe("Where the mailed link leads (allow-listed); default the client URL"),
});

async function isOwner(deps: Deps, orgId: string, userId: string): Promise<boolean> {
  return (await findMember(deps, orgId, userId))?.role === "owner";
}

const passThrough: MiddlewareHandler<AppEnv> = (_c, next) => next();

export function orgResourceRoutes(guard: OrgGuard) {
  const { security, refusals } = guard;
  return new Hono<AppEnv>()
    .get(
      "/orgs/:orgId",
      operation({
        summary: "Get an organization",
        description: `Any member. ${refusals}`,
        security,
        answers: { 200: { description: "The organization.", schema: guard.orgAnswer.schema } },
      }),
      async (c) => {
        const orgId = c.req.param("orgId");
        const actor = await guard.actor(c, orgId);
        return c.json(guard.orgAnswer.shape(toWireOrg(await getOrg(c.var.deps, orgId)), actor));
      },
    )
    .patch(
      "/orgs/:orgId",
      operation({
        summary: "Change an organization",
        description:
          "Owners and admins: any of `name`, `slug`, `metadata` (replaced whole); the rest stays. 403 " +
          `\`insufficient-org-role\` for other roles; 409 \`slug-already-in-use\`. ${refusals}`,
        security,
        answers: { 200: { description: "The organization as it is now.", schema: orgSchema } },
      }),
      jsonBody(updateOrgBody),
      async (c) => {
        const orgId = c.req.param("orgId");
        await guard.actor(c, orgId, MANAGERS);
        const org = await updateOrg(c.var.deps, orgId, c.req.valid("json"));
        guard.audit(c, "org.update", null, { orgId: org.id });
        return c.json(org);
      },
    )
    .delete(
      "/orgs/:orgId",
      operation({
        summary: "Delete an organization",
        description:
          "Owners only; with its members, invitations, domains, connections and SCIM tokens. Sessions switched into " +
          `it lose it at their next refresh. ${refusals}`,
        security,
        answers: { 204: NO_CONTENT("Deleted.") },
      }),
      async (c) => {
        const orgId = c.req.param("orgId");
        await guard.actor(c, orgId, OWNERS);
        await deleteOrg(c.var.deps, orgId);
        guard.audit(c, "org.delete", null, { orgId });
        return c.body(null, 204);
      },
    )
    .get(
      "/orgs/:orgId/members",
      operation({
        summary: "List an organization's members",
        description: `Any member; oldest first, with each member's email and display name. ${refusals}`,
        security,
        answers: { 200: { description: "A page of members.", schema: pageSchema(memberSchema) } },
      }),
      queryParams(pageQuery),
      async (c) => {
        const orgId = c.req.param("orgId");
        await guard.actor(c, orgId);
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
          `refresh. ${refusals}`,
        security,
        answers: { 200: { description: "The membership as it is now.", schema: memberSchema } },
      }),
      jsonBody(memberRoleBody),
      async (c) => {
        const { deps } = c.var;
        const [orgId, userId] = [c.req.param("orgId"), c.req.param("userId")];
        const actor = await guard.actor(c, orgId, MANAGERS);
        const { role } = c.req.valid("json");
        if (actor.role !== "owner" && (role === "owner" || (await isOwner(deps, orgId, userId))))
          throw new AppError("insufficient-org-role", "only an owner may grant or change the owner role");
        const member = await setMemberRole(deps, orgId, userId, role);
        guard.audit(c, "org.member.role", userId, { orgId, role });
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
          `refresh. ${refusals}`,
        security,
        answers: { 204: NO_CONTENT("Removed.") },
      }),
      async (c) => {
        const { deps } = c.var;
        const [orgId, userId] = [c.req.param("orgId"), c.req.param("userId")];
        const self = c.var.auth?.sub;
        const leaving = self !== undefined && userId === self;
        const actor = await guard.actor(c, orgId, leaving ? undefined : MANAGERS);
        if (!leaving && actor.role !== "owner" && (await isOwner(deps, orgId, userId)))
          throw new AppError("insufficient-org-role", "only an owner may remove an owner");
        await removeMember(deps, orgId, userId);
        guard.audit(c, "org.member.remove", userId, { orgId });
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
          "it leads to `redirectTo` (allow-listed; default the client URL) with `ticket` and `type=orgInvitation`, " +
          "and the app calls `POST /orgs/invitations/accept`. Seven days, single use; inviting the same address " +
          `again replaces the earlier invitation. ${refusals}`,
        security,
        answers: { 201: { description: "The invitation (never its ticket).", schema: invitationSchema } },
      }),
      guard.mailLimit ?? passThrough,
      jsonBody(inviteWithRedirect),
      async (c) => {
        const { deps } = c.var;
        const orgId = c.req.param("orgId");
        const actor = await guard.actor(c, orgId, MANAGERS);
        const { email, role, redirectTo } = c.req.valid("json");
        const target = resolveRedirectTo(deps.config, redirectTo);
        const invitation = await createInvitation(deps, orgId, { email, role, redirectTo: target }, actor);
        guard.audit(c, "org.invitation.create", null, { orgId, invitationId: invitation.id });
        return c.json(invitation, 201);
      },
    )
    .get(
      "/orgs/:orgId/invitations",
      operation({
        summary: "List pending invitations",
        description: `Owners and admins; unexpired invitations, oldest first. ${refusals}`,
        security,
        answers: { 200: { description: "A page of invitations.", schema: pageSchema(invitationSchema) } },
      }),
      queryParams(pageQuery),
      async (c) => {
        const orgId = c.req.param("orgId");
        await guard.actor(c, orgId, MANAGERS);
        return c.json(await listInvitations(c.var.deps, orgId, c.req.valid("query")));
      },
    )
    .delete(
      "/orgs/:orgId/invitations/:id",
      operation({
        summary: "Withdraw an invitation",
        description: `Owners and admins; its ticket stops working. 404 for an unknown invitation. ${refusals}`,
        security,
        answers: { 204: NO_CONTENT("Withdrawn.") },
      }),
      async (c) => {
        const orgId = c.req.param("orgId");
        await guard.actor(c, orgId, MANAGERS);
        await deleteInvitation(c.var.deps, orgId, c.req.param("id"));
        guard.audit(c, "org.invitation.delete", null, { orgId });
        return c.body(null, 204);
      },
    );
}
