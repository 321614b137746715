import { html, raw } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";

/**
 * The built-in login and consent page (contract §3.5 when `AUTH_OAUTH2_PROVIDER_LOGIN_URL` is unset): plain HTML
 * forms rendered on the server, no script at all, one nonce'd stylesheet. Every interpolated value is escaped by
 * `html`.
 */

/** What each scope lets the client do, in the words the consent screen uses. */
const SCOPE_WORDS: Record<string, string> = {
  openid: "Know who you are (your account id)",
  profile: "See your name, picture and language",
  email: "See your email address",
  phone: "See your phone number",
  offline_access: "Stay connected when you are not using it",
  graphql: "Read and change your data through the GraphQL API, as you",
};

function describeScope(scope: string): string {
  return SCOPE_WORDS[scope] ?? scope;
}

const STYLE = `
  :root { color-scheme: light dark; font-family: system-ui, sans-serif; }
  body { margin: 0; min-height: 100vh; display: grid; place-items: center; background: Canvas; }
  main { width: min(26rem, 92vw); padding: 2rem; border: 1px solid #8884; border-radius: 12px; }
  h1 { font-size: 1.3rem; margin: 0 0 .3rem; }
  p.lead { margin: 0 0 1.4rem; color: GrayText; }
  label { display: block; margin: .9rem 0 .3rem; font-weight: 600; }
  input[type=email], input[type=password], input[type=text] {
    width: 100%; box-sizing: border-box; padding: .6rem; font-size: 1rem; border: 1px solid #8888; border-radius: 6px;
  }
  button { font-size: 1rem; padding: .65rem 1.1rem; border-radius: 6px; border: 1px solid #8888; cursor: pointer; }
  button.primary { background: #2457d6; color: white; border-color: #2457d6; }
  .actions { display: flex; gap: .6rem; margin-top: 1.4rem; justify-content: flex-end; }
  .error { padding: .6rem .8rem; border-radius: 6px; background: #d3303022; color: #b02020; margin-bottom: 1rem; }
  ul.scopes { padding-left: 1.2rem; line-height: 1.7; }
  .alternative { margin-top: 1.6rem; padding-top: 1rem; border-top: 1px solid #8884; }
  .row { display: flex; gap: .5rem; }
  .row input { flex: 1; }
  .who { font-size: .9rem; color: GrayText; margin-top: 1.2rem; }
  .who form { display: inline; }
  .who button { padding: 0; border: 0; background: none; color: #2457d6; text-decoration: underline; font-size: .9rem; }
  .origin { margin: 0 0 .8rem; }
  .note { font-size: .9rem; color: GrayText; }
  .warning { padding: .6rem .8rem; border-radius: 6px; background: #e0a00022; border: 1px solid #e0a00066; }
  .code { font: 600 1.6rem/1.2 ui-monospace, monospace; letter-spacing: .12em; text-align: center; margin: .4rem 0 1rem; }
  #user_code { font: 600 1.3rem ui-monospace, monospace; letter-spacing: .1em; text-transform: uppercase; }
`;

export interface PageFrame {
  nonce: string;
  title: string;
  body: HtmlEscapedString | Promise<HtmlEscapedString>;
  /** Our own script source, run with the nonce; never built from request data. */
  script?: string;
}

