import { html } from "hono/html";
import { type ClientConsent, type ClientGrant, SUPPORTED_SCOPES, type WireClient } from "../../oauth2";
import { cibaSection } from "./client-ciba";
import { action, type Chrome, frame, when } from "./pages";

/** OAuth2 clients in the console: create, the client's page (edit, rotate the secret, delete), its grants. */

const at = (ms: number) => when(new Date(ms).toISOString());

function clientFields(client?: WireClient) {
  const scopes = client?.scopes ?? ["openid", "profile", "email", "offline_access"];
  return html`<label>Name <input name="clientName" required maxlength="200" value="${client?.clientName ?? ""}"></label>
  <label>Redirect URIs (one per line) <textarea name="redirectUris" rows="3" spellcheck="false">${(client?.redirectUris ?? []).join("\n")}</textarea></label>
  <label>FedCM origins (one per line: relying-party pages that may ask the browser's sign-in prompt, docs/fedcm.md) <textarea name="fedcmOrigins" rows="2" spellcheck="false">${(client?.fedcmOrigins ?? []).join("\n")}</textarea></label>
  <label>Logo URL (https; shown on its consent screen) <input name="logoUri" type="url" maxlength="2048" spellcheck="false" value="${client?.logoUri ?? ""}"></label>
  <label>Privacy policy URL (https; linked by the FedCM prompt) <input name="policyUri" type="url" maxlength="2048" spellcheck="false" value="${client?.policyUri ?? ""}"></label>
  <label>Terms of service URL (https; linked by the FedCM prompt) <input name="tosUri" type="url" maxlength="2048" spellcheck="false" value="${client?.tosUri ?? ""}"></label>
  <fieldset><legend>Scopes</legend>${SUPPORTED_SCOPES.map(
    (scope) =>
      html`<label class="check"><input type="checkbox" name="scopes" value="${scope}" ${scopes.includes(scope) ? "checked" : ""}> ${scope}</label>`,
  )}</fieldset>
  <label>Client authentication <select name="tokenEndpointAuthMethod">${[
    ["client_secret_basic", "secret, HTTP Basic (a server)"],
    ["client_secret_post", "secret, in the form (a server)"],
    ["none", "none: a public client with PKCE (SPA, mobile, CLI)"],
  ].map(
    ([value, label]) =>
      html`<option value="${value}" ${(client?.tokenEndpointAuthMethod ?? "client_secret_basic") === value ? "selected" : ""}>${label}</option>`,
  )}</select></label>`;
}

/** The one time a secret is shown: after create or rotation. */
const secretBox = (secret?: string) =>
  secret
    ? html`<div class="notice" role="status"><p><strong>The client secret, shown this once:</strong></p><p><code class="secret">${secret}</code></p><p>Store it in the app's configuration now; only its hash is kept here.</p></div>`
    : "";

export function clientsPage(chrome: Chrome, clients: WireClient[], options: { error?: string } = {}) {
  return frame(
    chrome,
    html`<h1>OAuth2 clients</h1>
${
  clients.length === 0
    ? html`<p class="muted">No client yet.</p>`
    : html`<table><thead><tr><th>Name</th><th>Client id</th><th>Authentication</th><th>Registered</th><th>Last used</th></tr></thead><tbody>${clients.map(
        (client) =>
          html`<tr><td><a href="${chrome.base}/clients/${encodeURIComponent(client.clientId)}">${client.clientName}</a></td><td><code>${client.clientId}</code></td><td>${client.tokenEndpointAuthMethod}</td><td>${registrationLabel(chrome, client)}</td><td>${when(client.lastUsedAt)}</td></tr>`,
      )}</tbody></table>`
}
<h2 id="create">Create a client</h2>
${options.error ? html`<p class="error" role="alert">${options.error}</p>` : ""}
<form method="post" action="${chrome.base}/clients/create" class="edit">
  <input type="hidden" name="csrf" value="${chrome.csrf}">
  ${clientFields()}
  <button class="primary" type="submit">Create client</button>
</form>`,
  );
}

