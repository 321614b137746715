import { html } from "hono/html";
import { accountPath, type Ctx, type Signed } from "../forms";
import { errorBox } from "../html";
import { qrSvg } from "./qr-svg";
import { confirmLink } from "./steps";
import { formatDate } from "./words";

/** Two-step verification (TOTP) and its recovery codes: the section and its steps, as HTML. */

export const TWO_STEP = "two-step";

/**
 * The section: on or off, and what can be done. Every change asks a recent confirmation first (recent-auth.ts); until
 * then the forms are a link to it. Turning TOTP off or making new codes also asks a current code, as the API does
 * (`POST /user/mfa`, `POST /mfa/recovery-codes`): a confirmation by password alone does not remove a second factor.
 */
export function twoStepSection(c: Ctx, signed: Signed, recent: boolean) {
  const { session, catalogue } = signed;
  const w = catalogue.accountSecurity.twoStep;
  const user = session.user;
  const on = user.activeMfaType === "totp";
  const offered = c.var.config.mfa.enabled;
  const state = on
    ? w.on(formatDate(catalogue.pages.lang, user.totpEnabledAt ?? user.updatedAt))
    : offered
      ? w.off
      : w.unavailable;
  const actions =
    !on && !offered
      ? ""
      : !recent
        ? confirmLink(c, signed, TWO_STEP)
        : on
          ? onForms(c, signed)
          : offForm(c, signed);
  return html`<section id="${TWO_STEP}" class="card">
<h2>${w.title}</h2>
<p class="lead">${w.lead}</p>
<p class="security-state"><strong>${state}</strong></p>
${actions}
</section>`;
}

const offForm = (
  c: Ctx,
  signed: Signed,
) => html`<form class="security-form" method="post" action="${accountPath(c, "/security/totp/start")}">
  <button class="primary" type="submit">${signed.catalogue.accountSecurity.twoStep.setUp}</button>
</form>`;

const onForms = (c: Ctx, signed: Signed) => {
  const w = signed.catalogue.accountSecurity.twoStep;
  return html`${codeForm(c, { action: "/security/totp/disable", id: "totp-off-code", lead: w.turnOffLead, label: w.codeOrRecovery, button: w.turnOff })}
${codeForm(c, { action: "/security/recovery-codes", id: "totp-codes-code", lead: w.newCodesLead, label: w.code, button: w.newCodes })}`;
};

/** A form that asks one code (and says why), on the page or again on a step with the reason it was refused. */
export function codeForm(
  c: Ctx,
  input: { action: string; id: string; lead: string; label: string; button: string; error?: string },
) {
  return html`<form class="security-form" method="post" action="${accountPath(c, input.action)}">
  <p class="hint">${input.lead}</p>
  ${errorBox(input.error)}
  <label for="${input.id}">${input.label}</label>
  <div class="row">
    <input id="${input.id}" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required maxlength="40">
    <button type="submit">${input.button}</button>
  </div>
</form>`;
}

/** The setup step: the QR code, the key to type in, a link for an app on this very device, and the code. */
export function setupBody(c: Ctx, signed: Signed, setup: { uri: string; totpSecret: string }) {
  const w = signed.catalogue.accountSecurity.twoStep;
  // Groups of four, as authenticator apps show keys; the apps ignore the spaces.
  const key = setup.totpSecret.replace(/(.{4})(?=.)/g, "$1 ");
  return html`<h1>${w.setUpTitle}</h1>
<p class="lead">${w.scan}</p>
${qrSvg(setup.uri, w.qrLabel)}
<p>${w.manual}</p>
<p class="secret">${key}</p>
<p><a href="${setup.uri}">${w.openInApp}</a></p>
${confirmForm(c, signed)}`;
}

/** The code that turns TOTP on (again after a wrong one, without a new secret: the app already holds this one). */
export function confirmForm(c: Ctx, signed: Signed, error?: string) {
  const w = signed.catalogue.accountSecurity.twoStep;
  return html`<form class="security-form" method="post" action="${accountPath(c, "/security/totp/confirm")}">
  ${errorBox(error)}
  <label for="totp-code">${w.code}</label>
  <input id="totp-code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required maxlength="40">
  <div class="actions">
    <a href="${accountPath(c)}#${TWO_STEP}">${signed.catalogue.accountSecurity.cancel}</a>
    <button class="primary" type="submit">${w.turnOn}</button>
  </div>
</form>`;
}

/** Recovery codes, shown this once (stored hashed), with the way back. */
export function codesBody(c: Ctx, signed: Signed, codes: string[], notice?: string) {
  const w = signed.catalogue.accountSecurity.twoStep;
  const back = `${accountPath(c)}${notice ? `?notice=${notice}` : ""}#${TWO_STEP}`;
  return html`<h1>${w.codesTitle}</h1>
<p class="lead">${w.codesLead}</p>
<ul class="recovery-codes">${codes.map((code) => html`<li>${code}</li>`)}</ul>
<div class="actions"><a href="${back}">${w.codesSaved}</a></div>`;
}
