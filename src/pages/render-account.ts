import { html } from "hono/html";
import type { PageText } from "../browser/page-text";
import { errorBox, hidden, type WidgetSlot, widget } from "../browser/render";
import type { Passkeys } from "../browser/text/en/passkeys";
import { passkeyParts, usernameAutocomplete } from "./render-passkeys";

/** Where security keys are on: the passkey words and where an autofill sign-in's session is posted. */
type PasskeyOffer = { words: Passkeys; sessionAction: string };

/** The page's account forms: create an account, ask for a reset link, choose the new password. */

export function signUpForm(input: {
  t: PageText;
  action: string;
  requestId: string;
  clientName: string;
  /** Said instead of "to continue to <client>" (an app's request, the hosted pages). */
  intro?: string[];
  minLength: number;
  email?: string;
  displayName?: string;
  error?: string;
  signInHref: string;
  widget?: WidgetSlot;
  passkeys?: PasskeyOffer;
}) {
  const { t, passkeys } = input;
  return html`<h1>${t.signUpTitle}</h1>
${
  input.intro
    ? input.intro.map((sentence) => html`<p class="lead">${sentence}</p>`)
    : html`<p class="lead">${t.toContinueTo} <strong>${input.clientName}</strong></p>`
}
${errorBox(input.error)}
<form method="post" action="${input.action}">
  ${hidden(input.requestId)}
  <label for="email">${t.email}</label>
  <input id="email" name="email" type="email" autocomplete="${usernameAutocomplete(Boolean(passkeys))}" required value="${input.email ?? ""}">
  <label for="display-name">${t.displayName}</label>
  <input id="display-name" name="displayName" type="text" autocomplete="name" maxlength="100" value="${input.displayName ?? ""}">
  <label for="new-password">${t.password}</label>
  <input id="new-password" name="password" type="password" autocomplete="new-password" required minlength="${input.minLength}" aria-describedby="password-hint">
  <p id="password-hint" class="hint">${t.newPasswordHint(input.minLength)}</p>
  ${widget(input.widget, t.lang)}
  <div class="actions"><button class="primary" type="submit">${t.signUp}</button></div>
</form>
${passkeys ? passkeyParts({ t, words: passkeys.words, sessionAction: passkeys.sessionAction, requestId: input.requestId, signUp: true }) : ""}
<div class="links"><span>${t.haveAccount} <a href="${input.signInHref}">${t.signIn}</a></span></div>`;
}

export function resetForm(input: {
  t: PageText;
  action: string;
  requestId: string;
  email?: string;
  error?: string;
  signInHref: string;
  widget?: WidgetSlot;
  passkeys?: PasskeyOffer;
}) {
  const { t, passkeys } = input;
  return html`<h1>${t.resetTitle}</h1>
<p class="lead">${t.resetLead}</p>
${errorBox(input.error)}
<form method="post" action="${input.action}">
  ${hidden(input.requestId)}
  <label for="email">${t.email}</label>
  <input id="email" name="email" type="email" autocomplete="${usernameAutocomplete(Boolean(passkeys))}" required value="${input.email ?? ""}">
  ${widget(input.widget, t.lang)}
  <div class="actions"><button class="primary" type="submit">${t.sendResetLink}</button></div>
</form>
${passkeys ? passkeyParts({ t, words: passkeys.words, sessionAction: passkeys.sessionAction, requestId: input.requestId, signUp: false }) : ""}
<div class="links"><a href="${input.signInHref}">${t.backToSignIn}</a></div>`;
}

export function newPasswordForm(input: {
  t: PageText;
  action: string;
  requestId: string;
  minLength: number;
  error?: string;
}) {
  const { t } = input;
  return html`<h1>${t.newPasswordTitle}</h1>
<p class="lead">${t.newPasswordLead}</p>
${errorBox(input.error)}
<form method="post" action="${input.action}">
  ${hidden(input.requestId)}
  <label for="new-password">${t.newPassword}</label>
  <input id="new-password" name="password" type="password" autocomplete="new-password" required minlength="${input.minLength}" aria-describedby="password-hint">
  <p id="password-hint" class="hint">${t.newPasswordHint(input.minLength)}</p>
  <div class="actions"><button class="primary" type="submit">${t.savePassword}</button></div>
</form>`;
}
