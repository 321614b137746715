import { html } from "hono/html";
import type { ImpersonationRow } from "../../db/schema";
import { action, type Chrome, frame, when } from "./pages";

/**
 * Impersonation on a user's console page (contract operators.md §1): the form that starts one (who you are, why, for
 * how long: the reason is audited and mailed to the user), the user's impersonations with an "End" for each one
 * running, and the page that hands over the one-time link.
 */

const iso = (ms: number) => new Date(ms).toISOString();

const LIFETIMES: [number, string][] = [
  [900, "15 minutes"],
  [3600, "1 hour"],
  [4 * 3600, "4 hours"],
  [8 * 3600, "8 hours"],
];

/** The section on the user's page; `enabled`: `AUTH_IMPERSONATION_ENABLED`. */
export function impersonationSection(
  chrome: Chrome,
  userId: string,
  rows: ImpersonationRow[],
  enabled: boolean,
  now: number,
  error?: string,
) {
  const running = (row: ImpersonationRow) => row.endedAt === null && row.endsAt > now;
  const form = enabled
    ? html`<form method="post" action="${chrome.base}/users/${userId}/impersonate" class="edit">
<input type="hidden" name="csrf" value="${chrome.csrf}">
<label>Your name <input name="actor" required maxlength="200" autocomplete="name"></label>
<label>Reason (audited, and mailed to the user) <textarea name="reason" required maxlength="500" rows="2"></textarea></label>
<label>For <select name="expiresIn">${LIFETIMES.map(([seconds, label]) => html`<option value="${seconds}" ${seconds === 3600 ? "selected" : ""}>${label}</option>`)}</select></label>
<button class="primary" type="submit">Impersonate</button>
</form>`
    : html`<p class="muted">Impersonation is off (AUTH_IMPERSONATION_ENABLED).</p>`;
  return html`<h2 id="impersonation">Impersonation</h2>
${error ? html`<p class="error" role="alert">${error}</p>` : ""}
${form}
${
  rows.length === 0
    ? html`<p class="muted">Nobody has impersonated this user.</p>`
    : html`<table><thead><tr><th>Who</th><th>Reason</th><th>Started (UTC)</th><th>Ends (UTC)</th><th></th></tr></thead><tbody>${rows.map(
        (row) =>
          html`<tr><td>${row.actor}${row.caller ? html` <span class="muted">via ${row.caller}</span>` : ""}</td><td>${row.reason}</td><td>${when(iso(row.startedAt))}</td><td>${when(iso(row.endedAt ?? row.endsAt))}</td><td>${
            running(row)
              ? action(chrome, `/impersonations/${encodeURIComponent(row.id)}/end`, "End", "danger")
              : html`<span class="badge off">${row.endedHow ?? "ended"}</span>`
          }</td></tr>`,
      )}</tbody></table>`
}`;
}

/** After a start: the one-time link (60 s), never the tokens. */
export function startedPage(chrome: Chrome, userId: string, url: string, endsAt: number) {
  return frame(
    chrome,
    html`<h1>Impersonation started</h1>
<p>Open this link within a minute, once: it signs the app in as the user, with a banner naming you. The session ends at ${when(iso(endsAt))} UTC, or when you end it on the user's page.</p>
<p><a href="${url}" rel="noreferrer" target="_blank">Open the app as the user</a></p>
<p><a href="${chrome.base}/users/${encodeURIComponent(userId)}#impersonation">← Back to the user</a></p>`,
  );
}
