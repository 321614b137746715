import { html } from "hono/html";
import type { WireClient } from "../../oauth2";
import { type Chrome, frame } from "./pages";

/**
 * A client's RFC 9396 authorization details types in the console: what each type is called, the JSON Schema its
 * fields must match and the template the consent and approval pages show it with; edited as the admin API's
 * `authorizationDetailsTypes` (JSON), checked by the same rules.
 */

const EXAMPLE = [
  {
    type: "payment_initiation",
    schema: {
      type: "object",
      required: ["instructedAmount", "creditorName"],
      properties: {
        instructedAmount: {
          type: "object",
          required: ["currency", "amount"],
          properties: { currency: { enum: ["EUR", "USD"] }, amount: { type: "string", maxLength: 20 } },
        },
        creditorName: { type: "string", maxLength: 140 },
      },
    },
    template: { en: "Pay {{instructedAmount.amount}} {{instructedAmount.currency}} to {{creditorName}}" },
  },
];

const templates = (template: WireClient["authorizationDetailsTypes"][number]["template"]) =>
  typeof template === "string"
    ? html`<p>${template}</p>`
    : html`<dl>${Object.entries(template).map(([language, text]) => html`<dt>${language}</dt><dd>${text}</dd>`)}</dl>`;

export function clientDetailTypesPage(
  chrome: Chrome,
  client: WireClient,
  options: { error?: string; text?: string } = {},
) {
  const path = `/clients/${encodeURIComponent(client.clientId)}`;
  const types = client.authorizationDetailsTypes;
  const text = options.text ?? JSON.stringify(types.length > 0 ? types : [], null, 2);
  return frame(
    chrome,
    html`<p><a href="${chrome.base}${path}">← ${client.clientName}</a></p>
<h1>Authorization details types</h1>
<p>The kinds of RFC 9396 <code>authorization_details</code> this client may ask for (a payment, a document, an
account). A request with another type, or with fields its schema does not allow, is refused with
<code>invalid_authorization_details</code>; the person sees each detail on the consent page through its template,
and every field the template leaves out by name.</p>
${
  types.length === 0
    ? html`<p class="muted">None: this client may not ask for authorization details.</p>`
    : html`<table><thead><tr><th>Type</th><th>Template</th><th>Fields</th></tr></thead><tbody>${types.map(
        (entry) =>
          html`<tr><td><code>${entry.type}</code></td><td>${templates(entry.template)}</td><td>${Object.keys(
            (entry.schema.properties as Record<string, unknown> | undefined) ?? {},
          ).join(", ")}</td></tr>`,
      )}</tbody></table>`
}
<h2>Edit</h2>
<p>A JSON list of <code>{"type", "schema", "template"}</code>, as the admin API's <code>authorizationDetailsTypes</code>;
<code>[]</code> for none.</p>
${options.error ? html`<p class="error" role="alert">${options.error}</p>` : ""}
<form method="post" action="${chrome.base}${path}/authorization-details" class="edit wide">
  <input type="hidden" name="csrf" value="${chrome.csrf}">
  <label>Types, as JSON <textarea class="code" name="types" rows="16" spellcheck="false">${text}</textarea></label>
  <button class="primary" type="submit">Save</button>
</form>
<h2>How to write a type</h2>
<ul>
<li><code>type</code>: the name clients send, at most 128 characters.</li>
<li><code>schema</code>: JSON Schema 2020-12 for the detail's fields (all but <code>type</code>), an object at the
root. Keywords: <code>type</code>, <code>properties</code>, <code>required</code>, <code>additionalProperties</code>,
<code>items</code>, <code>enum</code>, <code>const</code>, lengths, sizes, bounds, <code>format</code>,
<code>allOf</code>/<code>anyOf</code>/<code>oneOf</code>/<code>not</code>. No <code>$ref</code> and no
<code>pattern</code>: use <code>enum</code>, <code>format</code> and <code>maxLength</code>.</li>
<li><code>template</code>: the sentence the person reads, with <code>{{ field }}</code> or
<code>{{ field.member }}</code> for values; one text, or one per language (<code>en</code>, <code>de</code>,
<code>fr</code>, <code>es</code>, <code>pt</code>, <code>ja</code>).</li>
</ul>
<form class="edit wide"><label>An example (to copy from) <textarea class="code" readonly rows="12" spellcheck="false">${JSON.stringify(EXAMPLE, null, 2)}</textarea></label></form>`,
  );
}
