import { html } from "hono/html";
import type { ConsoleChrome } from "../admin";
import type { Decision } from "./evaluate";
import type { Relationship } from "./store";

/**
 * Permissions in the console (contract platform.md §2: "edited, validated and tried in the console"): the schema and
 * the policy set in force with their versions, a form to validate or save each, a request to try against what is in
 * force, and the relationships of a resource. Texts are shown as sent back when refused, so nothing typed is lost.
 */

export interface DocumentView {
  text: string | null;
  version: number;
  versions: { version: number; createdAt: number }[];
}

/** What was typed in the "try" form, shown again with its answer. */
export interface TryForm {
  subject: string;
  action: string;
  resourceType: string;
  resourceId: string;
  properties: string;
  context: string;
}

export interface PermissionsView {
  schema: DocumentView;
  policies: DocumentView;
  /** A text sent back after a refusal or a validation, in place of the one in force. */
  draft?: { kind: "schema" | "policies"; text: string };
  /** Cedar's word on a text (refused, or validated without saving). */
  outcome?: { kind: "schema" | "policies" | "try" | "relationships"; error?: string; ok?: string };
  tried?: { form: TryForm; decision?: Decision };
  lookup?: { type: string; id: string; relationships: Relationship[] };
}

const EMPTY_TRY: TryForm = {
  subject: "",
  action: "",
  resourceType: "",
  resourceId: "",
  properties: "{}",
  context: "{}",
};

const hidden = (chrome: ConsoleChrome) => html`<input type="hidden" name="csrf" value="${chrome.csrf}">`;

function outcomeOf(view: PermissionsView, kind: NonNullable<PermissionsView["outcome"]>["kind"]) {
  const outcome = view.outcome?.kind === kind ? view.outcome : undefined;
  if (outcome?.error) return html`<pre class="error" role="alert">${outcome.error}</pre>`;
  if (outcome?.ok) return html`<p class="notice" role="status">${outcome.ok}</p>`;
  return "";
}

const stamp = (at: number) => new Date(at).toISOString().slice(0, 16).replace("T", " ");

function versionsOf(document: DocumentView) {
  if (document.versions.length === 0) return html`<p class="muted">None yet.</p>`;
  const earlier = document.versions.slice(1).map((v) => `${v.version} (${stamp(v.createdAt)})`);
  return html`<p class="muted">In force: version ${document.version}${earlier.length ? `; earlier: ${earlier.join(", ")}` : ""}.</p>`;
}

function documentSection(
  chrome: ConsoleChrome,
  view: PermissionsView,
  kind: "schema" | "policies",
  title: string,
  help: string,
) {
  const document = view[kind];
  const text = view.draft?.kind === kind ? view.draft.text : (document.text ?? "");
  return html`<h2 id="${kind}">${title}</h2>
<p class="muted">${help}</p>
${versionsOf(document)}
${outcomeOf(view, kind)}
<form method="post" action="${chrome.base}/permissions/${kind}" class="edit wide">${hidden(chrome)}
  <label>${title} (Cedar) <textarea class="code" name="text" rows="14" spellcheck="false" maxlength="262144">${text}</textarea></label>
  <div class="actions"><button type="submit" name="intent" value="validate">Validate</button><button type="submit" name="intent" value="save" class="primary">Save</button></div>
</form>`;
}

