import { Hono } from "hono";
import { html } from "hono/html";
import { z } from "zod";
import { auditAdminAction } from "../../audit/admin-action";
import { findUserByEmail, orgRoles, resolveRedirectTo } from "../../auth";
import { AppError } from "../../errors";
import type { AppEnv } from "../../http/app-env";
import { describeIssues } from "../../http/validation";
import {
  addMember,
  createInvitation,
  createOrg,
  deleteInvitation,
  deleteOrg,
  getOrg,
  listInvitations,
  listMembers,
  listOrgs,
  removeMember,
  setMemberRole,
  updateOrg,
} from "../../orgs";
import { createScimToken, deleteScimToken, listScimTokens } from "../../scim";
import { action, back, type Ctx, chromeOf, page, render } from "./handlers";
import { setupLinksSectionOf } from "./org-setup-links-section";
import { ssoSectionOf } from "./org-sso-section";
import { scimSection } from "./pages-org-access";
import { orgPage, orgPath, orgsPage } from "./pages-orgs";
import type { ConsoleSession } from "./session";

/**
 * Organizations in the console: the organizations feature's services (src/orgs/), called in-process as the admin API
 * calls them, with the admin API's rules (any org, no membership needed) and its audit events. Refusals (a taken
 * slug, the last owner, an unknown email) show on the page; faults go on to the console's fault page.
 */

/** What the forms post, checked as the admin API checks its bodies. */
const nameField = z.string().trim().min(1, "name: required").max(100);
const slugField = z
  .string()
  .trim()
  .regex(
    /^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){1,47}$/,
    "slug: 2–48 lower-case letters, digits and single dashes",
  );
const emailField = z.email("email: not an email address").max(254);

/** The form's text fields, trimmed and bounded (`max`: the longest a field may be, e.g. a SAML metadata document). */
export async function formOf(c: Ctx, max = 5000): Promise<Record<string, string>> {
  const form = await c.req.parseBody();
  return Object.fromEntries(
    Object.entries(form).flatMap(([name, value]) =>
      typeof value === "string" ? [[name, value.trim().slice(0, max)]] : [],
    ),
  );
}

function parsed<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (!result.success) throw new AppError("invalid-request", describeIssues(result.error.issues));
  return result.data;
}

/** A refusal's message (4xx), or null for a fault the console's fault page answers. */
const refusal = (error: unknown) => (error instanceof AppError && error.status < 500 ? error.message : null);

async function showOrgs(c: Ctx, session: ConsoleSession, error?: string) {
  const q = (c.req.query("q") ?? "").trim().slice(0, 100);
  const orgs = await listOrgs(c.var.deps, {
    limit: 50,
    cursor: c.req.query("cursor") || undefined,
    q: q || undefined,
  });
  return render(
    c,
    "Organizations",
    orgsPage(await chromeOf(c, session, "orgs"), { orgs: orgs.items, q, nextCursor: orgs.nextCursor, error }),
    error ? 400 : 200,
  );
}

/** An organization's page: the org, its members, invitations and SCIM tokens (a new one's value once). */
export async function showOrg(
  c: Ctx,
  session: ConsoleSession,
  orgId: string,
  options: { error?: string; newScimToken?: string; newSetupLinkUrl?: string } = {},
) {
  const deps = c.var.deps;
  const { error } = options;
  const org = await getOrg(deps, orgId);
  const [members, invitations, scimTokens] = await Promise.all([
    listMembers(deps, org.id, { limit: 200 }),
    listInvitations(deps, org.id, { limit: 100 }),
    listScimTokens(deps, org.id),
  ]);
  const chrome = await chromeOf(c, session, "orgs");
  const access = scimSection(chrome, orgPath(org.id), {
    tokens: scimTokens,
    scimBaseUrl: deps.config.urls.auth("/scim/v2"),
    newToken: options.newScimToken,
  });
  const enterprise = await ssoSectionOf(c, chrome, orgPath(org.id), org);
  const setup = await setupLinksSectionOf(c, chrome, orgPath(org.id), org.id, options.newSetupLinkUrl);
  return render(
    c,
    org.name,
    orgPage(chrome, {
      org,
      members: members.items,
      invitations: invitations.items,
      roles: orgRoles(deps.config),
      sso: html`${enterprise}${access}${setup}`,
      error,
    }),
    error ? 400 : 200,
  );
}

/**
 * An action on one organization: its refusals shown on the org's page (400), its success back to the page with a
 * notice. The org is read first, so an unknown id is the console's 404 page whatever the action.
 */
export const orgAction = (work: (c: Ctx, orgId: string) => Promise<string>) =>
  action(async (c, session) => {
    const orgId = (await getOrg(c.var.deps, c.req.param("id")!)).id;
    try {
      const done = await work(c, orgId);
      return back(c, orgPath(orgId), done);
    } catch (error) {
      const message = refusal(error);
      if (message === null) throw error;
      return showOrg(c, session, orgId, { error: message });
    }
  });

