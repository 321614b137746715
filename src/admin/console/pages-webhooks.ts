import { html } from "hono/html";
import { EVENT_TYPES } from "../../events/types";
import type { WireDelivery, WireEndpoint } from "../../webhooks";
import type { WireDeadLetter } from "../dead-letters";
import { action, type Chrome, frame, when } from "./pages";

/** Webhooks in the console: endpoints (create, edit, delete), an endpoint's deliveries, the dead letters. */

const endpointPath = (id: string) => `/webhooks/${encodeURIComponent(id)}`;

function eventFields(endpoint?: WireEndpoint) {
  const chosen = endpoint?.events ?? [];
  return html`<fieldset><legend>Events (none ticked: every type)</legend>${EVENT_TYPES.map(
    (type) =>
      html`<label class="check"><input type="checkbox" name="events" value="${type}" ${chosen.includes(type) ? "checked" : ""}> ${type}</label>`,
  )}</fieldset>`;
}

function endpointFields(endpoint?: WireEndpoint) {
  return html`<label>URL (https) <input name="url" type="url" required maxlength="2048" spellcheck="false" value="${endpoint?.url ?? ""}"></label>
  <label>Description <input name="description" maxlength="500" value="${endpoint?.description ?? ""}"></label>
  ${eventFields(endpoint)}`;
}

const statusBadge = (endpoint: WireEndpoint) =>
  endpoint.disabled
    ? html`<span class="badge off">disabled</span>`
    : html`<span class="badge on">enabled</span>`;

const eventsText = (endpoint: WireEndpoint) =>
  endpoint.events.length === 0 ? "every type" : endpoint.events.join(", ");

/** The one time a secret is shown: on the page that answers the creation. */
const secretBox = (secret?: string) =>
  secret
    ? html`<div class="notice" role="status"><p><strong>The signing secret, shown this once:</strong></p><p><code class="secret">${secret}</code></p><p>Give it to the receiver now (it verifies each delivery with it, docs/webhooks.md); it is not shown again.</p></div>`
    : "";

const errorBox = (error?: string) => (error ? html`<p class="error" role="alert">${error}</p>` : "");

export function webhooksPage(
  chrome: Chrome,
  endpoints: WireEndpoint[],
  deadLetterCount: number,
  options: { error?: string } = {},
) {
  return frame(
    chrome,
    html`<h1>Webhooks</h1>
<p class="muted">Every change to a user, a session or a file is posted to each endpoint subscribed to its type, signed
per Standard Webhooks, retried for about 59 hours.</p>
${
  endpoints.length === 0
    ? html`<p class="muted">No endpoint yet.</p>`
    : html`<table><thead><tr><th>URL</th><th>Events</th><th>Description</th><th>Status</th><th>Created</th></tr></thead><tbody>${endpoints.map(
        (endpoint) =>
          html`<tr><td><a href="${chrome.base}${endpointPath(endpoint.id)}">${endpoint.url}</a></td><td>${eventsText(endpoint)}</td><td>${endpoint.description ?? "–"}</td><td>${statusBadge(endpoint)}</td><td>${when(endpoint.createdAt)}</td></tr>`,
      )}</tbody></table>`
}
<h2 id="create">Add an endpoint</h2>
${errorBox(options.error)}
<form method="post" action="${chrome.base}/webhooks/create" class="edit">
  <input type="hidden" name="csrf" value="${chrome.csrf}">
  ${endpointFields()}
  <button class="primary" type="submit">Add endpoint</button>
</form>
<h2 id="dead-letters">Dead letters</h2>
<p>${
      deadLetterCount === 0
        ? html`<span class="muted">None: nothing ran out of retries.</span>`
        : html`${deadLetterCount} event${deadLetterCount === 1 ? "" : "s"} or deliver${deadLetterCount === 1 ? "y" : "ies"} ran out of retries. <a href="${chrome.base}/dead-letters">Review and send again →</a>`
    }</p>`,
  );
}

const deliveryBadge = (status: WireDelivery["status"]) =>
  html`<span class="badge ${status === "delivered" ? "on" : status === "failed" ? "off" : ""}">${status}</span>`;

