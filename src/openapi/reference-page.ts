import { html, raw } from "hono/html";
import { compareTags, type OpenApiDocument, type Operation } from "./document";
import { operationBlock } from "./reference-operation";
import { REFERENCE_SCRIPT } from "./reference-script";
import { markdown } from "./reference-text";

const STYLE = `
  :root { color-scheme: light dark; font-family: system-ui, sans-serif; --line: #8884; --soft: #8881; --muted: #595959; }
  @media (prefers-color-scheme: dark) { :root { --muted: #b3b3b3; } }
  body { margin: 0 auto; max-width: 72rem; padding: 1.5rem 1rem 4rem; line-height: 1.45; }
  header { position: sticky; top: 0; background: Canvas; padding: .5rem 0; border-bottom: 1px solid var(--line); z-index: 1; }
  nav { display: flex; flex-wrap: wrap; gap: .1rem .8rem; }
  nav a { white-space: nowrap; }
  #search-form { display: flex; gap: .5rem; margin: .4rem 0; }
  #search { flex: 1; font: inherit; padding: .35rem .6rem; }
  fieldset { border: 1px solid var(--line); border-radius: 8px; display: flex; gap: 1rem; flex-wrap: wrap; }
  fieldset label { flex: 1; min-width: 16rem; }
  fieldset input { width: 100%; box-sizing: border-box; font-family: ui-monospace, monospace; }
  h2 { margin-top: 2.2rem; border-bottom: 1px solid var(--line); padding-bottom: .3rem; text-transform: capitalize; }
  h4 { margin: 1rem 0 .3rem; }
  details.operation { border: 1px solid var(--line); border-radius: 8px; margin: .5rem 0; padding: .4rem .8rem; }
  details.operation > summary { cursor: pointer; }
  /* A long path (…/deliveries/{deliveryId}/redeliver) breaks anywhere on a phone rather than widen the page. No
     child combinator: this text is HTML-escaped into the page (">" arrives as "&gt;", which CSS does not read). */
  details.operation summary code { overflow-wrap: anywhere; }
  .summary { margin-left: .6rem; color: var(--muted); }
  .method { display: inline-block; min-width: 4.2rem; font-weight: 700; font-family: ui-monospace, monospace; }
  .get { color: #1a7f37; } .post { color: #2457d6; } .put, .patch { color: #9a6700; } .delete { color: #cf222e; }
  .status { font-family: ui-monospace, monospace; font-weight: 700; padding: 0 .4rem; border-radius: 4px; background: var(--soft); }
  .s2 { color: #1a7f37; } .s3 { color: #2457d6; } .s4, .se { color: #cf222e; }
  .answer { border-left: 3px solid var(--line); padding-left: .8rem; margin: .6rem 0; }
  .answer > p:first-child { display: flex; gap: .5rem; align-items: baseline; margin-bottom: .2rem; }
  .answer > p:first-child p { margin: 0; }
  pre, output { display: block; overflow-x: auto; font-size: .85rem; background: var(--soft); padding: .6rem; border-radius: 6px; white-space: pre-wrap; }
  table { border-collapse: collapse; margin: .3rem 0; } td, th { text-align: left; padding: .2rem .8rem .2rem 0; vertical-align: top; }
  table.fields td:nth-child(2) code { color: var(--muted); }
  .label, .media { margin: .5rem 0 .2rem; font-weight: 600; }
  form.try { border-top: 1px dashed var(--line); margin-top: 1rem; padding-top: .5rem; display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: end; }
  form.try .label, form.try output, form.try .wide { flex-basis: 100%; }
  form.try textarea { width: 100%; box-sizing: border-box; font-family: ui-monospace, monospace; }
  .muted { color: var(--muted); }
  /* A phone (390 px): an opened operation's tables (names, where, types and a sentence) fit the width rather than
     widen the page: the long names (a header, a dotted field) and the codes of the sentence break anywhere; the
     short columns keep their words whole. */
  @media (max-width: 640px) {
    table.fields { width: 100%; }
    table.fields td:first-child code, table.fields td:last-child code { overflow-wrap: anywhere; }
    td, th { padding-right: .5rem; }
  }
`;

export interface ReferenceInput {
  nonce: string;
  doc: OpenApiDocument;
  documentUrl: string;
  /** The error schema (one alternative per code), for the errors table. */
  errors?: unknown;
  /** The search the page was asked for (`?q=`): only matching operations are rendered. */
  query?: string;
}

function matches(words: string[], method: string, path: string, operation: Operation) {
  const text = `${method} ${path} ${operation.summary} ${operation.description}`.toLowerCase();
  return words.every((word) => text.includes(word));
}

/**
 * The API reference, rendered on the server from the OpenAPI document: operations grouped by their first path
 * segment, each with its description, parameters, request body, every answer with its schema and example, and a
 * "try it" form; a search box; the error codes. Its one script is its own, inline under the CSP nonce; no third-party
 * origin, no build step. The document itself is linked for tools (code generators, other reference UIs).
 */
export function referencePage({ nonce, doc, documentUrl, errors, query = "" }: ReferenceInput) {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const byTag = new Map<string, [string, string, Operation][]>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!matches(words, method, path, operation)) continue;
      const tag = operation.tags[0] ?? "other";
      byTag.set(tag, [...(byTag.get(tag) ?? []), [method, path, operation]]);
    }
  }
  const tags = [...byTag.keys()].sort(compareTags);
  const codes = (
    errors as { oneOf?: { title: string; description: string; properties: { status: { const: number } } }[] }
  )?.oneOf;
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${doc.info.title} reference</title><style nonce="${nonce}">${STYLE}</style></head>
<body>
<h1>${doc.info.title} <span class="muted">${doc.info.version}</span></h1>
${markdown(doc.info.description)}
<p>Base URL <code>${doc.servers[0]?.url ?? ""}</code> · OpenAPI 3.1 document: <a href="${documentUrl}">${documentUrl}</a></p>
<fieldset><legend>Credentials for "try it" (kept in this page only)</legend>
<label>Access token or Authorization header <input id="authorization" autocomplete="off" placeholder="eyJhbGciOi… or Basic …"></label>
<label>Admin secret <input id="admin-secret" type="password" autocomplete="off"></label>
</fieldset>
<header>
<form id="search-form" method="get" role="search"><input id="search" name="q" type="search" value="${query}" placeholder="Search operations: path, method, words" aria-label="Search operations"><button type="submit">Search</button></form>
<nav>${tags.map((tag) => html`<a href="#tag-${tag}">${tag}</a>`)}${codes ? html`<a href="#errors">errors</a>` : ""}</nav>
</header>
${words.length > 0 && tags.length === 0 ? html`<p>No operation matches <code>${query}</code>.</p>` : ""}
${tags.map(
  (tag) => html`<section class="tag"><h2 id="tag-${tag}">${tag}</h2>
${(byTag.get(tag) ?? []).map(([method, path, operation]) => operationBlock(method, path, operation))}</section>`,
)}
${
  codes
    ? html`<h2 id="errors">Errors</h2>
<p>Every error answer is <code>{"status", "message", "error"}</code>; <code>error</code> is one of these codes.</p>
<table><tr><th>status</th><th>error</th><th>message</th></tr>${codes.map(
        (code) =>
          html`<tr><td>${code.properties.status.const}</td><td><code>${code.title}</code></td><td>${code.description}</td></tr>`,
      )}</table>`
    : ""
}
<script nonce="${nonce}">${raw(REFERENCE_SCRIPT)}</script>
</body></html>`;
}
