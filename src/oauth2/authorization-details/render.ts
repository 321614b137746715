import { html } from "hono/html";
import type { AuthorizationDetail } from "./parse";
import { parseTemplate, valueAt } from "./template";
import type { ClientWithDetailTypes } from "./types-config";
import { typeConfigOf } from "./validate";

/**
 * Authorization details as a person reads them on the consent page and the CIBA approval page: each detail through
 * its type's template, then every field the template does not show in full, by name, so that nothing granted goes
 * unseen. Values are text: escaped by `html`, and with controls and invisible formatting characters (a bidi override
 * turning "100" into "001") written out as `\u{…}`.
 */

export interface ShownDetail {
  type: string;
  /** The template's text and values, in order. */
  parts: ({ text: string } | { value: string })[];
  /** Fields the template leaves out, or shows only in part. */
  rest: { name: string; value: string }[];
}

const INVISIBLE = /[\p{Cc}\p{Cf}\u2028\u2029]/gu;
const visible = (text: string) =>
  text.replace(INVISIBLE, (char) => `\\u{${(char.codePointAt(0) ?? 0).toString(16).toUpperCase()}}`);

/** A value as one line of text: strings as they are, arrays joined with commas, objects as `name: value` pairs. */
export function displayValue(value: unknown): string {
  if (value === undefined) return "—";
  if (typeof value === "string") return visible(value);
  if (Array.isArray(value)) return value.map(displayValue).join(", ");
  if (value !== null && typeof value === "object") {
    const members = Object.entries(value).map(([name, member]) => {
      const shown = displayValue(member);
      return `${visible(name)}: ${member !== null && typeof member === "object" ? `(${shown})` : shown}`;
    });
    return members.join(", ");
  }
  return String(value);
}

function templateFor(template: string | Partial<Record<string, string>>, language: string): string {
  if (typeof template === "string") return template;
  return template[language] ?? template.en ?? Object.values(template).find(Boolean) ?? "";
}

/** Whether the placeholders' paths show all of `value` (at `path`): it or each of its members is named. */
function shownInFull(value: unknown, path: string[], shown: string[][]): boolean {
  if (shown.some((named) => named.length <= path.length && named.every((key, i) => key === path[i])))
    return true;
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  return Object.entries(value).every(([key, member]) => shownInFull(member, [...path, key], shown));
}

export function describeAuthorizationDetail(
  client: ClientWithDetailTypes,
  detail: AuthorizationDetail,
  /** The page's language (`en`, `de`, …): the template in it, else the English one, else any. */
  language: string,
): ShownDetail {
  const config = typeConfigOf(client, detail.type);
  const template = config ? parseTemplate(templateFor(config.template, language)) : [];
  const parts = template.map((part) =>
    "text" in part ? { text: part.text } : { value: displayValue(valueAt(detail, part.path)) },
  );
  const shown = template.flatMap((part) => ("path" in part ? [part.path] : []));
  const rest = Object.entries(detail)
    .filter(([name, value]) => name !== "type" && !shownInFull(value, [name], shown))
    .map(([name, value]) => ({ name: visible(name), value: displayValue(value) }));
  return { type: visible(detail.type), parts, rest };
}

/**
 * The details as HTML for the hosted pages (`class="authorization-details"`): one list item per detail, its template
 * with the values in bold, the rest as a description list. Under the page's own heading.
 */
export function authorizationDetailsHtml(
  client: ClientWithDetailTypes,
  details: AuthorizationDetail[],
  language: string,
) {
  const items = details.map((detail) => describeAuthorizationDetail(client, detail, language));
  return html`<ul class="authorization-details">${items.map(
    (item) =>
      html`<li data-type="${item.type}">${
        item.parts.length > 0
          ? html`<p>${item.parts.map((part) => ("text" in part ? part.text : html`<strong>${part.value}</strong>`))}</p>`
          : html`<p><strong>${item.type}</strong></p>`
      }${
        item.rest.length > 0
          ? html`<dl>${item.rest.map((field) => html`<dt>${field.name}</dt><dd>${field.value}</dd>`)}</dl>`
          : ""
      }</li>`,
  )}</ul>`;
}
