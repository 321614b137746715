import { html, raw } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import type { ConsoleSessionRow } from "../../db/schema";
import { SIGNING_ALGORITHMS } from "../../lib/key-algorithms";
import type { AdminKey, AdminSession, AdminUserDetail, WireAuditEvent } from "../wire";

type Body = HtmlEscapedString | Promise<HtmlEscapedString>;

const STYLE = `
  :root { color-scheme: light dark; font-family: system-ui, sans-serif; --line: #8884; --accent: #1f4fc4; --muted: #595959; }
  @media (prefers-color-scheme: dark) { :root { --accent: #8fb0ff; --muted: #b3b3b3; } }
  body { margin: 0; }
  header { display: flex; flex-wrap: wrap; gap: .6rem 1.2rem; align-items: center; padding: .8rem 1.5rem; border-bottom: 1px solid var(--line); }
  header strong { margin-right: 1rem; }
  header a { text-decoration: none; color: inherit; padding: .25rem .1rem; white-space: nowrap; }
  header a.here { border-bottom: 2px solid var(--accent); }
  header form { margin-left: auto; }
  main { max-width: 72rem; margin: 0 auto; padding: 1.2rem 1.5rem 4rem; }
  h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin-top: 2rem; }
  table { width: 100%; border-collapse: collapse; font-size: .95rem; }
  th, td { text-align: left; padding: .5rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
  th { font-weight: 600; color: var(--muted); }
  input[type=search], input[type=password] { padding: .5rem; font-size: 1rem; border: 1px solid #8888; border-radius: 6px; }
  input[type=search] { width: min(28rem, 70vw); }
  button { font-size: .95rem; padding: .45rem .9rem; border-radius: 6px; border: 1px solid #8888; cursor: pointer; background: Canvas; color: CanvasText; }
  button.primary { background: #1f4fc4; border-color: #1f4fc4; color: white; }
  button.danger { border-color: #cf222e; color: #cf222e; }
  .actions { display: flex; gap: .6rem; flex-wrap: wrap; margin: 1rem 0; }
  .actions form { display: inline; }
  .badge { display: inline-block; padding: .05rem .5rem; border-radius: 999px; font-size: .8rem; border: 1px solid var(--line); }
  .badge.off { color: #cf222e; border-color: #cf222e; }
  .badge.on { color: #1a7f37; border-color: #1a7f37; }
  .notice { padding: .6rem .8rem; border-radius: 6px; background: #1a7f3722; margin: 1rem 0; }
  .error { padding: .6rem .8rem; border-radius: 6px; background: #d3303022; color: #b02020; margin: 1rem 0; }
  .muted { color: var(--muted); } code { font-size: .85rem; }
  code.secret { overflow-wrap: anywhere; }
  table + form.filters { margin-top: .8rem; }
  main > form { margin-bottom: 1rem; }
  dl { display: grid; grid-template-columns: max-content 1fr; gap: .35rem 1.2rem; }
  dt { color: var(--muted); }
  dl.detail { grid-template-columns: max-content 1fr; gap: .1rem .6rem; margin: 0; font-size: .85rem; }
  dl.detail dd { margin: 0; overflow-wrap: anywhere; }
  .login { max-width: 24rem; margin: 12vh auto; padding: 2rem; border: 1px solid var(--line); border-radius: 12px; }
  .login input { width: 100%; box-sizing: border-box; margin: .4rem 0 1rem; }
  .stats { display: grid; grid-template-columns: repeat(auto-fit, minmax(8rem, 1fr)); gap: .8rem; margin: 1rem 0 1.5rem; }
  .stat { border: 1px solid var(--line); border-radius: 8px; padding: .7rem .9rem; display: flex; flex-direction: column; }
  .stat .value { font-size: 1.6rem; font-weight: 700; } .stat .label { color: var(--muted); }
  form.filters { display: flex; flex-wrap: wrap; gap: .5rem .9rem; align-items: end; margin-bottom: 1rem; }
  form.filters label { display: flex; flex-direction: column; font-size: .85rem; color: var(--muted); }
  form.filters input, form.filters select { font-size: .95rem; padding: .35rem; color: CanvasText; }
  form.edit { display: grid; gap: .6rem; max-width: 32rem; }
  form.edit label { display: flex; flex-direction: column; gap: .2rem; }
  form.edit label.check { flex-direction: row; align-items: center; gap: .4rem; }
  form.edit input, form.edit textarea { font-size: .95rem; padding: .4rem; }
  form.edit.wide { max-width: 56rem; }
  textarea.code { font-family: ui-monospace, monospace; font-size: .85rem; }
  .charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(16rem, 1fr)); gap: 1.2rem; }
  figure.chart { margin: 0; border: 1px solid var(--line); border-radius: 8px; padding: .7rem .9rem; }
  figure.chart figcaption { display: flex; justify-content: space-between; margin-bottom: .4rem; }
  .brand-preview img { max-width: 100%; object-fit: contain; vertical-align: middle; }
  /* A phone (390 px): the header wraps, tables keep their columns but wrap their text, nothing scrolls sideways. */
  @media (max-width: 640px) {
    header { flex-wrap: wrap; gap: .4rem .9rem; padding: .6rem .8rem; }
    header form { margin-left: 0; }
    main { padding: .8rem .6rem 3rem; }
    table { table-layout: fixed; font-size: .85rem; }
    th, td { padding: .4rem .25rem; overflow-wrap: anywhere; }
    input[type=search] { width: 100%; box-sizing: border-box; }
    dl { grid-template-columns: 1fr; }
    dd { margin: 0 0 .5rem; overflow-wrap: anywhere; }
    .login { margin: 4vh .6rem; padding: 1.2rem; }
    form.filters label { flex: 1 1 100%; }
    form.filters input, form.filters select { width: 100%; box-sizing: border-box; }
    dl.detail { display: block; }
    dl.detail dt { font-weight: 600; }
    dl.detail dd { margin: 0 0 .3rem; }
    /* Tables whose cells are long and unbreakable (key ids): one card per row, each cell under its label. */
    table.cards, table.cards tbody, table.cards tr, table.cards td { display: block; }
    table.cards thead { display: none; }
    table.cards tr { border-bottom: 1px solid var(--line); padding: .4rem 0; }
    table.cards td { border: 0; padding: .15rem .25rem; }
    table.cards td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); }
    /* Any other table scrolls inside its own box when a cell still cannot wrap (a button), never the page. */
    table:not(.cards) { display: block; overflow-x: auto; max-width: 100%; }
    h1, h2, p, li { overflow-wrap: anywhere; }
  }
  /* Long emails and ids wrap rather than widen a table past the page, at any width. */
  th, td, h1 { overflow-wrap: anywhere; }
  /* Short words (an actor, an address, a time) never break inside: "admi n" reads as nothing. */
  table .tight { overflow-wrap: normal; }
`;

