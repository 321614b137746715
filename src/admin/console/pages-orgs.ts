import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import type { OrganizationRow } from "../../db/schema";
import type { WireMember, WireOrg } from "../../orgs";
import { action, type Chrome, frame, when } from "./pages";

/**
 * Organizations in the console (contract organizations.md §1): the list with search and paging, creation, and an
 * organization's page with its members, invitations and (pages-org-access.ts) enterprise sign-in and SCIM.
 */

type Body = HtmlEscapedString | Promise<HtmlEscapedString>;

export const orgPath = (id: string) => `/orgs/${encodeURIComponent(id)}`;

const errorBox = (error?: string) => (error ? html`<p class="error" role="alert">${error}</p>` : "");

const roleOptions = (roles: string[], selected = "member") =>
  roles.map((role) => html`<option value="${role}" ${role === selected ? "selected" : ""}>${role}</option>`);

const csrf = (chrome: Chrome) => html`<input type="hidden" name="csrf" value="${chrome.csrf}">`;

export function orgsPage(
  chrome: Chrome,
  input: { orgs: WireOrg[]; q: string; nextCursor: string | null; error?: string },
) {
  const next = input.nextCursor
    ? `?${new URLSearchParams({ ...(input.q ? { q: input.q } : {}), cursor: input.nextCursor })}`
    : undefined;
  return frame(
    chrome,
    html`<h1>Organizations</h1>
<form method="get" action="${chrome.base}/orgs" class="filters" aria-label="Search organizations">
  <label>Search <input type="search" name="q" value="${input.q}" placeholder="Name or slug"></label>
  <button type="submit">Search</button>
</form>
${
  input.orgs.length === 0
    ? html`<p class="muted">${input.q ? "No organization matches." : "No organization yet."}</p>`
    : html`<table class="cards"><thead><tr><th>Name</th><th>Slug</th><th>Created</th></tr></thead><tbody>${input.orgs.map(
        (org) =>
          html`<tr><td data-label="Name"><a href="${chrome.base}${orgPath(org.id)}">${org.name}</a></td><td data-label="Slug"><code>${org.slug}</code></td><td data-label="Created">${when(org.createdAt)}</td></tr>`,
      )}</tbody></table>`
}
${next ? html`<p><a href="${next}">Older →</a></p>` : ""}
<h2 id="create">Create an organization</h2>
${errorBox(input.error)}
<form method="post" action="${chrome.base}/orgs/create" class="edit">
  ${csrf(chrome)}
  <label>Name <input name="name" required maxlength="100"></label>
  <label>Slug (optional: made from the name) <input name="slug" maxlength="48" pattern="[a-z0-9-]+" spellcheck="false"></label>
  <label>First owner's email <input name="ownerEmail" type="email" required maxlength="254" spellcheck="false"></label>
  <button class="primary" type="submit">Create organization</button>
</form>`,
  );
}

export interface OrgView {
  org: OrganizationRow;
  members: WireMember[];
  invitations: { id: string; email: string; role: string; createdAt: string; expiresAt: string }[];
  roles: string[];
  /** The access sections: enterprise sign-in and SCIM (pages-org-access.ts). */
  sso?: Body;
  error?: string;
}

function membersTable(chrome: Chrome, view: OrgView) {
  const path = orgPath(view.org.id);
  if (view.members.length === 0) return html`<p class="muted">No member.</p>`;
  return html`<table class="cards"><thead><tr><th>Member</th><th>Role</th><th>Status</th><th>Since</th><th></th></tr></thead><tbody>${view.members.map(
    (member) => {
      const memberPath = `${path}/members/${encodeURIComponent(member.userId)}`;
      const label = member.email ?? member.displayName ?? member.userId;
      return html`<tr><td data-label="Member"><a href="${chrome.base}/users/${encodeURIComponent(member.userId)}">${label}</a><br><span class="muted">joined via ${member.source}</span></td><td data-label="Role"><form method="post" action="${chrome.base}${memberPath}/role" class="inline">${csrf(chrome)}<select name="role" aria-label="Role of ${label}">${roleOptions(view.roles, member.role)}</select> <button type="submit">Save</button></form></td><td data-label="Status">${
        member.active
          ? html`<span class="badge on">active</span>`
          : html`<span class="badge off">suspended</span>`
      }</td><td data-label="Since">${when(member.createdAt)}</td><td>${action(chrome, `${memberPath}/remove`, "Remove", "danger")}</td></tr>`;
    },
  )}</tbody></table>`;
}

