import { html } from "hono/html";
import type { MediaObject, Operation, Parameter, ResponseObject } from "./document";
import { fieldRows, inlineMarkdown, markdown, typeLabel } from "./reference-text";

/** One operation of the reference: what it does, what it takes, each answer with its schema and example, "try it". */

const SECURITY_WORDS: Record<string, string> = {
  bearer: "a session's access token (`Authorization: Bearer …`)",
  adminSecret: "the admin secret (`x-hasura-admin-secret`)",
  clientBasic: "an OAuth2 client's credentials (HTTP Basic, or in the form)",
  oauth2Token: "an access token issued to an OAuth2 client (`Authorization: Bearer …`)",
};

function securityLine(operation: Operation) {
  if (!operation.security?.length) return inlineMarkdown("No credentials.");
  const optional = operation.security.some((requirement) => Object.keys(requirement).length === 0);
  const schemes = operation.security.flatMap((requirement) => Object.keys(requirement));
  const words = schemes.map((scheme) => SECURITY_WORDS[scheme] ?? scheme).join(" or ");
  return inlineMarkdown(optional ? `Optional: ${words}.` : `Needs ${words}.`);
}

function fieldsTable(schema: unknown) {
  const rows = fieldRows(schema);
  if (rows.length === 0) return html`<p class="muted">Type <code>${typeLabel(schema)}</code></p>`;
  return html`<table class="fields"><tr><th>field</th><th>type</th><th></th><th></th></tr>${rows.map(
    (row) =>
      html`<tr><td><code>${row.name}</code></td><td><code>${row.type}</code></td><td>${
        row.required ? "required" : ""
      }</td><td>${row.description}</td></tr>`,
  )}</table>`;
}

function mediaBlock(type: string, media: MediaObject) {
  return html`<p class="media"><code>${type}</code></p>
${media.schema ? fieldsTable(media.schema) : ""}
${media.example !== undefined ? html`<p class="label">Example</p><pre>${JSON.stringify(media.example, null, 2)}</pre>` : ""}
${media.schema ? html`<details class="schema"><summary>JSON Schema</summary><pre>${JSON.stringify(media.schema, null, 2)}</pre></details>` : ""}`;
}

function parametersTable(parameters: Parameter[]) {
  return html`<h4>Parameters</h4><table class="fields"><tr><th>name</th><th>in</th><th>type</th><th></th><th></th></tr>${parameters.map(
    (p) =>
      html`<tr><td><code>${p.name}</code></td><td>${p.in}</td><td><code>${typeLabel(p.schema)}</code></td><td>${
        p.required ? "required" : ""
      }</td><td>${inlineMarkdown(p.description ?? "")}</td></tr>`,
  )}</table>`;
}

function answerBlock(status: string, answer: ResponseObject) {
  const media = Object.entries(answer.content ?? {});
  const isDefault = status === "default";
  return html`<div class="answer"><p><span class="status s${isDefault ? "e" : status.charAt(0)}">${isDefault ? "error" : status}</span> ${inlineMarkdown(
    isDefault ? "Any other status: the API's error body (see Errors)." : answer.description,
  )}</p>${isDefault ? "" : media.map(([type, m]) => mediaBlock(type, m))}${
    answer.headers?.Location
      ? html`<p class="muted">Header <code>Location</code>: where the browser goes next.</p>`
      : ""
  }</div>`;
}

/** The example body as the "try it" form shows it: JSON pretty-printed, a form as `a=b&c=d`. */
function exampleText(type: string, example: unknown): string {
  if (example === undefined) return "";
  if (type === "application/x-www-form-urlencoded" && example && typeof example === "object") {
    return new URLSearchParams(
      Object.entries(example).map(([key, value]) => [
        key,
        typeof value === "string" ? value : JSON.stringify(value),
      ]),
    ).toString();
  }
  return JSON.stringify(example, null, 2);
}

function tryIt(method: string, path: string, operation: Operation) {
  const body = operation.requestBody && Object.entries(operation.requestBody.content)[0];
  const multipartFields = body?.[0] === "multipart/form-data" ? fieldRows(body[1].schema) : [];
  return html`<form class="try" data-method="${method.toUpperCase()}" data-path="${path}" data-type="${body?.[0] ?? ""}">
<p class="label">Try it</p>
${(operation.parameters ?? []).map(
  (p) =>
    html`<label>${p.name} <small>${p.in}</small> <input name="${p.in}:${p.name}" ${p.required ? "required" : ""}></label>`,
)}
${
  body && body[0] !== "multipart/form-data"
    ? html`<label class="wide">Body <small>${body[0]}</small><textarea name="body" rows="6" spellcheck="false">${exampleText(
        body[0],
        body[1].example,
      )}</textarea></label>`
    : ""
}
${multipartFields.map((field) =>
  field.type.includes("binary")
    ? html`<label>${field.name} <input type="file" name="part:${field.name}" multiple></label>`
    : html`<label>${field.name} <input name="part:${field.name}"></label>`,
)}
<button type="submit">Send ${method.toUpperCase()}</button>
<output hidden></output>
</form>`;
}

export function operationBlock(method: string, path: string, operation: Operation) {
  return html`<details id="${operation.operationId}" class="operation" data-search="${`${method} ${path} ${operation.summary} ${operation.description}`.toLowerCase()}">
<summary><span class="method ${method}">${method.toUpperCase()}</span> <code>${path}</code> <span class="summary">${operation.summary}</span></summary>
<div class="body">
${markdown(operation.description)}
<p class="security">${securityLine(operation)}</p>
${operation.parameters?.length ? parametersTable(operation.parameters) : ""}
${
  operation.requestBody
    ? html`<h4>Request body</h4>${Object.entries(operation.requestBody.content).map(([type, media]) => mediaBlock(type, media))}`
    : ""
}
<h4>Answers</h4>
${Object.entries(operation.responses).map(([status, answer]) => answerBlock(status, answer))}
${tryIt(method, path, operation)}
</div>
</details>`;
}