export const when = (iso: string | null) => (iso ? iso.replace("T", " ").slice(0, 16) : "–");

export function layout(nonce: string, title: string, body: Body) {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin"><title>${title} · Admin console</title>
<style nonce="${nonce}">${raw(STYLE)}</style></head><body>${body}</body></html>`;
}

export interface Chrome {
  base: string;
  csrf: string;
  here:
    | "overview"
    | "users"
    | "orgs"
    | "clients"
    | "storage"
    | "webhooks"
    | "keys"
    | "brand"
    | "permissions"
    | "audit"
    | "sessions";
  notice?: string;
}

/** A form that posts one action, with the session's CSRF token. */
export function action(chrome: Chrome, path: string, label: string, style = "", extra: Body | string = "") {
  return html`<form method="post" action="${chrome.base}${path}"><input type="hidden" name="csrf" value="${chrome.csrf}">${extra}<button type="submit" class="${style}">${label}</button></form>`;
}

export function frame(chrome: Chrome, body: Body) {
  const link = (target: Chrome["here"], label: string) =>
    html`<a href="${chrome.base}/${target}" class="${chrome.here === target ? "here" : ""}">${label}</a>`;
  return html`<header><strong>Admin console</strong>${link("overview", "Overview")}${link("users", "Users")}${link("orgs", "Organizations")}${link(
    "clients",
    "OAuth2 clients",
  )}${link("storage", "Storage")}${link("webhooks", "Webhooks")}${link("keys", "Signing keys")}${link("brand", "Brand")}${link("permissions", "Permissions")}${link("audit", "Audit log")}${link("sessions", "Console sessions")}${action(
    chrome,
    "/logout",
    "Sign out",
  )}</header>
<main>${chrome.notice ? html`<p class="notice" role="status">${chrome.notice}</p>` : ""}${body}</main>`;
}

export function loginPage(base: string, error?: string) {
  return html`<div class="login"><h1>Admin console</h1>
<p class="muted">Sign in with the deployment's admin secret (<code>AUTH_ADMIN_SECRET</code>; locally
<code>npm run admin -- secret</code>).</p>
${error ? html`<p class="error" role="alert">${error}</p>` : ""}
<form method="post" action="${base}/login"><label for="secret">Admin secret</label>
<input id="secret" name="secret" type="password" autocomplete="current-password" required autofocus>
<button class="primary" type="submit">Sign in</button></form></div>`;
}

export function userPage(
  chrome: Chrome,
  user: AdminUserDetail,
  sessions: AdminSession[],
  events: WireAuditEvent[],
  /** The edit form and the mails (pages-users.ts), under the actions. */
  editor: Body | string = "",
) {
  const path = `/users/${user.id}`;
  return frame(
    chrome,
    html`<p><a href="${chrome.base}/users">← Users</a></p>
