import { html } from "hono/html";
import type { WireSetupLink } from "../../setup-links";
import type { Chrome } from "./pages";
import { action, when } from "./pages";

/**
 * An organization's setup links in the console (contract operators.md §5): each link's intents, state and what the
 * customer's IT admin did through it (domains, connections and their tests, SCIM tokens), a form to make one (its
 * URL shown once, on the page that answers the post) and a revoke button. A connection made through a link is turned
 * on in the enterprise sign-in section above, once its test succeeded.
 */

const newLinkBox = (url?: string) =>
  url
    ? html`<div class="notice" role="status"><p><strong>The setup link, shown this once:</strong></p><p><code class="secret">${url}</code></p><p>Send it to the customer's IT admin; whoever holds it can use it until it expires or is revoked.</p></div>`
    : "";

function progress(chrome: Chrome, orgPathname: string, link: WireSetupLink) {
  const { domainsVerified, domainsClaimed, connections, scimTokens } = link.progress;
  const tested = connections.filter((connection) => connection.testedAt !== null);
  return html`<ul class="plain">
<li>Domains: ${domainsVerified.length} verified of ${domainsClaimed.length} claimed${domainsVerified.length ? html` (<code>${domainsVerified.join(", ")}</code>)` : ""}</li>
<li>Connections: ${connections.length} made, ${tested.length} tested, ${connections.filter((connection) => connection.enabled).length} on${connections.map(
    (connection) =>
      html`<br><code>${connection.id}</code> ${connection.type.toUpperCase()} — ${
        connection.lastTest
          ? connection.lastTest.ok
            ? html`<span class="badge on">test passed</span>`
            : html`<span class="badge off">test failed: ${connection.lastTest.error ?? "refused"}</span>`
          : html`<span class="badge">not tested</span>`
      } ${connection.enabled ? html`<span class="badge on">on</span>` : html`<span class="badge">off</span>`}${
        !connection.enabled && connection.testedAt !== null
          ? action(
              chrome,
              `${orgPathname}/setup-links/connections/${encodeURIComponent(connection.id)}/enable`,
              "Turn on",
            )
          : ""
      }`,
  )}</li>
<li>SCIM tokens: ${scimTokens.length} made, ${scimTokens.filter((token) => token.lastUsedAt !== null).length} used by the IdP</li>
</ul>`;
}

export function setupLinksSection(
  chrome: Chrome,
  orgPathname: string,
  input: { links: WireSetupLink[]; newUrl?: string },
) {
  return html`<h2 id="setup-links">Setup links</h2>
<p class="muted">A link for the customer's IT admin: they verify domains, connect their identity provider (off until
its test passes and it is turned on here or by an owner) and make SCIM tokens (no owner or admin role), without an account.</p>
${newLinkBox(input.newUrl)}
${
  input.links.length === 0
    ? html`<p class="muted">No setup link.</p>`
    : html`<table class="cards"><thead><tr><th>Link</th><th>State</th><th>Progress</th><th></th></tr></thead><tbody>${input.links.map(
        (link) =>
          html`<tr><td data-label="Link"><code>${link.id.slice(0, 8)}</code> ${link.intents.join(", ")}<br><span class="muted">made ${when(link.createdAt)}, ${link.createdBy ? "by an owner" : "by the operator"}</span></td><td data-label="State">${
            link.status === "open"
              ? html`<span class="badge on">open</span> until ${when(link.expiresAt)}`
              : html`<span class="badge off">${link.status}</span>`
          }<br><span class="muted">last used ${when(link.lastUsedAt)}</span></td><td data-label="Progress">${progress(chrome, orgPathname, link)}</td><td>${
            link.status === "open"
              ? action(
                  chrome,
                  `${orgPathname}/setup-links/${encodeURIComponent(link.id)}/revoke`,
                  "Revoke",
                  "danger",
                )
              : ""
          }</td></tr>`,
      )}</tbody></table>`
}
<form method="post" action="${chrome.base}${orgPathname}/setup-links/create" class="filters" aria-label="Make a setup link">
  <input type="hidden" name="csrf" value="${chrome.csrf}">
  <fieldset><legend>What it may set up</legend>
    <label><input type="checkbox" name="domains" value="yes" checked> Domains</label>
    <label><input type="checkbox" name="sso" value="yes" checked> SSO</label>
    <label><input type="checkbox" name="scim" value="yes" checked> SCIM</label>
  </fieldset>
  <label>Days valid <input name="days" type="number" min="1" max="30" value="7"></label>
  <button type="submit">Make a setup link</button>
</form>`;
}