function trySection(chrome: ConsoleChrome, view: PermissionsView) {
  const form = view.tried?.form ?? EMPTY_TRY;
  const decision = view.tried?.decision;
  const answer = decision
    ? html`<p class="${decision.decision ? "notice" : "error"}" role="status"><strong>${decision.decision ? "Allowed" : "Denied"}</strong>${
        decision.reasons?.length ? html` by ${decision.reasons.join(", ")}` : ""
      }</p>`
    : "";
  return html`<h2 id="try">Try a request</h2>
<p class="muted">Asked as <code>POST /access/v1/evaluation</code> asks it, against the schema and policies in force
and the stored relationships. The subject is a user's id or email.</p>
${outcomeOf(view, "try")}${answer}
<form method="post" action="${chrome.base}/permissions/try" class="edit wide">${hidden(chrome)}
  <label>Subject (user id or email) <input name="subject" required maxlength="512" value="${form.subject}"></label>
  <label>Action <input name="action" required maxlength="256" value="${form.action}"></label>
  <label>Resource type <input name="resourceType" required maxlength="256" value="${form.resourceType}"></label>
  <label>Resource id <input name="resourceId" required maxlength="512" value="${form.resourceId}"></label>
  <label>Resource properties (JSON object) <textarea class="code" name="properties" rows="3" spellcheck="false" maxlength="65536">${form.properties}</textarea></label>
  <label>Context (JSON object) <textarea class="code" name="context" rows="3" spellcheck="false" maxlength="65536">${form.context}</textarea></label>
  <div class="actions"><button type="submit" class="primary">Try</button></div>
</form>`;
}

function relationshipRow(chrome: ConsoleChrome, tuple: Relationship) {
  const fields = html`${hidden(chrome)}<input type="hidden" name="resourceType" value="${tuple.resource.type}"><input type="hidden" name="resourceId" value="${tuple.resource.id}"><input type="hidden" name="relation" value="${tuple.relation}"><input type="hidden" name="subjectType" value="${tuple.subject.type}"><input type="hidden" name="subjectId" value="${tuple.subject.id}">`;
  return html`<tr><td><code>${tuple.relation}</code></td><td><code>${tuple.subject.type}::"${tuple.subject.id}"</code></td><td><form method="post" action="${chrome.base}/permissions/relationships/remove">${fields}<button type="submit" class="danger">Delete</button></form></td></tr>`;
}

function relationshipsSection(chrome: ConsoleChrome, view: PermissionsView) {
  const lookup = view.lookup;
  const list = lookup
    ? lookup.relationships.length === 0
      ? html`<p class="muted">No relationship on <code>${lookup.type}::"${lookup.id}"</code>.</p>`
      : html`<table><thead><tr><th>Relation</th><th>Subject</th><th></th></tr></thead><tbody>${lookup.relationships.map(
          (tuple) => relationshipRow(chrome, tuple),
        )}</tbody></table>`
    : "";
  return html`<h2 id="relationships">Relationships</h2>
<p class="muted">In a check, a resource's relationships are its attributes named by the relation, each a set of its
subjects: <code>principal in resource.editors</code>.</p>
${outcomeOf(view, "relationships")}
<form method="get" action="${chrome.base}/permissions#relationships" class="filters">
  <label>Resource type <input name="resourceType" required maxlength="256" value="${lookup?.type ?? ""}"></label>
  <label>Resource id <input name="resourceId" required maxlength="512" value="${lookup?.id ?? ""}"></label>
  <button type="submit">Show</button>
</form>
${list}
<h3>Add a relationship</h3>
<form method="post" action="${chrome.base}/permissions/relationships/add" class="edit">${hidden(chrome)}
  <label>Resource type <input name="resourceType" required maxlength="256" value="${lookup?.type ?? ""}"></label>
  <label>Resource id <input name="resourceId" required maxlength="512" value="${lookup?.id ?? ""}"></label>
  <label>Relation <input name="relation" required maxlength="64" placeholder="editors"></label>
  <label>Subject type <input name="subjectType" required maxlength="256" value="User"></label>
  <label>Subject id <input name="subjectId" required maxlength="512"></label>
  <div class="actions"><button type="submit" class="primary">Add the relationship</button></div>
</form>`;
}

export function permissionsPage(chrome: ConsoleChrome, view: PermissionsView) {
  return html`<h1>Permissions</h1>
<p class="muted">Cedar policies over the service's users, roles, organizations and stored relationships, asked
through the service binding's <code>check</code> and the AuthZEN API (docs/permissions.md).</p>
${documentSection(chrome, view, "schema", "Schema", "The entity types and actions the policies are validated against. A schema the policies in force fail is refused.")}
${documentSection(chrome, view, "policies", "Policy set", "The whole set, validated against the schema before it is saved; every version is kept.")}
${trySection(chrome, view)}
${relationshipsSection(chrome, view)}`;
}
