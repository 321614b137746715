import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import type { PageText } from "../browser/page-text";
import { errorBox, hidden } from "../browser/render";
import type { Catalogue } from "../browser/text";
import type { ClientFacts } from "../oauth2";

/** The consent screen, the device pages and the problem page. */

/**
 * The RFC 8707 resources the tokens will be for (an MCP server, an API), as a person can judge them: each host, and
 * the whole URL when it says more than the host.
 */
function resourceList(t: PageText, resources: string[]) {
  if (resources.length === 0) return "";
  const shown = resources.map((resource) => {
    try {
      const url = new URL(resource);
      const bare = url.pathname === "/" && !url.search;
      return { host: url.host || resource, url: bare ? undefined : resource };
    } catch {
      return { host: resource, url: undefined };
    }
  });
  return html`<div class="resources"><p>${t.accessTo}</p><ul class="resources">${shown.map(
    (item) =>
      html`<li><strong>${item.host}</strong>${item.url ? html`<br><span class="url">${item.url}</span>` : ""}</li>`,
  )}</ul></div>`;
}

/** Under the client's name: who publishes it, when a metadata document names it, and where it sends you back. */
const publisher = (t: PageText, facts: ClientFacts) =>
  html`${
    facts.documentHost
      ? html`<p class="origin">${t.publishedBy} <strong>${facts.documentHost}</strong></p>`
      : ""
  }${
    facts.redirectHost
      ? html`<p class="origin">${t.sendsYouBackTo} <strong>${facts.redirectHost}</strong></p>`
      : ""
  }`;

/** An organization the person may let the client act in (their active memberships). */
export interface OrgChoice {
  id: string;
  name: string;
  role: string;
}

/**
 * The organization picker (contract organizations.md §1): "none" first, then the person's organizations; the one the
 * request named is preselected. Shown only to members of some organization, and not for a device (docs/oauth2.md).
 */
const orgPicker = (t: PageText, orgs: OrgChoice[], selected: string | undefined) =>
  orgs.length === 0
    ? ""
    : html`<label for="organization">${t.actsIn}</label>
<select id="organization" name="organization">
  <option value=""${selected ? "" : html` selected`}>${t.noOrganization}</option>
  ${orgs.map(
    (org) =>
      html`<option value="${org.id}"${org.id === selected ? html` selected` : ""}>${org.name} (${org.role})</option>`,
  )}
</select>`;

/** After what it asks: how far its name can be trusted. */
const caution = (t: PageText, facts: ClientFacts) =>
  facts.loopbackOnly
    ? html`<p class="warning" role="note">${t.loopbackWarning}</p>`
    : facts.unreviewed
      ? html`<p class="note">${t.unreviewedNote}</p>`
      : "";

const scopeList = (t: PageText, scopes: string[]) =>
  html`<ul class="scopes">${scopes.map((scope) => html`<li>${t.scopes[scope] ?? scope}</li>`)}</ul>`;

/**
 * What the client asks for. A client coming back for more (contract §12, incremental consent) is asked about the new
 * scopes only, under those the person allowed before, so the question is the difference; asked again for the same
 * scopes (`prompt=consent`), it lists them all.
 */
function scopeLists(t: PageText, scopes: string[], granted: string[]) {
  const before = scopes.filter((scope) => granted.includes(scope));
  const added = scopes.filter((scope) => !granted.includes(scope));
  if (scopes.length === 0) return html`<p>${t.asksNothing}</p>`;
  if (before.length === 0 || added.length === 0) return html`<p>${t.willBeAbleTo}</p>${scopeList(t, scopes)}`;
  return html`<p>${t.nowAlsoAsks}</p>${scopeList(t, added)}
<details class="granted"><summary>${t.alreadyAllowed}</summary>${scopeList(t, before)}</details>`;
}