function deliveriesTable(chrome: Chrome, endpoint: WireEndpoint, deliveries: WireDelivery[]) {
  if (deliveries.length === 0) return html`<p class="muted">No delivery.</p>`;
  return html`<table class="cards"><thead><tr><th>Created</th><th>Event</th><th>Status</th><th>Attempts</th><th>Last answer</th><th></th></tr></thead><tbody>${deliveries.map(
    (delivery) =>
      html`<tr><td data-label="Created">${when(delivery.createdAt)}</td><td data-label="Event">${delivery.eventType}<br><code>${delivery.eventId}</code></td><td data-label="Status">${deliveryBadge(delivery.status)}</td><td data-label="Attempts">${delivery.attempts}${delivery.lastAttemptAt ? html`<br><span class="muted">last ${when(delivery.lastAttemptAt)}</span>` : ""}</td><td data-label="Last answer">${
        delivery.lastStatus === null && delivery.lastResponse === null
          ? "–"
          : html`${delivery.lastStatus ?? "no answer"} <span class="muted">${(delivery.lastResponse ?? "").slice(0, 120)}</span>`
      }</td><td>${action(
        chrome,
        `${endpointPath(endpoint.id)}/deliveries/${encodeURIComponent(delivery.id)}/redeliver`,
        delivery.status === "delivered" ? "Send again" : "Redeliver",
      )}</td></tr>`,
  )}</tbody></table>`;
}

export function webhookPage(
  chrome: Chrome,
  endpoint: WireEndpoint,
  deliveries: { items: WireDelivery[]; nextCursor: string | null; status?: string },
  options: { secret?: string; error?: string } = {},
) {
  const path = endpointPath(endpoint.id);
  const filter = deliveries.status ? `&status=${encodeURIComponent(deliveries.status)}` : "";
  return frame(
    chrome,
    html`<p><a href="${chrome.base}/webhooks">← Webhooks</a></p>
<h1>${endpoint.description ?? "Webhook endpoint"} ${statusBadge(endpoint)}</h1>
${secretBox(options.secret)}
<dl><dt>URL</dt><dd><code>${endpoint.url}</code></dd><dt>Events</dt><dd>${eventsText(endpoint)}</dd>
<dt>Id</dt><dd><code>${endpoint.id}</code></dd><dt>Created</dt><dd>${when(endpoint.createdAt)}</dd></dl>
<div class="actions">${
      endpoint.disabled
        ? action(chrome, `${path}/enable`, "Enable")
        : action(chrome, `${path}/disable`, "Disable (no new deliveries)")
    }${action(
      chrome,
      `${path}/delete`,
      "Delete endpoint",
      "danger",
      html`<label><input type="checkbox" name="confirm" value="yes" required> I mean it </label>`,
    )}</div>
<h2>Deliveries</h2>
<form method="get" action="${chrome.base}${path}" class="filters"><label>Status <select name="status">${[
      ["", "any"],
      ["pending", "pending"],
      ["delivered", "delivered"],
      ["failed", "failed"],
    ].map(
      ([value, label]) =>
        html`<option value="${value}" ${(deliveries.status ?? "") === value ? "selected" : ""}>${label}</option>`,
    )}</select></label><button type="submit">Show</button></form>
${deliveriesTable(chrome, endpoint, deliveries.items)}
${deliveries.nextCursor ? html`<p><a href="?cursor=${encodeURIComponent(deliveries.nextCursor)}${filter}">Older →</a></p>` : ""}
<h2>Edit</h2>
${errorBox(options.error)}
<form method="post" action="${chrome.base}${path}/edit" class="edit">
  <input type="hidden" name="csrf" value="${chrome.csrf}">
  ${endpointFields(endpoint)}
  <button class="primary" type="submit">Save</button>
</form>`,
  );
}

export function deadLettersPage(chrome: Chrome, letters: WireDeadLetter[], nextCursor: string | null) {
  return frame(
    chrome,
    html`<p><a href="${chrome.base}/webhooks">← Webhooks</a></p>
<h1>Dead letters</h1>
<p class="muted">Events and webhook deliveries that ran out of retries. Sent again, each goes back to the queue it failed
on with a fresh set of retries, and leaves this list.</p>
${
  letters.length === 0
    ? html`<p class="muted">No dead letter.</p>`
    : html`<form method="post" action="${chrome.base}/dead-letters/redeliver">
<input type="hidden" name="csrf" value="${chrome.csrf}">
<table class="cards"><thead><tr><th>Pick</th><th>When</th><th>Queue</th><th>What</th><th>Attempts</th></tr></thead><tbody>${letters.map(
        (letter) =>
          html`<tr><td><input type="checkbox" name="ids" value="${letter.id}" aria-label="Pick ${letter.summary}"></td><td data-label="When">${when(letter.at)}</td><td data-label="Queue">${letter.queue}</td><td data-label="What">${letter.summary}</td><td data-label="Attempts">${letter.attempts}</td></tr>`,
      )}</tbody></table>
<div class="actions"><button class="primary" type="submit">Send the picked ones again</button></div>
</form>`
}
${nextCursor ? html`<p><a href="?cursor=${encodeURIComponent(nextCursor)}">Older →</a></p>` : ""}`,
  );
}
