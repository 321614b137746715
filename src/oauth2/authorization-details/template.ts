/**
 * Display templates: text with `{{ field }}` or `{{ field.member }}` placeholders for a detail's values. Parsed, never
 * evaluated: a placeholder names a path of member names (or array indexes) and nothing else, looked up among the
 * detail's own members only.
 */

export type TemplatePart = { text: string } | { path: string[] };

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;
const PATH = /^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)*$/;

export function parseTemplate(template: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let last = 0;
  for (const match of template.matchAll(PLACEHOLDER)) {
    if (match.index > last) parts.push({ text: template.slice(last, match.index) });
    parts.push({ path: (match[1] ?? "").split(".") });
    last = match.index + match[0].length;
  }
  if (last < template.length) parts.push({ text: template.slice(last) });
  return parts;
}

/** What is wrong with a template, or null: every `{{ … }}` must name a path, and braces must pair. */
export function templateProblem(template: string): string | null {
  for (const match of template.matchAll(PLACEHOLDER)) {
    if (!PATH.test(match[1] ?? ""))
      return `the placeholder ${match[0]} does not name a field (use {{ name.member }})`;
  }
  const rest = template.replace(PLACEHOLDER, "");
  if (rest.includes("{{") || rest.includes("}}")) return "a placeholder is not closed ({{ name }})";
  return null;
}

/** The value at `path` among the detail's own members; undefined when there is none. */
export function valueAt(value: unknown, path: string[]): unknown {
  let current = value;
  for (const key of path) {
    if (current === null || typeof current !== "object" || !Object.hasOwn(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}
