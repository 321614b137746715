import { html } from "hono/html";
import type { Lockout } from "../../browser/text/en/lockout";

/**
 * The page the mailed unlock link lands on (unlock-routes.ts), in the house of the sign-in page: a question first and a
 * button, so that a mail scanner fetching the link spends nothing; then what happened. Every value is escaped by `html`.
 */

export function unlockQuestion(words: Lockout["page"], action: string, ticket: string) {
  return html`<h1>${words.title}</h1>
<p class="lead">${words.lead}</p>
<form method="post" action="${action}">
  <input type="hidden" name="ticket" value="${ticket}">
  <div class="actions"><button class="primary" type="submit">${words.unlock}</button></div>
</form>`;
}

export function unlocked(words: Lockout["page"], appUrl: string) {
  return html`<h1>${words.doneTitle}</h1>
<p class="lead">${words.doneLead}</p>
<div class="actions"><a href="${appUrl}">${words.toApp}</a></div>`;
}

/** A link that does nothing (used, too old, malformed, posted from elsewhere, or the service failing for now). */
export function notUnlocked(title: string, message: string) {
  return html`<h1>${title}</h1>
<p class="lead" role="alert">${message}</p>`;
}
