import { Hono } from "hono";
import { html } from "hono/html";
import { DEV_LANDING_PATH } from "../../config";
import type { AppEnv } from "../../http/app-env";
import { setPageHeaders } from "../../http/page-headers";

/**
 * Where links land on a development server while no app exists yet (`AUTH_CLIENT_URL` never set; config.ts
 * `defaultRedirectUrl`): instead of "site can't be reached" at localhost:3000, a page that says what happened and
 * shows what an app at that address would have received, with the call it would make next.
 */

const STYLE = `
  :root { color-scheme: light dark; font-family: system-ui, sans-serif; }
  body { margin: 2rem auto; max-width: 46rem; padding: 0 1rem; line-height: 1.5; }
  code, pre { font-family: ui-monospace, monospace; font-size: .9rem; }
  pre { white-space: pre-wrap; word-break: break-all; padding: .8rem 1rem; border: 1px solid #8884; border-radius: 8px; }
  table { border-collapse: collapse; width: 100%; }
  td { padding: .35rem .5rem; border-bottom: 1px solid #8884; vertical-align: top; word-break: break-all; }
  .error { color: #c0392b; }
  .muted { color: #595959; } @media (prefers-color-scheme: dark) { .muted { color: #b3b3b3; } }
`;

/** What each ticket type did, in words (contract §8). */
const DONE: Record<string, string> = {
  emailVerify: "The email address is verified and the user is signed in.",
  signinPasswordless: "The user is signed in with a magic link.",
  passwordReset: "The user is signed in to choose a new password (POST /user/password).",
  emailConfirmChange: "The new email address is confirmed and the user is signed in.",
};

function outcome(query: Record<string, string>, auth: string) {
  if (query.error) {
    return {
      title: "The link did not work",
      body: html`<p class="error"><strong>${query.error}</strong>: ${query.errorDescription ?? ""}</p>
<p>An app receives <code>error</code> and <code>errorDescription</code> and should offer to send a new link.</p>`,
    };
  }
  if (query.refreshToken) {
    return {
      title: "Signed in",
      body: html`<p>${DONE[query.type ?? ""] ?? "The user is signed in."}</p>
<p>An app receives <code>refreshToken</code> and exchanges it for a session (<code>nhost.auth.refreshToken({ refreshToken })</code>):</p>
<pre>curl -s ${auth}/token -H 'content-type: application/json' -d '{"refreshToken":"${query.refreshToken}"}'</pre>
<p class="muted">The refresh token works once: the exchange answers the next one with the session.</p>`,
    };
  }
  if (query.code) {
    return {
      title: "Signed in (PKCE link)",
      body: html`<p>The link was asked for with a <code>codeChallenge</code>: the app that asked exchanges the code with
its verifier, from the same browser.</p>
<pre>curl -s ${auth}/token/exchange -H 'content-type: application/json' -d '{"code":"${query.code}","codeVerifier":"…"}'</pre>`,
    };
  }
  if (query.mfaTicket) {
    return {
      title: "A second factor is needed",
      body: html`<p>The user has TOTP on. An app receives <code>mfaTicket</code> and asks for the code:
<code>POST ${auth}/signin/mfa/totp {"ticket", "otp"}</code>.</p>`,
    };
  }
  return {
    title: "Nothing arrived",
    body: html`<p>This page shows what a link sent here carried; this one carried nothing.</p>`,
  };
}

export const devLandingRoutes = new Hono<AppEnv>().get(DEV_LANDING_PATH, (c) => {
  const query = c.req.query();
  const auth = c.var.config.urls.server;
  const { title, body } = outcome(query, auth);
  const nonce = setPageHeaders(c);
  return c.html(html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title><style nonce="${nonce}">${STYLE}</style></head>
<body><h1>${title}</h1>${body}
<h2>What an app would have received</h2>
<table>${Object.entries(query).map(([name, value]) => html`<tr><td><code>${name}</code></td><td><code>${value}</code></td></tr>`)}</table>
<p class="muted">This development page stands in for your app: links go to <code>AUTH_CLIENT_URL</code>, which is not
set. Set it in <code>.dev.vars</code> (for example <code>AUTH_CLIENT_URL='http://localhost:3000'</code>) and restart
<code>npm start</code> to send them to your app, or pass <code>redirectTo</code> when asking for a link.</p>
</body></html>`);
});