<h1>${user.email ?? user.phoneNumber ?? user.id} ${
      user.disabled
        ? html`<span class="badge off">disabled</span>`
        : html`<span class="badge on">active</span>`
    }</h1>
<dl><dt>Id</dt><dd><code>${user.id}</code></dd><dt>Name</dt><dd>${user.displayName}</dd>
<dt>Roles</dt><dd>${user.roles.join(", ")} (default ${user.defaultRole})</dd>
<dt>Email verified</dt><dd>${user.emailVerified ? "yes" : "no"}</dd><dt>MFA</dt><dd>${user.activeMfaType ?? "off"}</dd>
<dt>Created</dt><dd>${when(user.createdAt)}</dd><dt>Last seen</dt><dd>${when(user.lastSeen)}</dd></dl>
<div class="actions">${
      user.disabled
        ? action(chrome, `${path}/enable`, "Enable")
        : action(chrome, `${path}/disable`, "Disable (ends every session and grant)", "danger")
    }${action(chrome, `${path}/sessions/revoke`, "Revoke all sessions")}${action(
      chrome,
      `${path}/delete`,
      "Delete user",
      "danger",
      html`<label><input type="checkbox" name="confirm" value="yes" required> I mean it </label>`,
    )}</div>
${editor}
<h2>Sessions (${sessions.length})</h2>
${
  sessions.length === 0
    ? html`<p class="muted">No session.</p>`
    : // On a phone, one card per session (`cards`): five columns broke the times inside their digits.
      html`<table class="cards"><thead><tr><th class="tight">Started</th><th class="tight">Last used</th><th class="tight">Expires</th><th>Device</th><th class="tight"></th></tr></thead><tbody>${sessions.map(
        (s) =>
          html`<tr><td data-label="Started" class="tight">${when(s.createdAt)}</td><td data-label="Last used" class="tight">${when(s.lastUsedAt)}</td><td data-label="Expires" class="tight">${when(s.expiresAt)}</td><td data-label="Device">${s.userAgent ?? "–"}</td><td class="tight">${action(
            chrome,
            `${path}/sessions/${s.id}/revoke`,
            "Revoke",
          )}</td></tr>`,
      )}</tbody></table>`
}
<h2>Identity providers</h2>${
      user.providers.length === 0
        ? html`<p class="muted">None.</p>`
        : html`<ul>${user.providers.map((p) => html`<li>${p.provider} <code>${p.providerUserId}</code></li>`)}</ul>`
    }
<h2>Recent security events</h2>${eventsTable(chrome, events, new Map(user.email ? [[user.id, user.email]] : []))}
<p><a href="${chrome.base}/audit?user=${encodeURIComponent(user.email ?? user.id)}">All of this user's events →</a></p>`,
  );
}

/** An event's detail as words: `key: value` pairs, nested values as compact JSON. */
function detailOf(detail: Record<string, unknown>) {
  const entries = Object.entries(detail).filter(([key]) => key !== "path");
  if (entries.length === 0) return "–";
  return html`<dl class="detail">${entries.map(
    ([key, value]) =>
      html`<dt>${key}</dt><dd>${typeof value === "string" ? value : JSON.stringify(value)}</dd>`,
  )}</dl>`;
}

