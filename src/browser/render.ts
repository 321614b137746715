import { html, raw } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import { type Brand, brandStyle } from "../lib/brand";
import type { PageText } from "./page-text";

/**
 * The built-in login and consent page (contract §3.5 when `AUTH_OAUTH2_PROVIDER_LOGIN_URL` is unset): plain HTML
 * forms rendered on the server, one nonce'd stylesheet, and script only where a feature needs it (passkeys,
 * Turnstile's widget). Every interpolated value is escaped by `html`. The words come from `text/`, one catalogue per language.
 */

const STYLE = `
  :root { color-scheme: light dark; font-family: system-ui, sans-serif; --accent: #1f4fc4; --brand: #1f4fc4; --on-brand: #ffffff; --line: #8888; }
  @media (prefers-color-scheme: dark) { :root { --accent: #8fb0ff; } }
  body { margin: 0; min-height: 100vh; display: grid; place-items: center; background: Canvas; }
  main { width: min(26rem, 92vw); padding: 2rem; border: 1px solid #8884; border-radius: 12px; box-sizing: border-box; }
  /* A long word (a German compound, an app's name, an address) wraps rather than widening the page past 390 px. */
  main { overflow-wrap: anywhere; } h1 { hyphens: auto; }
  @media (max-width: 480px) { main { border: 0; padding: 1.2rem .4rem; } }
  h1 { font-size: 1.3rem; margin: 0 0 .3rem; }
  p.lead { margin: 0 0 1.4rem; }
  label { display: block; margin: .9rem 0 .3rem; font-weight: 600; }
  input[type=email], input[type=password], input[type=text], select {
    width: 100%; box-sizing: border-box; padding: .6rem; font-size: 1rem; border: 1px solid var(--line); border-radius: 6px;
  }
  input:focus-visible, select:focus-visible, button:focus-visible, a:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
  button { font-size: 1rem; padding: .65rem 1.1rem; border-radius: 6px; border: 1px solid var(--line); cursor: pointer; }
  button.primary { background: var(--brand); color: var(--on-brand); border-color: var(--brand); }
  header.brand { display: flex; align-items: center; gap: .6rem; margin: 0 0 1.2rem; font-weight: 600; font-size: 1.05rem; overflow-wrap: anywhere; }
  header.brand img { max-height: 2.5rem; max-width: 100%; width: auto; }
  a { color: var(--accent); }
  .actions { display: flex; gap: .6rem; margin-top: 1.4rem; justify-content: flex-end; flex-wrap: wrap; }
  .error { padding: .6rem .8rem; border-radius: 6px; background: #d3303022; color: inherit; border: 1px solid #d3303066; margin-bottom: 1rem; }
  .error form { margin-top: .5rem; }
  ul.scopes { padding-left: 1.2rem; line-height: 1.7; }
  ul.authorization-details { padding-left: 1.2rem; } .authorization-details p { margin: .2rem 0; }
  .authorization-details dl { margin: .3rem 0 .6rem; font-size: .9rem; }
  .authorization-details dt { font-weight: 600; } .authorization-details dd { margin: 0 0 .3rem; }
  ul.resources { padding-left: 1.2rem; margin: .3rem 0 1rem; overflow-wrap: anywhere; }
  .resources .url { font: .85rem ui-monospace, monospace; }
  img.client-logo { display: block; max-height: 3rem; max-width: 100%; width: auto; margin-bottom: .6rem; }
  .alternative { margin-top: 1.6rem; padding-top: 1rem; border-top: 1px solid #8884; }
  .providers { display: grid; gap: .5rem; }
  .providers button { width: 100%; }
  .row { display: flex; gap: .5rem; flex-wrap: wrap; }
  .row input { flex: 1; min-width: 12rem; }
  .links { display: flex; justify-content: space-between; gap: .5rem; flex-wrap: wrap; margin-top: 1rem; font-size: .95rem; }
  .hint { font-size: .9rem; margin: .3rem 0 0; }
  .who { font-size: .9rem; margin-top: 1.2rem; }
  .who form { display: inline; }
  .link-button { padding: 0; border: 0; background: none; color: var(--accent); text-decoration: underline; font-size: .9rem; }
  .origin { margin: 0 0 .8rem; }
  .note { font-size: .9rem; }
  .warning { padding: .6rem .8rem; border-radius: 6px; background: #e0a00022; border: 1px solid #e0a00066; }
  .code { font: 600 1.6rem/1.2 ui-monospace, monospace; letter-spacing: .12em; text-align: center; margin: .4rem 0 1rem; }
  .binding { margin: .4rem 0 1rem; padding: .6rem .8rem; border-left: 3px solid currentColor; }
  .binding figcaption { font-size: .85rem; font-weight: 600; }
  .binding blockquote { margin: .3rem 0 0; font-size: 1.15rem; overflow-wrap: anywhere; }
  .turnstile { margin-top: 1rem; min-height: 65px; }
  #user_code { font: 600 1.3rem ui-monospace, monospace; letter-spacing: .1em; text-transform: uppercase; }
`;

