import { html } from "hono/html";
import { USER_SORTS, USER_STATUSES, type UserFilters } from "../user-filters";
import type { AdminUser, AdminUserDetail } from "../wire";
import { action, type Chrome, frame, when } from "./pages";

/** The console's user list (filters, order, paging, CSV, create) and the user's edit form and mails. */

const SORT_LABELS: Record<(typeof USER_SORTS)[number], string> = {
  newest: "Newest first",
  oldest: "Oldest first",
  email: "Email A–Z",
  "last-seen": "Recently seen",
};

/** The filters as a query string (for paging and the CSV link): only what is set. */
export function filterQuery(filters: UserFilters, extra: Record<string, string> = {}): string {
  const entries = Object.entries({ ...filters, ...extra }).filter(
    ([name, value]) => value !== undefined && value !== "" && !(name === "sort" && value === "newest"),
  ) as [string, string][];
  return new URLSearchParams(entries).toString();
}

const option = (value: string, label: string, selected: string | undefined) =>
  html`<option value="${value}" ${value === (selected ?? "") ? "selected" : ""}>${label}</option>`;

export function usersPage(
  chrome: Chrome,
  input: {
    users: AdminUser[];
    filters: UserFilters;
    /** Paging links' positions (user-lists.ts): the page after this one, the page before; null at an end. */
    next: string | null;
    previous: string | null;
    providers: string[];
    error?: string;
  },
) {
  const { filters } = input;
  const pageLink = (side: "after" | "before", position: string, label: string) =>
    html`<a href="?${filterQuery(filters, { [side]: position })}">${label}</a>`;
  const filtered = Object.entries(filters).some(([name, value]) => name !== "sort" && value);
  return frame(
    chrome,
    html`<h1>Users</h1>
<form method="get" action="${chrome.base}/users" class="filters" aria-label="Filter users">
  <label>Search <input type="search" name="search" value="${filters.search ?? ""}" placeholder="Email, phone, name or id"></label>
  <label>Status <select name="status">${option("", "any", filters.status)}${USER_STATUSES.map((s) => option(s, s, filters.status))}</select></label>
  <label>Provider <select name="provider">${option("", "any", filters.provider)}${input.providers.map((p) => option(p, p, filters.provider))}</select></label>
  <label>Role <input name="role" value="${filters.role ?? ""}" size="10"></label>
  <label>MFA <select name="mfa">${option("", "any", filters.mfa)}${option("on", "on", filters.mfa)}${option("off", "off", filters.mfa)}</select></label>
  <label>Created from <input type="date" name="createdFrom" value="${filters.createdFrom ?? ""}"></label>
  <label>to <input type="date" name="createdTo" value="${filters.createdTo ?? ""}"></label>
  <label>Order <select name="sort">${USER_SORTS.map((s) => option(s, SORT_LABELS[s], filters.sort))}</select></label>
  <button type="submit">Show</button>
  <a href="${chrome.base}/users.csv?${filterQuery(filters)}" download>Export CSV</a>
</form>
${
  input.users.length === 0
    ? html`<p class="muted">No user${filtered ? " matches" : " yet"}.</p>`
    : html`<table><thead><tr><th>Email / phone</th><th>Name</th><th>Created</th><th>Last seen</th><th>Status</th></tr></thead><tbody>
${input.users.map(
  (
    user,
  ) => html`<tr><td><a href="${chrome.base}/users/${user.id}">${user.email ?? user.phoneNumber ?? user.id}</a></td>
<td>${user.displayName}</td><td>${when(user.createdAt)}</td><td>${when(user.lastSeen)}</td>
<td>${user.disabled ? html`<span class="badge off">disabled</span>` : html`<span class="badge on">active</span>`}${
    user.isAnonymous ? html` <span class="badge">anonymous</span>` : ""
  }${user.emailVerified ? "" : html` <span class="badge">unverified</span>`}${
    user.activeMfaType ? html` <span class="badge">MFA</span>` : ""
  }</td></tr>`,
)}</tbody></table>`
}
<p class="paging">${input.previous ? pageLink("before", input.previous, "← Previous page") : ""} ${
      input.next ? pageLink("after", input.next, "Next page →") : ""
    }</p>
<h2 id="create">Create a user</h2>
${input.error ? html`<p class="error" role="alert">${input.error}</p>` : ""}
<form method="post" action="${chrome.base}/users/create" class="edit">
  <input type="hidden" name="csrf" value="${chrome.csrf}">
  <label>Email <input type="email" name="email" required autocomplete="off"></label>
  <label>Display name <input name="displayName" maxlength="100" autocomplete="off"></label>
  <label>Password (optional: without one, the user signs in by link or resets it) <input type="password" name="password" autocomplete="new-password"></label>
  <label class="check"><input type="checkbox" name="emailVerified" value="yes"> The address is verified</label>
  <button class="primary" type="submit">Create user</button>
</form>`,
  );
}

/** The user page's edit form and the mails an operator can send again. */
export function userEditor(chrome: Chrome, user: AdminUserDetail, error?: string) {
  const path = `/users/${user.id}`;
  return html`<h2 id="edit">Edit</h2>
${error ? html`<p class="error" role="alert">${error}</p>` : ""}
<form method="post" action="${chrome.base}${path}/edit" class="edit">
  <input type="hidden" name="csrf" value="${chrome.csrf}">
  <label>Display name <input name="displayName" value="${user.displayName}" maxlength="100"></label>
  <label>Roles (comma-separated) <input name="roles" value="${user.roles.join(", ")}"></label>
  <label>Default role <input name="defaultRole" value="${user.defaultRole}"></label>
  <label>Metadata (JSON object) <textarea name="metadata" rows="4" spellcheck="false">${JSON.stringify(user.metadata ?? {}, null, 2)}</textarea></label>
  <label class="check"><input type="checkbox" name="emailVerified" value="yes" ${user.emailVerified ? "checked" : ""}> Email verified</label>
  <button class="primary" type="submit">Save</button>
</form>
${
  user.email
    ? html`<div class="actions">${
        user.emailVerified
          ? ""
          : action(chrome, `${path}/send-verification`, "Send the verification mail again")
      }${action(chrome, `${path}/send-reset`, "Send a password reset mail")}</div>`
    : ""
}`;
}
