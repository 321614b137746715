import { raw } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";

/**
 * The little Markdown the operation descriptions use (paragraphs, `- ` lists, `code`, **bold**, *emphasis*),
 * rendered after escaping everything: the descriptions are ours, but nothing in them can become markup.
 */
export function markdown(text: string): HtmlEscapedString {
  const blocks = text.split(/\n\s*\n/).map((block) => {
    const lines = block.split("\n").filter((line) => line.trim());
    if (lines.length > 0 && lines.every((line) => /^\s*- /.test(line))) {
      return `<ul>${lines.map((line) => `<li>${inline(line.replace(/^\s*- /, ""))}</li>`).join("")}</ul>`;
    }
    return `<p>${inline(lines.join(" "))}</p>`;
  });
  return raw(blocks.join(""));
}

/** One line of that Markdown, without a paragraph around it. */
export function inlineMarkdown(line: string): HtmlEscapedString {
  return raw(inline(line));
}

const inline = (line: string) =>
  escapeHtml(line)
    .replace(/`([^`]+)`/g, "<code>$1</code>")
    .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>")
    .replace(/(^|[\s(])\*([^*\s][^*]*)\*/g, "$1<em>$2</em>");

export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (char) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[char]!,
  );
}

type Schema = Record<string, unknown>;

/** A short type for a JSON Schema: `string (uuid)`, `"a" | "b"`, `User[]`, `object`. */
export function typeLabel(schema: unknown): string {
  const s = (schema ?? {}) as Schema;
  if (typeof s.$ref === "string") return s.$ref.split("/").pop()!;
  if ("const" in s) return JSON.stringify(s.const);
  if (Array.isArray(s.enum)) return s.enum.map((value) => JSON.stringify(value)).join(" | ");
  const choices = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (choices) return [...new Set(choices.map(typeLabel))].join(" | ");
  if (s.type === "array") return `${typeLabel(s.items)}[]`;
  if (Array.isArray(s.type)) return s.type.join(" | ");
  const format = typeof s.format === "string" ? ` (${s.format})` : "";
  return `${typeof s.type === "string" ? s.type : "any"}${format}`;
}

export interface FieldRow {
  name: string;
  type: string;
  required: boolean;
  description: string;
}

/** The fields of an object schema as rows, nested objects (and arrays of them) as `parent.child`, two levels deep. */
export function fieldRows(schema: unknown, prefix = "", depth = 0): FieldRow[] {
  const s = (schema ?? {}) as Schema;
  const choices = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  const object = choices?.find((choice) => choice.type === "object") ?? s;
  const properties = object.properties as Record<string, Schema> | undefined;
  if (!properties) return [];
  const required = new Set((object.required as string[] | undefined) ?? []);
  return Object.entries(properties).flatMap(([name, property]) => {
    const row: FieldRow = {
      name: `${prefix}${name}`,
      type: typeLabel(property),
      required: required.has(name),
      description: typeof property.description === "string" ? property.description : "",
    };
    if (depth >= 1) return [row];
    const inner = property.type === "array" ? (property.items as Schema | undefined) : property;
    const suffix = property.type === "array" ? "[]." : ".";
    return [row, ...fieldRows(inner, `${prefix}${name}${suffix}`, depth + 1)];
  });
}
