import { html } from "hono/html";
import { providerName } from "../../pages";
import type { LinkedIdentity } from "../../providers";
import { accountPath, type Ctx, type Signed } from "../forms";
import { confirmLink } from "./steps";
import { formatDate } from "./words";

/** Linked providers (`user_providers`): the section, as HTML. */

export const PROVIDERS = "providers";

/**
 * The section: the identities linked to the account, unlinking one (refused when it is the last way to sign in:
 * src/providers/accounts.ts `unlinkIdentity`), and linking another through the provider's own sign-in (the API's
 * `connect` flow, for the signed-in user of this browser). Both change how the account can be entered: confirmed
 * first.
 */
export function providersSection(c: Ctx, signed: Signed, identities: LinkedIdentity[], recent: boolean) {
  const w = signed.catalogue.accountSecurity.providers;
  const lang = signed.catalogue.pages.lang;
  const linkable = Object.keys(c.var.config.providers.enabled);
  const list = identities.length
    ? html`<table class="list">
<thead><tr><th scope="col">${w.title}</th><th scope="col">${w.linked}</th>${recent ? html`<th scope="col"><span class="security-sr">${w.unlink}</span></th>` : ""}</tr></thead>
<tbody>${identities.map(
        (identity) => html`<tr>
  <td data-label="${w.title}" class="security-item-name">${providerName(identity.provider, c.var.config.providers.enabled)}</td>
  <td data-label="${w.linked}">${formatDate(lang, identity.createdAt)}</td>
  ${
    recent
      ? html`<td class="row-action"><form class="inline" method="post" action="${accountPath(c, "/security/providers/unlink")}">
    <input type="hidden" name="id" value="${identity.id}">
    <button type="submit" aria-label="${w.unlinkLabel(providerName(identity.provider, c.var.config.providers.enabled))}">${w.unlink}</button>
  </form></td>`
      : ""
  }
</tr>`,
      )}</tbody>
</table>`
    : html`<p class="muted">${w.none}</p>`;
  const link = linkable.length
    ? html`<form class="provider-links" method="post" action="${accountPath(c, "/security/providers/link")}" aria-label="${w.link}">
  ${linkable.map((id) => html`<button type="submit" name="provider" value="${id}">${w.linkWith(providerName(id, c.var.config.providers.enabled))}</button>`)}
</form>`
    : "";
  const actions =
    !identities.length && !linkable.length ? "" : recent ? link : confirmLink(c, signed, PROVIDERS);
  return html`<section id="${PROVIDERS}" class="card">
<h2>${w.title}</h2>
<p class="lead">${w.lead}</p>
${list}
${actions}
</section>`;
}
