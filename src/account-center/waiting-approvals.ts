import { html } from "hono/html";
import { CIBA_PAGE_PATH, waitingApprovals } from "../oauth2";
import { apiPath, type Ctx, type SectionView } from "./forms";
import { timeOf } from "./html";

/**
 * "Waiting for you" (contract operators.md §2): the OpenID CIBA requests that wait for this user's decision, each
 * with the client that asks, its binding message (quoted) and when it expires, and a link to its approval page (the
 * one the mail carries), where the user approves or denies it. Listed only while the authorization server is on.
 */

export const WAITING = "waiting";

export const showsWaiting = (c: Ctx) => c.var.config.oauth2.enabled;

export async function waitingSection(c: Ctx, view: SectionView) {
  const words = view.catalogue.ciba.account;
  const language = view.catalogue.pages.lang;
  const waiting = await waitingApprovals(c.var.deps, view.session.user.id);
  const link = (handle: string) => `${apiPath(c)}${CIBA_PAGE_PATH}?request=${handle}`;
  return html`<section id="${WAITING}" class="card">
<h2>${words.title}</h2>
<p class="lead">${words.lead}</p>
${
  waiting.length === 0
    ? html`<p class="muted">${words.none}</p>`
    : html`<table class="list">
  <thead><tr><th scope="col">${words.client}</th><th scope="col">${words.message}</th><th scope="col">${words.expires}</th><th scope="col"><span class="muted">${words.review}</span></th></tr></thead>
  <tbody>${waiting.map(
    (item) => html`<tr>
  <td data-label="${words.client}"><span>${item.clientName}</span></td>
  <td data-label="${words.message}"><span>${item.bindingMessage ? `“${item.bindingMessage}”` : ""}</span></td>
  <td data-label="${words.expires}"><span>${timeOf(item.expiresAt, language)}</span></td>
  <td class="row-action"><a href="${link(item.handle)}">${words.review}</a></td>
</tr>`,
  )}</tbody>
</table>`
}
</section>`;
}
