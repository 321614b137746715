import type { PublicKeyCredentialCreationOptionsJSON } from "@simplewebauthn/server";
import { html } from "hono/html";
import type { BackupState, SecurityKeyWithBackup } from "../../auth";
import type { AccountSecurity } from "../../browser/text/en/account-security";
import { accountPath, type Ctx, type Signed } from "../forms";
import { errorBox } from "../html";
import { confirmLink } from "./steps";
import { formatDate } from "./words";

/** Passkeys (the user's security keys): the section and the step that creates one, as HTML. */

export const PASSKEYS = "passkeys";

/** A key's backup state in the reader's words (a key from before the flags were kept: unknown until its next use). */
const backupWords = (w: AccountSecurity["passkeys"], state: BackupState) =>
  ({ synced: w.synced, "not-synced": w.notSynced, "device-bound": w.deviceOnly, unknown: w.backupUnknown })[
    state
  ];

/**
 * The section: the keys (name, when added, whether synced to the person's other devices; never the key itself), a
 * way to add one while WebAuthn is on, and removal. Adding a second key and removing one are what the API marks
 * elevated (contract §6); until the person has confirmed (with a passkey, where the elevated claim applies) the forms
 * are a link to that.
 */
export function passkeysSection(c: Ctx, signed: Signed, keys: SecurityKeyWithBackup[], recent: boolean) {
  const w = signed.catalogue.accountSecurity.passkeys;
  const lang = signed.catalogue.pages.lang;
  const offered = c.var.config.webauthn.enabled;
  const nameOf = (key: SecurityKeyWithBackup) => key.nickname || w.unnamed;
  const list = keys.length
    ? html`<table class="list">
<thead><tr><th scope="col">${w.name}</th><th scope="col">${w.added}</th><th scope="col">${w.backup}</th>${recent ? html`<th scope="col"><span class="security-sr">${w.remove}</span></th>` : ""}</tr></thead>
<tbody>${keys.map(
        (key) => html`<tr>
  <td data-label="${w.name}" class="security-item-name">${nameOf(key)}</td>
  <td data-label="${w.added}">${formatDate(lang, Date.parse(key.createdAt))}</td>
  <td data-label="${w.backup}" data-backup="${key.backup}">${backupWords(w, key.backup)}</td>
  ${
    recent
      ? html`<td class="row-action"><form class="inline" method="post" action="${accountPath(c, "/security/passkeys/remove")}">
    <input type="hidden" name="id" value="${key.id}">
    <button type="submit" aria-label="${w.removeLabel(nameOf(key))}">${w.remove}</button>
  </form></td>`
      : ""
  }
</tr>`,
      )}</tbody>
</table>`
    : html`<p class="muted">${offered ? w.none : w.unavailable}</p>`;
  const add = offered
    ? html`<form class="security-form" method="post" action="${accountPath(c, "/security/passkeys/add")}">
  <button class="primary" type="submit">${w.add}</button>
</form>`
    : "";
  const actions =
    !offered && !keys.length
      ? ""
      : recent
        ? add
        : confirmLink(c, signed, PASSKEYS, { elevated: keys.length > 0 });
  return html`<section id="${PASSKEYS}" class="card">
<h2>${w.title}</h2>
<p class="lead">${w.lead}</p>
${list}
${actions}
</section>`;
}

/**
 * The step that creates a passkey: the name, and a button the script (passkey-script.ts) turns into the browser's
 * ceremony with these options; without WebAuthn in the browser the page says so and the button stays hidden.
 */
export function addBody(
  c: Ctx,
  signed: Signed,
  options: PublicKeyCredentialCreationOptionsJSON,
  error?: string,
) {
  const w = signed.catalogue.accountSecurity.passkeys;
  return html`<h1>${w.addTitle}</h1>
<p class="lead">${w.addLead}</p>
${errorBox(error)}
<form id="passkey-create-form" method="post" action="${accountPath(c, "/security/passkeys/verify")}">
  <label for="passkey-nickname">${w.nickname}</label>
  <input id="passkey-nickname" name="nickname" type="text" maxlength="60" placeholder="${w.nicknamePlaceholder}" autocomplete="off">
  <input type="hidden" name="credential" value="">
  <div class="actions">
    <a href="${accountPath(c)}#${PASSKEYS}">${signed.catalogue.accountSecurity.cancel}</a>
    <button id="passkey-create" class="primary" type="button" data-options="${JSON.stringify(options)}" hidden>${w.create}</button>
  </div>
</form>
<p id="passkey-unsupported" class="error">${w.unsupported}</p>
<p id="passkey-create-problem" class="error" role="alert" hidden>${w.problem}</p>`;
}
