import { html } from "hono/html";
import type { OpenApiDocument, Operation } from "./document";

const STYLE = `
  :root { color-scheme: light dark; font-family: system-ui, sans-serif; }
  body { margin: 0 auto; max-width: 64rem; padding: 1.5rem 1rem 4rem; line-height: 1.45; }
  nav a { margin-right: .8rem; }
  h2 { margin-top: 2.2rem; border-bottom: 1px solid #8884; padding-bottom: .3rem; text-transform: capitalize; }
  details { border: 1px solid #8884; border-radius: 8px; margin: .5rem 0; padding: .4rem .8rem; }
  summary { cursor: pointer; font-family: ui-monospace, monospace; }
  .method { display: inline-block; min-width: 4.2rem; font-weight: 700; }
  .get { color: #1a7f37; } .post { color: #2457d6; } .put, .patch { color: #9a6700; } .delete { color: #cf222e; }
  pre { overflow-x: auto; font-size: .85rem; background: #8881; padding: .6rem; border-radius: 6px; }
  table { border-collapse: collapse; } td, th { text-align: left; padding: .2rem .8rem .2rem 0; }
  .muted { color: GrayText; }
`;

function operationBlock(method: string, path: string, operation: Operation) {
  const body = operation.requestBody && Object.entries(operation.requestBody.content)[0];
  return html`<details id="${operation.operationId}">
<summary><span class="method ${method}">${method.toUpperCase()}</span> ${path}</summary>
${
  operation.parameters?.length
    ? html`<p>Parameters</p><table><tr><th>name</th><th>in</th><th>required</th></tr>${operation.parameters.map(
        (p) =>
          html`<tr><td><code>${p.name}</code></td><td>${p.in}</td><td>${p.required ? "yes" : "no"}</td></tr>`,
      )}</table>`
    : ""
}
${body ? html`<p>Request body <code>${body[0]}</code></p><pre>${JSON.stringify(body[1].schema, null, 2)}</pre>` : ""}
</details>`;
}

/**
 * The API reference, rendered on the server from the OpenAPI document (no script, no build step, no third-party
 * origin): every operation grouped by its first path segment, with its parameters and request schema, and the error
 * codes. The document itself is linked for tools (Scalar, Swagger UI, code generators).
 */
export function referencePage(nonce: string, doc: OpenApiDocument, documentUrl: string, errors?: unknown) {
  const byTag = new Map<string, [string, string, Operation][]>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const tag = operation.tags[0] ?? "other";
      byTag.set(tag, [...(byTag.get(tag) ?? []), [method, path, operation]]);
    }
  }
  const tags = [...byTag.keys()].sort();
  const codes = (
    errors as { oneOf?: { title: string; description: string; properties: { status: { const: number } } }[] }
  )?.oneOf;
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${doc.info.title} reference</title><style nonce="${nonce}">${STYLE}</style></head>
<body>
<h1>${doc.info.title} <span class="muted">${doc.info.version}</span></h1>
<p>${doc.info.description}</p>
<p>Base URL <code>${doc.servers[0]?.url ?? ""}</code> · OpenAPI 3.1 document: <a href="${documentUrl}">${documentUrl}</a></p>
<nav>${tags.map((tag) => html`<a href="#tag-${tag}">${tag}</a>`)}${codes ? html`<a href="#errors">errors</a>` : ""}</nav>
${tags.map(
  (tag) => html`<h2 id="tag-${tag}">${tag}</h2>
${(byTag.get(tag) ?? []).map(([method, path, operation]) => operationBlock(method, path, operation))}`,
)}
${
  codes
    ? html`<h2 id="errors">Errors</h2><table><tr><th>status</th><th>error</th><th>message</th></tr>${codes.map(
        (code) =>
          html`<tr><td>${code.properties.status.const}</td><td><code>${code.title}</code></td><td>${code.description}</td></tr>`,
      )}</table>`
    : ""
}
</body></html>`;
}
