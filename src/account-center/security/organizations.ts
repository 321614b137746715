import { Hono } from "hono";
import { html } from "hono/html";
import type { Catalogue } from "../../browser/text";
import { AppError } from "../../errors";
import type { AppEnv } from "../../http/app-env";
import { removeMember, requireOrgRole, type WireOrg } from "../../orgs";
import { accountPath, accountPost, backToAccount, type Ctx, type Signed } from "../forms";
import { idOf } from "./steps";
import type { Notice } from "./words";

/**
 * Organizations (contract organizations.md §1): the user's active memberships with their role, and leaving one, as
 * the API's `DELETE /orgs/{orgId}/members/{me}` does (any member may leave; the last owner may not). Leaving only
 * takes access away: no confirmation, the checks every post passes.
 * Threats: a cross-site post making the user leave (forms.ts refuses it); leaving an organization one is no member of,
 * or learning it exists, by its id (`requireOrgRole` answers "not found" for both: "gone").
 */

export const ORGANIZATIONS = "organizations";

/** The memberships shown: the first page of the API's list (`GET /orgs`), as many as a person plausibly has. */
export const MEMBERSHIPS_SHOWN = 100;

const roleName = (catalogue: Catalogue, role: string) =>
  (catalogue.accountSecurity.organizations.roles as Record<string, string>)[role] ?? role;

export function organizationsSection(c: Ctx, signed: Signed, orgs: (WireOrg & { role: string })[]) {
  const { catalogue } = signed;
  const w = catalogue.accountSecurity.organizations;
  const list = orgs.length
    ? html`<table class="list">
<thead><tr><th scope="col">${w.name}</th><th scope="col">${w.role}</th><th scope="col"><span class="security-sr">${w.leave}</span></th></tr></thead>
<tbody>${orgs.map(
        (org) => html`<tr>
  <td data-label="${w.name}" class="security-item-name">${org.name}</td>
  <td data-label="${w.role}">${roleName(catalogue, org.role)}</td>
  <td class="row-action"><form class="inline" method="post" action="${accountPath(c, "/security/organizations/leave")}">
    <input type="hidden" name="id" value="${org.id}">
    <button type="submit" aria-label="${w.leaveLabel(org.name)}">${w.leave}</button>
  </form></td>
</tr>`,
      )}</tbody>
</table>`
    : html`<p class="muted">${w.none}</p>`;
  return html`<section id="${ORGANIZATIONS}" class="card">
<h2>${w.title}</h2>
<p class="lead">${w.lead}</p>
${list}
</section>`;
}

export const organizationRoutes = new Hono<AppEnv>().post("/security/organizations/leave", async (c) => {
  const posted = await accountPost(c);
  if ("answer" in posted) return posted.answer;
  const userId = posted.session.user.id;
  const orgId = idOf(posted.params);
  let notice: Notice = "security-org-left";
  try {
    if (!orgId) throw new AppError("not-found");
    await requireOrgRole(c.var.deps, orgId, userId);
    await removeMember(c.var.deps, orgId, userId);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    if (error.code === "last-owner") notice = "security-last-owner";
    else if (error.code === "not-found") notice = "security-gone";
    else throw error;
  }
  return backToAccount(c, ORGANIZATIONS, notice);
});