/** How a client came to be: made by an admin, registered itself (RFC 7591) or by a user, a metadata document. */
function registrationLabel(chrome: Chrome, client: WireClient) {
  switch (client.registration) {
    case "admin":
      return "by an admin";
    case "open":
      return html`<span class="badge">self-registered</span>`;
    case "authenticated":
      return html`by user <a href="${chrome.base}/users/${client.registeredByUserId ?? ""}"><code>${client.registeredByUserId}</code></a>`;
    case "metadata-document":
      return html`<span class="badge">metadata document</span>`;
  }
}

export function clientPage(
  chrome: Chrome,
  client: WireClient,
  usage: { grants: ClientGrant[]; consents: ClientConsent[] },
  options: { secret?: string; error?: string } = {},
) {
  const path = `/clients/${encodeURIComponent(client.clientId)}`;
  const userLink = (id: string, email: string | null) =>
    html`<a href="${chrome.base}/users/${encodeURIComponent(id)}">${email ?? id}</a>`;
  return frame(
    chrome,
    html`<p><a href="${chrome.base}/clients">← OAuth2 clients</a></p>
<h1>${client.clientName}</h1>
${secretBox(options.secret)}
<dl><dt>Client id</dt><dd><code>${client.clientId}</code></dd><dt>Registration</dt><dd>${registrationLabel(chrome, client)}</dd>
<dt>Grant types</dt><dd>${client.grantTypes.join(", ")}</dd><dt>Created</dt><dd>${when(client.createdAt)}</dd>
<dt>Last used</dt><dd>${when(client.lastUsedAt)}</dd>
<dt>Token vault</dt><dd>${client.vaultProviders.join(", ") || "–"} <a href="${chrome.base}${path}/vault">Edit</a></dd>
<dt>Authorization details types</dt><dd><a href="${chrome.base}${path}/authorization-details">${client.authorizationDetailsTypes.map((entry) => entry.type).join(", ") || "none"}: edit</a></dd></dl>
<div class="actions">${
      client.tokenEndpointAuthMethod === "none"
        ? ""
        : action(chrome, `${path}/rotate-secret`, "Rotate the secret")
    }${action(
      chrome,
      `${path}/delete`,
      "Delete client",
      "danger",
      html`<label><input type="checkbox" name="confirm" value="yes" required> I mean it </label>`,
    )}</div>
<h2>Edit</h2>
${options.error ? html`<p class="error" role="alert">${options.error}</p>` : ""}
<form method="post" action="${chrome.base}${path}/edit" class="edit">
  <input type="hidden" name="csrf" value="${chrome.csrf}">
  ${clientFields(client)}
  <button class="primary" type="submit">Save</button>
</form>
${cibaSection(chrome, client)}
<h2>Signed-in people (${usage.grants.length})</h2>
${
  usage.grants.length === 0
    ? html`<p class="muted">No live grant.</p>`
    : html`<table><thead><tr><th>User</th><th>Scopes</th><th>Since</th><th>Last used</th><th>Expires</th></tr></thead><tbody>${usage.grants.map(
        (grant) =>
          html`<tr><td>${userLink(grant.userId, grant.userEmail)}</td><td>${grant.scopes.join(" ")}</td><td>${at(grant.createdAt)}</td><td>${at(grant.lastUsedAt)}</td><td>${at(grant.expiresAt)}</td></tr>`,
      )}</tbody></table>`
}
<h2>Consents (${usage.consents.length})</h2>
${
  usage.consents.length === 0
    ? html`<p class="muted">Nobody has allowed this client yet.</p>`
    : html`<table><thead><tr><th>User</th><th>Scopes allowed</th><th>Resources allowed</th><th>When</th></tr></thead><tbody>${usage.consents.map(
        (consent) =>
          html`<tr><td>${userLink(consent.userId, consent.userEmail)}</td><td>${consent.scopes.join(" ")}</td><td>${consent.resources.join(" ")}</td><td>${at(consent.grantedAt)}</td></tr>`,
      )}</tbody></table>`
}`,
  );
}
