import type { Context } from "hono";
import { html } from "hono/html";
import type { SsoConnectionRow } from "../db/schema";
import type { AppEnv } from "../http/app-env";
import { acsUrl, oidcCallbackUrl, spEntityId } from "../sso";
import { GUIDES, type Guide, type OurValue } from "./guides";
import { backLink, copyValue, dateOf, notice, setupPath, type Words } from "./render";

/** The SSO step's views: the choice of IdP, a guide with its exact values, a connection with its test. */

const EMAIL_NAME_ID = "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress";

/** Our values for a connection's IdP, by what the IdP's fields take (./guides.ts). */
export function ourValues(c: Context<AppEnv>, connectionId: string): Record<OurValue, string> {
  const config = c.var.config;
  return {
    acsUrl: acsUrl(config, connectionId),
    entityId: spEntityId(config, connectionId),
    metadataUrl: spEntityId(config, connectionId),
    nameIdFormat: EMAIL_NAME_ID,
    redirectUri: oidcCallbackUrl(c.var.deps, connectionId),
    signInUrl: config.urls.client,
  };
}

const valuesList = (c: Context<AppEnv>, guide: Guide, connectionId: string) => {
  const values = ourValues(c, connectionId);
  return html`<dl class="values">${guide.fields.map(([label, value]) => copyValue(label, values[value]))}</dl>`;
};

function connectionItem(c: Context<AppEnv>, words: Words, row: SsoConnectionRow) {
  return html`<li><a href="${setupPath(c, `/sso/${row.id}`)}">${words.connectionTitle(row.type.toUpperCase())}</a> — <span class="status">${
    row.enabled ? words.active : words.inactive
  }</span></li>`;
}

export function chooseView(
  c: Context<AppEnv>,
  view: { words: Words; connections: SsoConnectionRow[]; noDomains: boolean },
) {
  const { words } = view;
  return html`<h1>${words.stepSso}</h1>
<p class="lead">${words.ssoLead}</p>
${view.noDomains ? html`<div class="warning">${words.noDomainsYet}</div>` : ""}
<form method="get" action="${setupPath(c, "/sso/new")}">
  <label for="idp">${words.chooseIdp}</label>
  <div class="row"><select id="idp" name="idp">${GUIDES.map((guide) => html`<option value="${guide.id}">${guide.name}</option>`)}</select>
  <button class="primary" type="submit">${words.start}</button></div>
</form>
<h2>${words.connections}</h2>
${view.connections.length ? html`<ul class="items">${view.connections.map((row) => connectionItem(c, words, row))}</ul>` : html`<p>${words.noConnections}</p>`}
${backLink(c, words)}`;
}

const field = (id: string, label: string, input: ReturnType<typeof html>) =>
  html`<label for="${id}">${label}</label>${input}`;

function giveBackFields(words: Words, guide: Guide, kept: Record<string, string>) {
  const inputs = {
    metadataUrl: html`<input type="url" id="metadataUrl" name="metadataUrl" maxlength="2048" value="${kept.metadataUrl ?? ""}">`,
    metadataXml: html`<textarea id="metadataXml" name="metadataXml" maxlength="60000">${kept.metadataXml ?? ""}</textarea>`,
    issuer: html`<input type="url" id="issuer" name="issuer" maxlength="2048" required value="${kept.issuer ?? ""}">`,
    clientId: html`<input type="text" id="clientId" name="clientId" maxlength="512" required autocomplete="off" value="${kept.clientId ?? ""}">`,
    clientSecret: html`<input type="password" id="clientSecret" name="clientSecret" maxlength="2048" required autocomplete="off">`,
  };
  const labels = {
    metadataUrl: words.metadataUrl,
    metadataXml: words.metadataXml,
    issuer: words.issuer,
    clientId: words.clientId,
    clientSecret: words.clientSecret,
  };
  // A SAML guide that names only one way back still offers the other (an IdP may give either).
  const wanted =
    guide.type === "saml"
      ? (["metadataUrl", "metadataXml"] as const)
      : (["issuer", "clientId", "clientSecret"] as const);
  return wanted.map((name) => field(name, `${labels[name]}${giveBackName(guide, name)}`, inputs[name]));
}

const giveBackName = (guide: Guide, name: string) => {
  // A generic guide's names are ours: said once.
  if (guide.id === "saml" || guide.id === "oidc") return "";
  const theirs = guide.giveBack.find(([, ours]) => ours === name)?.[0];
  return theirs ? ` (${theirs})` : "";
};

export function guideView(
  c: Context<AppEnv>,
  view: { words: Words; guide: Guide; connectionId: string; error?: string; kept?: Record<string, string> },
) {
  const { words, guide } = view;
  return html`<h1>${words.guideTitle(guide.name)}</h1>
${notice("error", view.error)}
<h2>${words.inYourIdp(guide.name)}</h2>
<p><code>${guide.where}</code></p>
<p>${words.pasteThese}</p>
${valuesList(c, guide, view.connectionId)}
<p>${words.giveBack}</p>
<form method="post" action="${setupPath(c, "/sso")}">
  <input type="hidden" name="idp" value="${guide.id}">
  <input type="hidden" name="connectionId" value="${view.connectionId}">
  ${giveBackFields(words, guide, view.kept ?? {})}
  <div class="actions"><button class="primary" type="submit">${words.create}</button></div>
</form>
${backLink(c, words)}`;
}

function lastTest(words: Words, lang: string, row: SsoConnectionRow) {
  const test = row.lastTest as { at?: number; ok?: boolean; email?: string; error?: string } | null;
  if (!test) return html`<p class="status">${words.testNone}</p>`;
  const when = ` (${dateOf(Number(test.at), lang)})`;
  if (test.ok) return notice("ok", `${words.testOk(test.email ?? "")}${when}`);
  const why = words.testWhy[test.error as keyof Words["testWhy"]] ?? words.testWhy.other;
  return notice("error", `${words.testFailed(why)}${when}`);
}

export function connectionView(
  c: Context<AppEnv>,
  view: { words: Words; lang: string; row: SsoConnectionRow; guide: Guide },
) {
  const { words, row } = view;
  return html`<h1>${words.connectionTitle(row.type.toUpperCase())}</h1>
<p class="status">${row.enabled ? words.active : words.inactive}</p>
<h2>${words.valuesToPaste}</h2>
${valuesList(c, view.guide, row.id)}
<h2>${words.test}</h2>
<p>${words.testLead}</p>
${lastTest(words, view.lang, row)}
<div class="actions"><a class="primary" href="${setupPath(c, `/sso/${row.id}/test`)}">${words.test}</a></div>
${backLink(c, words)}`;
}
