import { html } from "hono/html";
import { providerName } from "../../pages";
import type { ConnectionView } from "../../vault";
import type { Ctx, Signed } from "../forms";
import { formatDate } from "./words";

/**
 * Connected accounts (the token vault, contract operators.md §3): each provider account the person connected and the
 * apps they let use it, with each app's last use, so that they can see who took their tokens and when. Never a token.
 * Shown only when the vault is on. Connecting and removing are the app's (the API's `/user/connections`).
 */

export const CONNECTIONS = "connections";

export function connectionsSection(_c: Ctx, signed: Signed, connections: ConnectionView[]) {
  const w = signed.catalogue.vault;
  const lang = signed.catalogue.pages.lang;
  const date = (iso: string) => formatDate(lang, Date.parse(iso));
  const list = connections.length
    ? html`<table class="list">
<thead><tr><th scope="col">${w.account}</th><th scope="col">${w.apps}</th></tr></thead>
<tbody>${connections.map(
        (connection) => html`<tr>
  <td data-label="${w.account}" class="security-item-name">${providerName(connection.provider)}${connection.email ? html`<br><span class="muted">${connection.email}</span>` : ""}</td>
  <td data-label="${w.apps}">${
    connection.clients.length
      ? html`<ul class="vault-apps">${connection.clients.map(
          (client) =>
            html`<li>${client.clientName} <span class="muted">(${client.lastUsedAt ? w.lastUsed(date(client.lastUsedAt), client.uses) : w.never})</span></li>`,
        )}</ul>`
      : html`<span class="muted">${w.noApps}</span>`
  }</td>
</tr>`,
      )}</tbody>
</table>`
    : html`<p class="muted">${w.none}</p>`;
  return html`<section id="${CONNECTIONS}" class="card">
<h2>${w.title}</h2>
<p class="lead">${w.lead}</p>
${list}
</section>`;
}