type Body = HtmlEscapedString | Promise<HtmlEscapedString>;

export interface PageFrame {
  nonce: string;
  lang: string;
  title: string;
  body: Body;
  /** Our own script source, run with the nonce; never built from request data. */
  script?: string;
  /** An outside script the page embeds (Turnstile's widget loader), with the nonce. */
  widgetScript?: string;
  /** More of our own CSS, after the house style (the account center's): constant text, never request data. */
  style?: string;
  /** The deployment's brand (src/http/brand.ts): its name and logo head the page, its colour styles it. */
  brand?: Brand;
  /** Above everything: an impersonation's banner (impersonation-banner.ts). */
  banner?: Body;
}

/** The brand's logo and name over the page's content; nothing without a brand name or logo. */
function brandHeader(brand: Brand) {
  if (!brand.name && !brand.logoUrl) return "";
  // The logo's alt text is the name; beside it the name is shown once more for sight only (read once, not twice).
  return html`<header class="brand">${
    brand.logoUrl
      ? html`<img src="${brand.logoUrl}" alt="${brand.name ?? ""}" referrerpolicy="no-referrer">${brand.name ? html`<span aria-hidden="true">${brand.name}</span>` : ""}`
      : html`<span>${brand.name}</span>`
  }</header>`;
}

export function page({
  nonce,
  lang,
  title,
  body,
  script,
  widgetScript,
  style,
  brand = {},
  banner,
}: PageFrame) {
  return html`<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${brand.name ? `${title} · ${brand.name}` : title}</title>
<style nonce="${nonce}">${raw(STYLE)}${brandStyle(brand)}${raw(style ?? "")}</style>
${widgetScript ? html`<script nonce="${nonce}" src="${widgetScript}" async defer></script>` : ""}
</head>
<body><main>${banner ?? ""}${brandHeader(brand)}${body}</main>${script ? html`<script nonce="${nonce}">${raw(script)}</script>` : ""}</body>
</html>`;
}

export const errorBox = (message?: string, extra?: Body) =>
  message ? html`<div class="error" role="alert">${message}${extra ?? ""}</div>` : "";

/** Turnstile's widget in a form, when the page guards that form (its token arrives as `cf-turnstile-response`). */
export interface WidgetSlot {
  siteKey: string;
  action: string;
}

export const widget = (slot: WidgetSlot | undefined, lang: string) =>
  slot
    ? html`<div class="turnstile cf-turnstile" data-sitekey="${slot.siteKey}" data-action="${slot.action}" data-language="${lang}"></div>`
    : "";

export interface ProviderButton {
  id: string;
  name: string;
}

export interface SignInView {
  t: PageText;
  action: string;
  requestId: string;
  clientName: string;
  /** Said before the form instead of "to continue to <client>". */
  intro?: string[];
  email?: string;
  error?: string;
  /** A "send the confirmation mail again" form under the error (an unverified address). */
  resendAction?: string;
  signUpHref?: string;
  resetHref?: string;
  /** Where a provider button posts (the page sends the browser on to the provider). */
  providerAction?: string;
  providers: ProviderButton[];
  /** Where to ask for a magic link, when the deployment has them on. */
  emailLinkAction?: string;
  /** Where the passkey script posts the session it got, when security keys are on. */
  passkeySessionAction?: string;
  widgets: { signin?: WidgetSlot; passwordless?: WidgetSlot };
}

const hidden = (requestId: string) => html`<input type="hidden" name="request_id" value="${requestId}">`;

