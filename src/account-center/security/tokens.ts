import { html } from "hono/html";
import type { PersonalAccessTokenFacts } from "../../auth";
import { accountPath, type Ctx, type Signed } from "../forms";
import { errorBox } from "../html";
import { confirmLink } from "./steps";
import { formatDate } from "./words";

/** Personal access tokens: the section, the creation form and the token shown once, as HTML. */

export const TOKENS = "tokens";

/** How long a new token lasts, in days: the form's choices (the API takes any future date). */
export const LIFETIMES = [30, 90, 365] as const;
export const DEFAULT_LIFETIME = 90;
export const NAME_MAX = 60;

/** The name the page gave a token (`metadata.name`, as Nhost's dashboard does); other tokens have none. */
export const tokenName = (token: PersonalAccessTokenFacts) =>
  typeof token.metadata.name === "string" ? token.metadata.name : "";

/**
 * The section: the tokens' metadata (never a token: only its hash is stored), revoking one (which only takes access
 * away, so it asks no confirmation), and creating one (an elevated operation of the API: confirmed first).
 */
export function tokensSection(c: Ctx, signed: Signed, tokens: PersonalAccessTokenFacts[], recent: boolean) {
  const w = signed.catalogue.accountSecurity.tokens;
  const lang = signed.catalogue.pages.lang;
  const now = c.var.deps.now();
  const nameOf = (token: PersonalAccessTokenFacts) => tokenName(token) || w.unnamed;
  const list = tokens.length
    ? html`<table class="list">
<thead><tr><th scope="col">${w.name}</th><th scope="col">${w.created}</th><th scope="col">${w.expires}</th><th scope="col"><span class="security-sr">${w.revoke}</span></th></tr></thead>
<tbody>${tokens.map(
        (token) => html`<tr>
  <td data-label="${w.name}" class="security-item-name">${nameOf(token)}</td>
  <td data-label="${w.created}">${formatDate(lang, token.createdAt)}</td>
  <td data-label="${w.expires}">${token.expiresAt <= now ? w.expired : formatDate(lang, token.expiresAt)}</td>
  <td class="row-action"><form class="inline" method="post" action="${accountPath(c, "/security/tokens/revoke")}">
    <input type="hidden" name="id" value="${token.id}">
    <button type="submit" aria-label="${w.revokeLabel(nameOf(token))}">${w.revoke}</button>
  </form></td>
</tr>`,
      )}</tbody>
</table>`
    : html`<p class="muted">${w.none}</p>`;
  return html`<section id="${TOKENS}" class="card">
<h2>${w.title}</h2>
<p class="lead">${w.lead}</p>
${list}
${recent ? createForm(c, signed) : confirmLink(c, signed, TOKENS, { elevated: true })}
</section>`;
}

/** The creation form: a name and a lifetime (on the page, and again on a step after a refusal). */
export function createForm(c: Ctx, signed: Signed, error?: string, name = "") {
  const w = signed.catalogue.accountSecurity.tokens;
  return html`<form class="security-form" method="post" action="${accountPath(c, "/security/tokens/create")}">
  ${errorBox(error)}
  <div class="row">
    <div>
      <label for="token-name">${w.nameLabel}</label>
      <input id="token-name" name="name" type="text" required maxlength="${NAME_MAX}" placeholder="${w.namePlaceholder}" autocomplete="off" value="${name}">
    </div>
    <div>
      <label for="token-lifetime">${w.lifetime}</label>
      <select id="token-lifetime" name="days">
        ${LIFETIMES.map(
          (days) =>
            html`<option value="${days}"${days === DEFAULT_LIFETIME ? " selected" : ""}>${days === 365 ? w.oneYear : w.days(String(days))}</option>`,
        )}
      </select>
    </div>
    <button class="primary" type="submit">${w.create}</button>
  </div>
</form>`;
}

/** The new token, this once: a read-only field to copy from (a text area, so it wraps at 390 px), and the way back. */
export function createdBody(c: Ctx, signed: Signed, token: string) {
  const w = signed.catalogue.accountSecurity.tokens;
  return html`<h1>${w.shownTitle}</h1>
<p class="lead">${w.shownLead}</p>
<label for="token-value">${w.tokenLabel}</label>
<textarea id="token-value" class="token-value" rows="2" readonly spellcheck="false" autocomplete="off">${token}</textarea>
<div class="actions"><a href="${accountPath(c)}#${TOKENS}">${w.done}</a></div>`;
}