function invitationsTable(chrome: Chrome, view: OrgView) {
  if (view.invitations.length === 0) return html`<p class="muted">No pending invitation.</p>`;
  const path = orgPath(view.org.id);
  return html`<table class="cards"><thead><tr><th>Email</th><th>Role</th><th>Expires</th><th></th></tr></thead><tbody>${view.invitations.map(
    (invitation) =>
      html`<tr><td data-label="Email">${invitation.email}</td><td data-label="Role">${invitation.role}</td><td data-label="Expires">${when(invitation.expiresAt)}</td><td>${action(
        chrome,
        `${path}/invitations/${encodeURIComponent(invitation.id)}/delete`,
        "Withdraw",
      )}</td></tr>`,
  )}</tbody></table>`;
}

export function orgPage(chrome: Chrome, view: OrgView) {
  const { org } = view;
  const path = orgPath(org.id);
  return frame(
    chrome,
    html`<p><a href="${chrome.base}/orgs">← Organizations</a></p>
<h1>${org.name}</h1>
${errorBox(view.error)}
<dl><dt>Slug</dt><dd><code>${org.slug}</code></dd><dt>Id</dt><dd><code>${org.id}</code></dd>
<dt>Created</dt><dd>${when(new Date(org.createdAt).toISOString())}</dd>
<dt>Enforced SSO</dt><dd>${org.enforceSso ? html`<span class="badge on">on</span>` : html`<span class="badge">off</span>`}</dd></dl>
<h2 id="members">Members</h2>
${membersTable(chrome, view)}
<form method="post" action="${chrome.base}${path}/members/add" class="filters" aria-label="Add a member">
  ${csrf(chrome)}
  <label>Email of an existing user <input name="email" type="email" required maxlength="254" spellcheck="false"></label>
  <label>Role <select name="role">${roleOptions(view.roles)}</select></label>
  <button type="submit">Add member</button>
</form>
<h2 id="invitations">Invitations</h2>
${invitationsTable(chrome, view)}
<form method="post" action="${chrome.base}${path}/invitations/create" class="filters" aria-label="Invite by email">
  ${csrf(chrome)}
  <label>Email <input name="email" type="email" required maxlength="254" spellcheck="false"></label>
  <label>Role <select name="role">${roleOptions(view.roles)}</select></label>
  <button type="submit">Send invitation</button>
</form>
${view.sso ?? ""}
<h2 id="edit">Edit</h2>
<form method="post" action="${chrome.base}${path}/edit" class="edit">
  ${csrf(chrome)}
  <label>Name <input name="name" required maxlength="100" value="${org.name}"></label>
  <label>Slug <input name="slug" required maxlength="48" pattern="[a-z0-9-]+" spellcheck="false" value="${org.slug}"></label>
  <button class="primary" type="submit">Save</button>
</form>
<h2 id="delete">Delete</h2>
<p class="muted">Deletes its members, invitations, domains, connections and SCIM tokens; sessions and OAuth2 tokens
switched into it lose it at their next refresh.</p>
<div class="actions">${action(
      chrome,
      `${path}/delete`,
      "Delete organization",
      "danger",
      html`<label><input type="checkbox" name="confirm" value="yes" required> I mean it </label>`,
    )}</div>`,
  );
}