export function consentForm(input: {
  t: PageText;
  action: string;
  switchAction: string;
  requestId: string;
  clientName: string;
  scopes: string[];
  /** Scopes the person allowed this client before: listed apart, the new ones asked about (incremental consent). */
  granted?: string[];
  userLabel: string;
  facts: ClientFacts;
  /** The user code of a device flow: the person checks it is the one their device shows. */
  deviceUserCode?: string;
  /** A CIBA request's approval: its words, and the client's binding message (shown quoted, attributed). */
  ciba?: { words: Catalogue["ciba"]; bindingMessage?: string };
  /** RFC 8707 `resource` values of the request: what the tokens will be for. */
  resources?: string[];
  /** The organizations the client may be let act in, and the one preselected. */
  organizations?: OrgChoice[];
  selectedOrg?: string;
  /** RFC 9396: the request's authorization details, rendered by their types' templates (oauth2 `authorizationDetailsHtml`). */
  authorizationDetails?: HtmlEscapedString | Promise<HtmlEscapedString>;
}) {
  const { t } = input;
  // The logo sits beside the name, which says the same: no alternative text of its own.
  return html`${
    input.facts.logoUri
      ? html`<img class="client-logo" src="${input.facts.logoUri}" alt="" referrerpolicy="no-referrer">`
      : ""
  }<h1>${input.clientName}</h1>
${publisher(t, input.facts)}
${
  input.ciba
    ? cibaLead(input.ciba, input.clientName)
    : input.deviceUserCode
      ? html`<p class="lead">${t.wantsDeviceAccess}</p>
<p class="code">${input.deviceUserCode}</p>
<p class="warning" role="note">${t.deviceWarning}</p>`
      : html`<p class="lead">${t.wantsAccess}</p>`
}
${resourceList(t, input.resources ?? [])}
${caution(t, input.facts)}
${scopeLists(t, input.scopes, input.granted ?? [])}
${input.authorizationDetails ? html`<div class="details"><p>${t.asksInDetail}</p>${input.authorizationDetails}</div>` : ""}
<form method="post" action="${input.action}">
  ${hidden(input.requestId)}
  ${orgPicker(t, input.organizations ?? [], input.selectedOrg)}
  <div class="actions">
    <button type="submit" name="decision" value="deny">${t.deny}</button>
    <button class="primary" type="submit" name="decision" value="allow">${t.allow}</button>
  </div>
</form>
<div class="who">${t.signedInAs} ${input.userLabel}.
<form method="post" action="${input.switchAction}">${hidden(input.requestId)}<button class="link-button" type="submit">${t.useAnotherAccount}</button></form></div>`;
}

/**
 * A CIBA request's lead: the client's binding message under a fixed header that names the client, in quotes, so its
 * words never pass for the service's own (OpenID CIBA Core §7.1: it binds this page to what the client shows).
 */
function cibaLead(ciba: { words: Catalogue["ciba"]; bindingMessage?: string }, clientName: string) {
  const { words } = ciba;
  return html`<p class="lead">${words.wantsApproval}</p>
${
  ciba.bindingMessage
    ? html`<figure class="binding"><figcaption>${words.messageFrom(clientName)}</figcaption><blockquote>“${ciba.bindingMessage}”</blockquote></figure>`
    : ""
}
<p class="warning" role="note">${words.warning}</p>`;
}

/** A CIBA request approved: the client learns it by its poll or ping. */
export function cibaApproved(words: Catalogue["ciba"]) {
  return html`<h1>${words.approvedTitle}</h1>
<p class="lead">${words.approvedLead}</p>`;
}

/** A CIBA request denied: the client hears `access_denied`. */
export function cibaDenied(words: Catalogue["ciba"]) {
  return html`<h1>${words.deniedTitle}</h1>
<p class="lead">${words.deniedLead}</p>`;
}

/** The device flow's first step: the code the device shows. */
export function deviceCodeForm(input: { t: PageText; action: string; userCode?: string; error?: string }) {
  const { t } = input;
  return html`<h1>${t.deviceTitle}</h1>
<p class="lead">${t.deviceLead}</p>
${errorBox(input.error)}
<form method="post" action="${input.action}">
  <label for="user_code">${t.code}</label>
  <input id="user_code" name="user_code" type="text" required autocomplete="off" autocapitalize="characters"
    spellcheck="false" maxlength="20" placeholder="BCDF-GHJK" value="${input.userCode ?? ""}">
  <div class="actions"><button class="primary" type="submit">${t.continue}</button></div>
</form>`;
}

/** The device flow's last step. */
export function deviceFinished(t: PageText, outcome: "approved" | "denied") {
  return outcome === "approved"
    ? html`<h1>${t.deviceConnected}</h1>
<p class="lead">${t.deviceConnectedLead}</p>`
    : html`<h1>${t.deviceDenied}</h1>
<p class="lead">${t.deviceDeniedLead}</p>`;
}
