import { html } from "hono/html";
import type { PageText } from "../browser/page-text";
import { errorBox } from "../browser/render";
import type { StepUpMethod } from "../browser/step-up";

/**
 * The re-authentication step (browser/step-up.ts) as HTML: the person already signed in to this browser confirms it is
 * them, with the methods the step offers, never with another account (that is "use another account", which signs out of
 * the page first). The forms carry the caller's hidden fields (an authorization request's `request_id`; the account
 * center its own), so the piece serves any page that needs a recent or stronger sign-in.
 */

export type ReauthReason = "fresh" | "stronger" | "passkey";

export interface ReauthView {
  t: PageText;
  /** Who asks: the client's name (or the account center's). */
  asker: string;
  reason: ReauthReason;
  userLabel: string;
  /** The email the passkey ceremony names, for the person's own keys; none: discoverable credentials. */
  email?: string;
  methods: StepUpMethod[];
  actions: { password: string; totp: string; passkey: string; switchAccount: string };
  hidden: Record<string, string>;
  error?: string;
}

const fields = (hidden: Record<string, string>) =>
  Object.entries(hidden).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`);

const lead = (view: ReauthView) =>
  view.reason === "passkey"
    ? view.t.reauthPasskeyOnly(view.asker)
    : view.reason === "stronger"
      ? view.t.reauthStronger(view.asker)
      : view.t.reauthFresh(view.asker);

/** A passkey ceremony by the page's script (reauth-script.ts); hidden until the script finds WebAuthn. */
const passkeyPart = (view: ReauthView) => html`<div>
  <button id="reauth-passkey" class="primary" type="button" data-email="${view.email ?? ""}" hidden>${view.t.reauthWithPasskey}</button>
  <p id="reauth-passkey-problem" class="error" role="alert" hidden>${view.t.reauthPasskeyProblem}</p>
  <form id="reauth-passkey-form" method="post" action="${view.actions.passkey}">
    ${fields(view.hidden)}
    <input type="hidden" name="refresh_token" value="">
  </form>
</div>`;

const passwordPart = (
  view: ReauthView,
  first: boolean,
) => html`<form ${first ? "" : html`class="alternative" `}method="post" action="${view.actions.password}">
  ${fields(view.hidden)}
  <input type="hidden" name="username" autocomplete="username" value="${view.email ?? ""}">
  <label for="reauth-password">${first ? view.t.password : view.t.reauthWithPassword}</label>
  <input id="reauth-password" name="password" type="password" autocomplete="current-password" required>
  <div class="actions"><button class="primary" type="submit">${view.t.confirm}</button></div>
</form>`;

const totpPart = (
  view: ReauthView,
  first: boolean,
) => html`<form ${first ? "" : html`class="alternative" `}method="post" action="${view.actions.totp}">
  ${fields(view.hidden)}
  <label for="otp">${first ? view.t.mfaLead : view.t.reauthWithTotp}</label>
  <input id="otp" name="otp" type="text" inputmode="numeric" autocomplete="one-time-code" required>
  <div class="actions"><button class="primary" type="submit">${view.t.verify}</button></div>
</form>`;

export function reauthForm(view: ReauthView) {
  const { t } = view;
  return html`<h1>${t.reauthTitle}</h1>
<p class="lead">${lead(view)}</p>
${errorBox(view.error)}
${view.methods.map((method, index) =>
  method === "passkey"
    ? passkeyPart(view)
    : method === "password"
      ? passwordPart(view, index === 0)
      : totpPart(view, index === 0),
)}
<div class="who">${t.signedInAs} ${view.userLabel}.
<form method="post" action="${view.actions.switchAccount}">${fields(view.hidden)}<button class="link-button" type="submit">${t.useAnotherAccount}</button></form></div>`;
}

/**
 * The demand cannot be met by this account (no passkey, no second step): the page says so, and offers to go back to
 * the client (which hears `unmet_authentication_requirements`) or to use another account.
 */
export function cannotMeetForm(input: {
  t: PageText;
  asker: string;
  reason: "passkey" | "stronger";
  userLabel: string;
  actions: { back: string; switchAccount: string };
  hidden: Record<string, string>;
}) {
  const { t } = input;
  return html`<h1>${t.cannotTitle}</h1>
<p class="lead">${input.reason === "passkey" ? t.cannotPasskey(input.asker) : t.cannotMfa(input.asker)}</p>
<form method="post" action="${input.actions.back}">
  ${fields(input.hidden)}
  <div class="actions"><button class="primary" type="submit">${t.backToApp(input.asker)}</button></div>
</form>
<div class="who">${t.signedInAs} ${input.userLabel}.
<form method="post" action="${input.actions.switchAccount}">${fields(input.hidden)}<button class="link-button" type="submit">${t.useAnotherAccount}</button></form></div>`;
}

/** `prompt=select_account` (OIDC Core §3.1.2.1): the account signed in to this browser, or another one. */
export function selectAccountForm(input: {
  t: PageText;
  clientName: string;
  userLabel: string;
  actions: { select: string; switchAccount: string };
  hidden: Record<string, string>;
}) {
  const { t } = input;
  return html`<h1>${t.selectAccountTitle}</h1>
<p class="lead">${t.selectAccountLead(input.clientName)}</p>
<p><strong>${input.userLabel}</strong></p>
<form method="post" action="${input.actions.select}">
  ${fields(input.hidden)}
  <div class="actions"><button class="primary" type="submit">${t.continue}</button></div>
</form>
<form class="alternative" method="post" action="${input.actions.switchAccount}">
  ${fields(input.hidden)}
  <button type="submit">${t.useAnotherAccount}</button>
</form>`;
}