export function page({ nonce, title, body, script }: PageFrame) {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${title}</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body><main>${body}</main>${script ? html`<script nonce="${nonce}">${raw(script)}</script>` : ""}</body>
</html>`;
}

const errorBox = (message?: string) =>
  message ? html`<div class="error" role="alert">${message}</div>` : "";

export function signInForm(input: {
  action: string;
  requestId: string;
  clientName: string;
  email?: string;
  error?: string;
  /** Where to ask for a magic link, when the deployment has them on. */
  emailLinkAction?: string;
  /** Where the passkey script posts the session it got, when security keys are on. */
  passkeySessionAction?: string;
}) {
  return html`<h1>Sign in</h1>
<p class="lead">to continue to <strong>${input.clientName}</strong></p>
${errorBox(input.error)}
<form method="post" action="${input.action}">
  <input type="hidden" name="request_id" value="${input.requestId}">
  <label for="email">Email</label>
  <input id="email" name="email" type="email" autocomplete="username" required value="${input.email ?? ""}">
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required>
  <div class="actions"><button class="primary" type="submit">Sign in</button></div>
</form>
${
  input.passkeySessionAction
    ? html`<div class="alternative">
  <button id="passkey" type="button" hidden>Sign in with a passkey</button>
  <p id="passkey-problem" class="error" role="alert" hidden>The passkey sign-in did not work. Try again or use your password.</p>
  <form id="passkey-session" method="post" action="${input.passkeySessionAction}">
    <input type="hidden" name="request_id" value="${input.requestId}">
    <input type="hidden" name="refresh_token" value="">
  </form>
</div>`
    : ""
}
${
  input.emailLinkAction
    ? html`<form class="alternative" method="post" action="${input.emailLinkAction}">
  <input type="hidden" name="request_id" value="${input.requestId}">
  <label for="link-email">Or get a sign-in link by email</label>
  <div class="row">
    <input id="link-email" name="email" type="email" autocomplete="email" required value="${input.email ?? ""}">
    <button type="submit">Email me a link</button>
  </div>
</form>`
    : ""
}`;
}

export function linkSent(email: string) {
  return html`<h1>Check your email</h1>
<p class="lead">If <strong>${email}</strong> can sign in here, a sign-in link is on its way to it.</p>
<p>Open the link within the next ten minutes to continue.</p>`;
}

export function mfaForm(input: { action: string; requestId: string; ticket: string; error?: string }) {
  return html`<h1>Two-step verification</h1>
<p class="lead">Enter the code from your authenticator app, or a recovery code.</p>
${errorBox(input.error)}
<form method="post" action="${input.action}">
  <input type="hidden" name="request_id" value="${input.requestId}">
  <input type="hidden" name="ticket" value="${input.ticket}">
  <label for="otp">Code</label>
  <input id="otp" name="otp" type="text" inputmode="numeric" autocomplete="one-time-code" required>
  <div class="actions"><button class="primary" type="submit">Verify</button></div>
</form>`;
}

/** What the consent screen says about who the client is, beyond the name it gave itself. */
export interface ClientFacts {
  /** The host of a client metadata document: the name is only as good as this domain. */
  documentHost?: string;
  /** Registered by itself (open registration, a metadata document): nobody here reviewed it. */
  unreviewed: boolean;
  /** Every redirect URI is on this computer: an app running locally, which anyone can write and start. */
  loopbackOnly: boolean;
}

/** Under the client's name: who publishes it, when a metadata document names it. */
const publisher = (facts: ClientFacts) =>
  facts.documentHost ? html`<p class="origin">Published by <strong>${facts.documentHost}</strong></p>` : "";

/** After what it asks: how far its name can be trusted. */
const caution = (facts: ClientFacts) =>
  facts.loopbackOnly
    ? html`<p class="warning" role="note">This app runs on your own computer. Allow it only if you just started it yourself.</p>`
    : facts.unreviewed
      ? html`<p class="note">This app registered itself; its name was not checked.</p>`
      : "";

export function consentForm(input: {
  action: string;
  switchAction: string;
  requestId: string;
  clientName: string;
  scopes: string[];
  userLabel: string;
  facts: ClientFacts;
  /** The user code of a device flow: the person checks it is the one their device shows. */
  deviceUserCode?: string;
}) {
  return html`<h1>${input.clientName}</h1>
${publisher(input.facts)}
${
  input.deviceUserCode
    ? html`<p class="lead">wants to access your account from a device showing the code</p>
<p class="code">${input.deviceUserCode}</p>
<p class="warning" role="note">Only allow this if you started it on your own device and it shows this code. Nobody should ever ask you to enter a code for them.</p>`
    : html`<p class="lead">wants to access your account</p>`
}
${caution(input.facts)}
${
  input.scopes.length > 0
    ? html`<p>It will be able to:</p>
<ul class="scopes">${input.scopes.map((scope) => html`<li>${describeScope(scope)}</li>`)}</ul>`
    : html`<p>It asks for no data beyond knowing that you allowed it.</p>`
}
<form method="post" action="${input.action}">
  <input type="hidden" name="request_id" value="${input.requestId}">
  <div class="actions">
    <button type="submit" name="decision" value="deny">Deny</button>
    <button class="primary" type="submit" name="decision" value="allow">Allow</button>
  </div>
</form>
<div class="who">Signed in as ${input.userLabel}.
<form method="post" action="${input.switchAction}"><input type="hidden" name="request_id" value="${input.requestId}"><button type="submit">Use another account</button></form></div>`;
}

/** The device flow's first step: the code the device shows. */
export function deviceCodeForm(input: { action: string; userCode?: string; error?: string }) {
  return html`<h1>Connect a device</h1>
<p class="lead">Enter the code shown on your device or in your terminal.</p>
${errorBox(input.error)}
<form method="post" action="${input.action}">
  <label for="user_code">Code</label>
  <input id="user_code" name="user_code" type="text" required autocomplete="off" autocapitalize="characters"
    spellcheck="false" maxlength="20" placeholder="BCDF-GHJK" value="${input.userCode ?? ""}">
  <div class="actions"><button class="primary" type="submit">Continue</button></div>
</form>`;
}

/** The device flow's last step. */
export function deviceFinished(outcome: "approved" | "denied") {
  return outcome === "approved"
    ? html`<h1>Device connected</h1>
<p class="lead">You can close this page and go back to your device.</p>`
    : html`<h1>Request denied</h1>
<p class="lead">The device was not given access. You can close this page.</p>`;
}

export function problem(message: string) {
  return html`<h1>This sign-in link does not work</h1>
<p class="lead">${message}</p>
<p>Go back to the app and start again.</p>`;
}
