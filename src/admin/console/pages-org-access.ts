import { html } from "hono/html";
import type { Chrome } from "./pages";
import { action, when } from "./pages";

/**
 * An organization's access settings in the console: its SCIM tokens (contract organizations.md §3). A new token is
 * shown once, on the page that answers its creation, never in a URL; only its hash is stored.
 */

export interface ScimTokenView {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
}

const tokenBox = (token?: string) =>
  token
    ? html`<div class="notice" role="status"><p><strong>The SCIM token, shown this once:</strong></p><p><code class="secret">${token}</code></p><p>Paste it into the identity provider's provisioning settings now (the bearer token of the SCIM base URL above); it is not shown again.</p></div>`
    : "";

export function scimSection(
  chrome: Chrome,
  orgPathname: string,
  input: { tokens: ScimTokenView[]; scimBaseUrl: string; newToken?: string },
) {
  return html`<h2 id="scim">SCIM provisioning</h2>
<p class="muted">The identity provider creates, updates and deactivates this organization's members at
<code>${input.scimBaseUrl}</code> with a bearer token.</p>
${tokenBox(input.newToken)}
${
  input.tokens.length === 0
    ? html`<p class="muted">No SCIM token.</p>`
    : html`<table class="cards"><thead><tr><th>Name</th><th>Created</th><th>Last used</th><th></th></tr></thead><tbody>${input.tokens.map(
        (token) =>
          html`<tr><td data-label="Name">${token.name || html`<span class="muted">unnamed</span>`}</td><td data-label="Created">${when(token.createdAt)}</td><td data-label="Last used">${when(token.lastUsedAt)}</td><td>${action(
            chrome,
            `${orgPathname}/scim-tokens/${encodeURIComponent(token.id)}/revoke`,
            "Revoke",
            "danger",
          )}</td></tr>`,
      )}</tbody></table>`
}
<form method="post" action="${chrome.base}${orgPathname}/scim-tokens/create" class="filters" aria-label="Create a SCIM token">
  <input type="hidden" name="csrf" value="${chrome.csrf}">
  <label>Name (which IdP holds it) <input name="name" maxlength="100"></label>
  <button type="submit">Create token</button>
</form>`;
}
