import { html } from "hono/html";
import type { WireConnection } from "../../sso";
import { action, type Chrome, when } from "./pages";

/**
 * An organization's enterprise sign-in in the console (contract organizations.md §2): its connections (OIDC, SAML),
 * its email domains (verified by DNS or by the operator) and enforced SSO. Secrets (an OIDC client secret) go in and
 * never come back out.
 */

export interface DomainView {
  domain: string;
  verified: boolean;
  verifiedAt: string | null;
  txtName: string;
  txtValue: string;
}

const csrf = (chrome: Chrome) => html`<input type="hidden" name="csrf" value="${chrome.csrf}">`;
const roleOptions = (roles: string[]) =>
  roles.map((role) => html`<option value="${role}" ${role === "member" ? "selected" : ""}>${role}</option>`);

/** What identifies a connection to a person: the IdP's issuer or entity, and what to register there. */
function connectionDetails(connection: WireConnection) {
  if (connection.oidc) {
    return html`<dl class="detail"><dt>Issuer</dt><dd><code>${connection.oidc.issuer}</code></dd><dt>Client id</dt><dd><code>${connection.oidc.clientId}</code></dd><dt>Redirect URI (register at the IdP)</dt><dd><code>${connection.oidc.redirectUri}</code></dd></dl>`;
  }
  const saml = connection.saml ?? {};
  const shown = Object.entries(saml).filter(
    ([, value]) => typeof value === "string" && (value as string).length < 300,
  ) as [string, string][];
  return html`<dl class="detail">${shown.map(([name, value]) => html`<dt>${name}</dt><dd><code>${value}</code></dd>`)}</dl>`;
}

function connectionsTable(chrome: Chrome, orgPathname: string, connections: WireConnection[]) {
  if (connections.length === 0) return html`<p class="muted">No connection.</p>`;
  return html`<table class="cards"><thead><tr><th>Type</th><th>Identity provider</th><th>Default role</th><th>Status</th><th></th></tr></thead><tbody>${connections.map(
    (connection) =>
      html`<tr><td data-label="Type">${connection.type.toUpperCase()}</td><td data-label="Identity provider">${connectionDetails(connection)}</td><td data-label="Default role">${connection.defaultRole}</td><td data-label="Status">${
        connection.enabled
          ? html`<span class="badge on">enabled</span>`
          : html`<span class="badge off">disabled</span>`
      }<br><span class="muted">since ${when(connection.createdAt)}</span></td><td>${action(
        chrome,
        `${orgPathname}/connections/${encodeURIComponent(connection.id)}/delete`,
        "Remove",
        "danger",
      )}</td></tr>`,
  )}</tbody></table>`;
}

function domainsTable(chrome: Chrome, orgPathname: string, domains: DomainView[]) {
  if (domains.length === 0) return html`<p class="muted">No domain.</p>`;
  return html`<table class="cards"><thead><tr><th>Domain</th><th>Status</th><th>DNS TXT record</th><th></th></tr></thead><tbody>${domains.map(
    (domain) => {
      const path = `${orgPathname}/domains/${encodeURIComponent(domain.domain)}`;
      return html`<tr><td data-label="Domain">${domain.domain}</td><td data-label="Status">${
        domain.verified
          ? html`<span class="badge on">verified</span> <span class="muted">${when(domain.verifiedAt)}</span>`
          : html`<span class="badge">not verified</span>`
      }</td><td data-label="DNS TXT record">${
        domain.verified
          ? "–"
          : html`<dl class="detail"><dt>Name</dt><dd><code>${domain.txtName}</code></dd><dt>Value</dt><dd><code>${domain.txtValue}</code></dd></dl>`
      }</td><td><div class="actions">${
        domain.verified
          ? ""
          : html`${action(chrome, `${path}/verify`, "Check DNS", "", html`<input type="hidden" name="how" value="dns">`)}${action(
              chrome,
              `${path}/verify`,
              "Mark verified",
              "",
              html`<input type="hidden" name="how" value="admin">`,
            )}`
      }${action(chrome, `${path}/delete`, "Remove", "danger")}</div></td></tr>`;
    },
  )}</tbody></table>`;
}

export function ssoSection(
  chrome: Chrome,
  orgPathname: string,
  input: { connections: WireConnection[]; domains: DomainView[]; enforceSso: boolean; roles: string[] },
) {
  const base = `${chrome.base}${orgPathname}`;
  return html`<h2 id="sso">Enterprise sign-in</h2>
<p class="muted">People whose email is in a verified domain sign in through the organization's identity provider;
their first sign-in creates their account and membership.</p>
<h3>Connections</h3>
${connectionsTable(chrome, orgPathname, input.connections)}
<details><summary>Add an OIDC connection</summary>
<form method="post" action="${base}/connections/oidc" class="edit">${csrf(chrome)}
  <label>Issuer (https) <input name="issuer" type="url" required maxlength="2048" spellcheck="false"></label>
  <label>Client id <input name="clientId" required maxlength="512" spellcheck="false"></label>
  <label>Client secret <input name="clientSecret" type="password" required maxlength="2048" autocomplete="off"></label>
  <label>Scopes (space-separated; default openid email profile) <input name="scopes" maxlength="500" spellcheck="false"></label>
  <label>Role of new members <select name="defaultRole">${roleOptions(input.roles)}</select></label>
  <button class="primary" type="submit">Add OIDC connection</button>
</form></details>
<details><summary>Add a SAML connection</summary>
<form method="post" action="${base}/connections/saml" class="edit">${csrf(chrome)}
  <label>IdP metadata URL (https) <input name="metadataUrl" type="url" maxlength="2048" spellcheck="false"></label>
  <label>…or the IdP metadata XML <textarea name="metadataXml" rows="6" maxlength="60000" spellcheck="false"></textarea></label>
  <label>Role of new members <select name="defaultRole">${roleOptions(input.roles)}</select></label>
  <label class="check"><input type="checkbox" name="allowIdpInitiated" value="yes"> Accept IdP-initiated sign-ins</label>
  <button class="primary" type="submit">Add SAML connection</button>
</form></details>
<h3>Domains</h3>
${domainsTable(chrome, orgPathname, input.domains)}
<form method="post" action="${base}/domains/add" class="filters" aria-label="Add a domain">${csrf(chrome)}
  <label>Domain <input name="domain" required maxlength="253" spellcheck="false" placeholder="example.com"></label>
  <button type="submit">Add domain</button>
</form>
<h3>Enforced SSO</h3>
<p>${
    input.enforceSso
      ? "On: password, link, code and passkey sign-ins of emails in the verified domains are refused; they sign in through the identity provider."
      : "Off: people of the verified domains may also sign in with a password, a link, a code or a passkey."
  }</p>
<div class="actions">${action(
    chrome,
    `${orgPathname}/enforce-sso`,
    input.enforceSso ? "Stop enforcing SSO" : "Enforce SSO for these domains",
    input.enforceSso ? "danger" : "",
    html`<input type="hidden" name="enforce" value="${input.enforceSso ? "off" : "on"}">`,
  )}</div>`;
}