export function signInForm(input: SignInView) {
  const { t } = input;
  const resend = input.resendAction
    ? html`<form method="post" action="${input.resendAction}">${hidden(input.requestId)}<input type="hidden" name="email" value="${input.email ?? ""}"><button class="link-button" type="submit">${t.resendVerification}</button></form>`
    : undefined;
  return html`<h1>${t.signInTitle}</h1>
${
  input.intro
    ? input.intro.map((sentence) => html`<p class="lead">${sentence}</p>`)
    : html`<p class="lead">${t.toContinueTo} <strong>${input.clientName}</strong></p>`
}
${errorBox(input.error, resend)}
<form method="post" action="${input.action}">
  ${hidden(input.requestId)}
  <label for="email">${t.email}</label>
  <input id="email" name="email" type="email" autocomplete="${input.passkeySessionAction ? "username webauthn" : "username"}" required value="${input.email ?? ""}">
  <label for="password">${t.password}</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required>
  ${widget(input.widgets.signin, t.lang)}
  <div class="actions"><button class="primary" type="submit">${t.signIn}</button></div>
</form>
<div class="links">
  ${input.resetHref ? html`<a href="${input.resetHref}">${t.forgotPassword}</a>` : ""}
  ${input.signUpHref ? html`<span>${t.noAccount} <a href="${input.signUpHref}">${t.createAccount}</a></span>` : ""}
</div>
${
  input.providers.length > 0 && input.providerAction
    ? html`<form class="alternative providers" method="post" action="${input.providerAction}" aria-label="${t.orContinueWith}">
  ${hidden(input.requestId)}
  ${input.providers.map((p) => html`<button type="submit" name="provider" value="${p.id}">${t.continueWith(p.name)}</button>`)}
</form>`
    : ""
}
${
  input.passkeySessionAction
    ? html`<div class="alternative">
  <button id="passkey" type="button" hidden>${t.passkey}</button>
  <p id="passkey-problem" class="error" role="alert" hidden>${t.passkeyProblem}</p>
  <form id="passkey-session" method="post" action="${input.passkeySessionAction}">
    ${hidden(input.requestId)}
    <input type="hidden" name="refresh_token" value="">
  </form>
</div>`
    : ""
}
${
  input.emailLinkAction
    ? html`<form class="alternative" method="post" action="${input.emailLinkAction}">
  ${hidden(input.requestId)}
  <label for="link-email">${t.emailLinkLabel}</label>
  <div class="row">
    <input id="link-email" name="email" type="email" autocomplete="${input.passkeySessionAction ? "username webauthn" : "email"}" required value="${input.email ?? ""}">
    <button type="submit">${t.emailMeALink}</button>
  </div>
  ${widget(input.widgets.passwordless, t.lang)}
</form>`
    : ""
}`;
}

export function mfaForm(input: {
  t: PageText;
  action: string;
  requestId: string;
  ticket: string;
  /** The first factor, sealed with the ticket (session.ts, `sealFirstFactor`). */
  first: string;
  error?: string;
  /** What the code is when it is not the authenticator app's (a mailed or texted code, issue 47). */
  lead?: string;
}) {
  const { t } = input;
  return html`<h1>${t.mfaTitle}</h1>
<p class="lead">${input.lead ?? t.mfaLead}</p>
${errorBox(input.error)}
<form method="post" action="${input.action}">
  ${hidden(input.requestId)}
  <input type="hidden" name="ticket" value="${input.ticket}">
  <input type="hidden" name="first" value="${input.first}">
  <label for="otp">${t.code}</label>
  <input id="otp" name="otp" type="text" inputmode="numeric" autocomplete="one-time-code" required>
  <div class="actions"><button class="primary" type="submit">${t.verify}</button></div>
</form>`;
}

/** A page that says a mail is on its way, with a way back. */
export function mailSent(input: {
  t: PageText;
  title: string;
  lead: string;
  hint?: string;
  backHref: string;
}) {
  return html`<h1>${input.title}</h1>
<p class="lead">${input.lead}</p>
${input.hint ? html`<p>${input.hint}</p>` : ""}
<div class="links"><a href="${input.backHref}">${input.t.backToSignIn}</a></div>`;
}

export { hidden };

/** A page that says what went wrong and what to do next. */
export function problem(t: PageText, message: string) {
  return html`<h1>${t.problemTitle}</h1>
<p class="lead">${message}</p>
<p>${t.problemHint}</p>`;
}

/**
 * A page for a fault (the service failed, nothing was refused): what to do, and, small, the request's id (the API's
 * fault answers carry it as `requestId`), so whoever reports it can be matched with the log line.
 */
export function faultProblem(t: PageText, message: string, requestId: string) {
  return html`<h1>${t.faultTitle}</h1>
<p class="lead" role="alert">${message}</p>
<p class="note">${t.faultReference} <code>${requestId}</code></p>`;
}