export const consoleOrgRoutes = new Hono<AppEnv>()
  .get(
    "/orgs",
    page((c, session) => showOrgs(c, session)),
  )
  .post(
    "/orgs/create",
    action(async (c, session) => {
      const deps = c.var.deps;
      const form = await formOf(c);
      try {
        const name = parsed(nameField, form.name);
        const slug = form.slug ? parsed(slugField, form.slug) : undefined;
        const owner = await findUserByEmail(deps.shards, parsed(emailField, form.ownerEmail).toLowerCase());
        if (!owner)
          throw new AppError("invalid-request", "no user has that email: the first owner must exist");
        const org = await createOrg(deps, { name, slug }, owner.id, "admin");
        auditAdminAction(c, "org.create", owner.id, { orgId: org.id });
        return back(c, orgPath(org.id), "org-created");
      } catch (error) {
        const message = refusal(error);
        if (message === null) throw error;
        return showOrgs(c, session, message);
      }
    }),
  )
  .get(
    "/orgs/:id",
    page((c, session) => showOrg(c, session, c.req.param("id")!)),
  )
  .post(
    "/orgs/:id/edit",
    orgAction(async (c, orgId) => {
      const form = await formOf(c);
      await updateOrg(c.var.deps, orgId, {
        name: parsed(nameField, form.name),
        slug: parsed(slugField, form.slug),
      });
      auditAdminAction(c, "org.update", null, { orgId });
      return "saved";
    }),
  )
  .post(
    "/orgs/:id/delete",
    action(async (c) => {
      if ((await formOf(c)).confirm !== "yes") throw new AppError("invalid-request", "confirm the deletion");
      const orgId = c.req.param("id")!;
      await deleteOrg(c.var.deps, orgId);
      auditAdminAction(c, "org.delete", null, { orgId });
      return back(c, "/orgs", "org-deleted");
    }),
  )
  .post(
    "/orgs/:id/members/add",
    orgAction(async (c, orgId) => {
      const deps = c.var.deps;
      const form = await formOf(c);
      const user = await findUserByEmail(deps.shards, parsed(emailField, form.email).toLowerCase());
      if (!user) throw new AppError("invalid-request", "no user has that email: invite the address instead");
      const role = form.role ?? "member";
      const { added } = await addMember(deps, { orgId, userId: user.id, role, source: "admin" });
      if (!added)
        throw new AppError("invalid-request", "that user is a member already: change their role below");
      auditAdminAction(c, "org.member.add", user.id, { orgId, role });
      return "member-added";
    }),
  )
  .post(
    "/orgs/:id/members/:userId/role",
    orgAction(async (c, orgId) => {
      const userId = c.req.param("userId")!;
      const role = (await formOf(c)).role ?? "";
      await setMemberRole(c.var.deps, orgId, userId, role);
      auditAdminAction(c, "org.member.role", userId, { orgId, role });
      return "saved";
    }),
  )
  .post(
    "/orgs/:id/members/:userId/remove",
    orgAction(async (c, orgId) => {
      const userId = c.req.param("userId")!;
      await removeMember(c.var.deps, orgId, userId);
      auditAdminAction(c, "org.member.remove", userId, { orgId });
      return "member-removed";
    }),
  )
  .post(
    "/orgs/:id/invitations/create",
    orgAction(async (c, orgId) => {
      const deps = c.var.deps;
      const form = await formOf(c);
      const email = parsed(emailField, form.email);
      const redirectTo = resolveRedirectTo(deps.config, undefined);
      const invitation = await createInvitation(
        deps,
        orgId,
        { email, role: form.role ?? "member", redirectTo },
        { userId: null },
      );
      auditAdminAction(c, "org.invitation.create", null, { orgId, invitationId: invitation.id });
      return "invitation-sent";
    }),
  )
  .post(
    "/orgs/:id/invitations/:invitationId/delete",
    orgAction(async (c, orgId) => {
      await deleteInvitation(c.var.deps, orgId, c.req.param("invitationId")!);
      auditAdminAction(c, "org.invitation.delete", null, { orgId });
      return "invitation-withdrawn";
    }),
  )
  .post(
    "/orgs/:id/scim-tokens/create",
    action(async (c, session) => {
      const deps = c.var.deps;
      const orgId = (await getOrg(deps, c.req.param("id")!)).id;
      const name = ((await formOf(c)).name ?? "").slice(0, 100);
      const created = await createScimToken(deps, orgId, name);
      auditAdminAction(c, "org.scim-token.create", null, { orgId, tokenId: created.id });
      // The answer to the post shows the token, once: a redirect would need it in a URL or stored.
      return showOrg(c, session, orgId, { newScimToken: created.token });
    }),
  )
  .post(
    "/orgs/:id/scim-tokens/:tokenId/revoke",
    orgAction(async (c, orgId) => {
      const tokenId = c.req.param("tokenId")!;
      await deleteScimToken(c.var.deps, orgId, tokenId);
      auditAdminAction(c, "org.scim-token.delete", null, { orgId, tokenId });
      return "scim-token-revoked";
    }),
  );