/** The events, each user by email (linked to their page) where the caller knows it. */
export function eventsTable(
  chrome: Chrome,
  events: WireAuditEvent[],
  emails: Map<string, string> = new Map(),
) {
  return events.length === 0
    ? html`<p class="muted">No event.</p>`
    : // Seven columns do not fit a phone: there, one card per event, the type its heading (`cards`).
      html`<table class="cards"><thead><tr><th class="tight">Event</th><th class="tight">When</th><th class="tight">Outcome</th><th class="tight">Actor</th><th>User</th><th class="tight">Address</th><th>Detail</th></tr></thead><tbody>${events.map(
        (e) =>
          html`<tr><td class="tight">${e.type}</td><td class="tight" data-label="When">${when(e.at)}</td><td class="tight" data-label="Outcome">${e.outcome === "failure" ? html`<span class="badge">failed</span> ${e.reason}` : "ok"}</td><td class="tight" data-label="Actor">${e.actor.type}${e.actor.name ? html`: ${e.actor.name}` : ""}</td><td data-label="User">${
            e.userId
              ? html`<a href="${chrome.base}/users/${encodeURIComponent(e.userId)}">${emails.get(e.userId) ?? html`<code>${e.userId.slice(0, 8)}</code>`}</a>`
              : "–"
          }</td><td class="tight" data-label="Address">${e.ip ?? "–"}</td><td data-label="Detail">${detailOf(e.detail)}</td></tr>`,
      )}</tbody></table>`;
}

export function keysPage(chrome: Chrome, keys: AdminKey[]) {
  return frame(
    chrome,
    html`<h1>Signing keys</h1>
<p class="muted">The signing key signs every new token; published keys still verify the tokens they signed. Rotate, wait
until no token the old key signed can still be valid (the longest access-token lifetime of the deployment, OAuth2
clients' included), then delete it. After a leak, tick "now" to end its tokens at once.</p>
<p class="muted">EdDSA (Ed25519) signs in a fraction of RS256's CPU and Hasura's JWT mode accepts it; tokens of the
previous algorithm keep verifying with their own key. ID tokens of the OAuth2 server stay RS256.</p>
<div class="actions">${action(
      chrome,
      "/keys/rotate",
      "Rotate: create a new signing key",
      "primary",
      html`<label>Algorithm <select name="alg">${SIGNING_ALGORITHMS.map(
        (alg) =>
          html`<option value="${alg}"${alg === keys.find((key) => key.status === "signing")?.alg ? " selected" : ""}>${alg}</option>`,
      )}</select></label> `,
    )}</div>
<table class="cards"><thead><tr><th>Key id</th><th>Algorithm</th><th>Status</th><th>Source</th><th>Created</th><th></th></tr></thead><tbody>${keys.map(
      (key) =>
        html`<tr><td data-label="Key id"><code>${key.kid}</code></td><td data-label="Algorithm">${key.alg}${key.signsIdTokens && key.status !== "signing" ? html` <span class="badge">ID tokens</span>` : ""}</td><td data-label="Status">${key.status === "signing" ? html`<span class="badge on">signing</span>` : html`<span class="badge">published</span>`}</td><td data-label="Source">${key.source === "config" ? "AUTH_JWT_PRIVATE_KEYS" : "rotated here"}</td><td data-label="Created">${when(key.createdAt)}</td><td>${
          key.status === "published" && key.source === "admin" && !key.signsIdTokens
            ? action(
                chrome,
                `/keys/${key.kid}/delete`,
                "Delete",
                "danger",
                html`<label><input type="checkbox" name="force" value="yes"> now</label> `,
              )
            : ""
        }</td></tr>`,
    )}</tbody></table>`,
  );
}

/** Who is signed in to the console: each session can be ended here, at once (its cookie stops working). */
export function consoleSessionsPage(chrome: Chrome, sessions: ConsoleSessionRow[], current: string) {
  return frame(
    chrome,
    html`<h1>Console sessions</h1>
<p class="muted">Every sign-in to this console, for eight hours at most. Ending one signs that browser out at once.</p>
<div class="actions">${action(chrome, "/sessions/end-others", "End every other session", "danger")}</div>
<table><thead><tr><th>Signed in</th><th>Address</th><th>Browser</th><th></th></tr></thead><tbody>${sessions.map(
      (row) =>
        html`<tr><td>${when(new Date(row.createdAt).toISOString())}</td><td>${row.ip ?? "–"}</td><td>${row.userAgent ?? "–"}</td><td>${
          row.id === current
            ? html`<span class="badge on">this one</span>`
            : action(chrome, `/sessions/${row.id}/end`, "End", "danger")
        }</td></tr>`,
    )}</tbody></table>`,
  );
}
