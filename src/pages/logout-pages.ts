import { html } from "hono/html";
import type { PageText } from "../browser/page-text";
import { errorBox } from "../browser/render";

/**
 * The pages of RP-initiated logout (logout-routes.ts): the question ("Sign out of …?"), the answer when the link
 * does not hold, and "you are signed out". Plain forms, no script; every value is escaped by `html`.
 */

/** What the confirmation form carries back, checked again when it comes (logout-routes.ts). */
export type CarriedFields = Record<string, string | undefined>;

const carried = (fields: CarriedFields) =>
  Object.entries(fields).map(([name, value]) =>
    value === undefined ? "" : html`<input type="hidden" name="${name}" value="${value}">`,
  );

function signOutForm(t: PageText, action: string, fields: CarriedFields) {
  return html`<form method="post" action="${action}">
  ${carried(fields)}
  <div class="actions"><button id="logout-confirm" class="primary" type="submit">${t.signOut}</button></div>
</form>`;
}

export function confirmSignOut(input: {
  t: PageText;
  service: string;
  /** The client that asks, when the request names one (a verified hint's audience, or `client_id`). */
  clientName?: string;
  userLabel: string;
  action: string;
  fields: CarriedFields;
}) {
  const { t } = input;
  return html`<h1>${t.signOutTitle(input.service)}</h1>
${input.clientName ? html`<p class="lead">${t.signOutAsks(input.clientName)}</p>` : ""}
<p>${t.signOutLead}</p>
<p class="who">${t.signedInAs} <strong>${input.userLabel}</strong></p>
${signOutForm(t, input.action, input.fields)}`;
}

/** A link that does not hold: why, and (to someone signed in) a way to sign out of the service all the same. */
export function invalidLogout(input: {
  t: PageText;
  message: string;
  signOut?: { action: string; fields: CarriedFields };
}) {
  const { t } = input;
  return html`<h1>${t.logoutProblemTitle}</h1>
${errorBox(input.message)}
${input.signOut ? html`<p>${t.signOutAnyway}</p>${signOutForm(t, input.signOut.action, input.signOut.fields)}` : html`<p>${t.problemHint}</p>`}`;
}

export function signedOut(t: PageText) {
  return html`<h1>${t.signedOutTitle}</h1>
<p class="lead">${t.signedOutLead}</p>`;
}
