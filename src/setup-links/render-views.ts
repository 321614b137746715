import type { Context } from "hono";
import { html } from "hono/html";
import type { SetupLinkRow, SsoConnectionRow } from "../db/schema";
import type { AppEnv } from "../http/app-env";
import { backLink, copyValue, dateOf, linkHeader, notice, setupPath, type Words } from "./render";

/** The overview, domains and SCIM views of the setup link's pages. Every value is escaped by `html`. */

interface TokenShown {
  id: string;
  createdAt: string;
  lastUsedAt: string | null;
}

export function overviewView(
  c: Context<AppEnv>,
  view: {
    words: Words;
    lang: string;
    link: SetupLinkRow;
    orgName: string;
    connections: SsoConnectionRow[];
    tokens: TokenShown[];
  },
) {
  const { words, link } = view;
  const state = (done: boolean) => (done ? words.done : words.todo);
  const steps = [
    link.intents.includes("domains")
      ? html`<li><a href="${setupPath(c, "/domains")}">${words.stepDomains}</a> — <span class="status">${state(link.domains.length > 0)}</span></li>`
      : "",
    link.intents.includes("sso")
      ? html`<li><a href="${setupPath(c, "/sso")}">${words.stepSso}</a> — <span class="status">${state(view.connections.some((row) => row.testedAt !== null))}</span></li>`
      : "",
    link.intents.includes("scim")
      ? html`<li><a href="${setupPath(c, "/scim")}">${words.stepScim}</a> — <span class="status">${state(view.tokens.some((token) => token.lastUsedAt !== null))}</span></li>`
      : "",
  ];
  return html`${linkHeader(words, view.orgName, link, view.lang)}
<h2>${words.steps}</h2>
<ol class="steps">${steps}</ol>`;
}

export interface DomainShown {
  domain: string;
  verified: boolean;
  txtName: string;
  txtValue: string;
}

/** What the last post on the domains page came to, said in words (`result` and `domain` from its redirect). */
function domainOutcome(words: Words, result: string | undefined, domain = "") {
  switch (result) {
    case undefined:
      return "";
    case "claimed":
      return "";
    case "verified":
      return notice("ok", words.domainChecked(domain));
    case "verified-before":
    case "domain-already-verified":
      return notice("error", words.domainVerifiedBefore(domain));
    case "domain-verification-failed":
      return notice("error", words.domainNotFound(domain));
    case "dns-unavailable":
      return notice("error", words.dnsUnavailable);
    default:
      return notice("error", words.domainRefused(domain));
  }
}

export function domainsView(
  c: Context<AppEnv>,
  view: { words: Words; lang: string; domains: DomainShown[]; result?: string; domain?: string },
) {
  const { words } = view;
  const items = view.domains.map(
    (
      row,
    ) => html`<li><strong>${row.domain}</strong> — <span class="status">${row.verified ? words.verified : words.notVerified}</span>
${
  row.verified
    ? ""
    : html`<dl class="values">${copyValue(words.txtName, row.txtName)}${copyValue(words.txtValue, row.txtValue)}</dl>
<form method="post" action="${setupPath(c, "/domains/check")}"><input type="hidden" name="domain" value="${row.domain}"><button type="submit">${words.checkDomain}</button></form>`
}</li>`,
  );
  return html`<h1>${words.stepDomains}</h1>
<p class="lead">${words.domainsLead}</p>
${domainOutcome(words, view.result, view.domain)}
<ul class="items">${items}</ul>
<form method="post" action="${setupPath(c, "/domains")}">
  <label for="domain">${words.domainLabel}</label>
  <div class="row"><input type="text" id="domain" name="domain" required maxlength="253" autocomplete="off" placeholder="example.com"><button class="primary" type="submit">${words.addDomain}</button></div>
</form>
${backLink(c, words)}`;
}

export function scimView(
  c: Context<AppEnv>,
  view: { words: Words; lang: string; baseUrl: string; token?: string; tokens: TokenShown[]; error?: string },
) {
  const { words, lang } = view;
  const items = view.tokens.map(
    (token) =>
      html`<li>${words.made(dateOf(Date.parse(token.createdAt), lang))} — <span class="status">${
        token.lastUsedAt ? words.lastUsed(dateOf(Date.parse(token.lastUsedAt), lang)) : words.neverUsed
      }</span></li>`,
  );
  return html`<h1>${words.stepScim}</h1>
<p class="lead">${words.scimLead}</p>
${notice("error", view.error)}
<dl class="values">${copyValue(words.scimBaseUrl, view.baseUrl)}${view.token ? copyValue(words.scimToken, view.token) : ""}</dl>
${view.token ? html`<div class="warning">${words.scimTokenOnce}</div>` : ""}
<h2>${words.tokens}</h2>
${view.tokens.length ? html`<ul class="items">${items}</ul>` : html`<p>${words.noTokens}</p>`}
<div class="actions">
  <a href="${setupPath(c, "/scim")}">${words.checkAgain}</a>
  <form method="post" action="${setupPath(c, "/scim")}"><button class="primary" type="submit">${words.makeToken}</button></form>
</div>
${backLink(c, words)}`;
}
