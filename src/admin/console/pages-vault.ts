import { html } from "hono/html";
import type { WireClient } from "../../oauth2";
import { type Chrome, frame } from "./pages";

/**
 * A client's token vault in the console (contract operators.md §3): which providers' tokens it may get for a user
 * who connected the account and let it. Only providers switched on here are offered; one set earlier and switched
 * off since stays listed (checked), so saving the form does not drop it silently.
 */
export function clientVaultPage(
  chrome: Chrome,
  client: WireClient,
  view: { vaultEnabled: boolean; providers: string[]; error?: string },
) {
  const path = `/clients/${encodeURIComponent(client.clientId)}`;
  const offered = [...new Set([...view.providers, ...client.vaultProviders])].sort();
  return frame(
    chrome,
    html`<p><a href="${chrome.base}${path}">← ${client.clientName}</a></p>
<h1>Token vault: ${client.clientName}</h1>
<p>The providers whose tokens this client may get, by token exchange (<code>audience=provider:&lt;name&gt;</code>), for a user who connected the account and let this client use it (docs/agents.md).</p>
${view.vaultEnabled ? "" : html`<p class="error" role="note">The token vault is off here (<code>AUTH_TOKEN_VAULT_ENABLED</code>): nothing is given until it is on.</p>`}
${view.error ? html`<p class="error" role="alert">${view.error}</p>` : ""}
${
  offered.length === 0
    ? html`<p class="muted">No provider is switched on (<code>AUTH_PROVIDER_&lt;NAME&gt;_ENABLED</code>).</p>`
    : html`<form method="post" action="${chrome.base}${path}/vault" class="edit">
  <input type="hidden" name="csrf" value="${chrome.csrf}">
  <fieldset><legend>Providers</legend>${offered.map(
    (name) =>
      html`<label class="check"><input type="checkbox" name="vaultProviders" value="${name}" ${client.vaultProviders.includes(name) ? "checked" : ""}> ${name}${view.providers.includes(name) ? "" : " (switched off)"}</label>`,
  )}</fieldset>
  <button class="primary" type="submit">Save</button>
</form>`
}`,
  );
}
