/**
 * The bounds of RFC 9396 `authorization_details` and of the schemas an admin sets for them. A request's value and an
 * admin's schema are parsed and walked before anything else looks at them, so that neither can spend the Worker's
 * memory or CPU (a deep or wide JSON document, a schema whose validation multiplies): what passes these bounds is
 * small enough for every later step (schema validation, narrowing, rendering) to be linear in practice.
 */
export const LIMITS = {
  /** Characters of the `authorization_details` parameter as sent (JSON text). */
  requestChars: 8192,
  /** Objects in one request's array (RFC 9396 §2: an array of authorization details). */
  details: 10,
  /** Nesting of arrays and objects inside one detail. */
  depth: 8,
  /** Members of one object, elements of one array, characters of one string or member name. */
  members: 50,
  items: 100,
  stringChars: 1000,
  /** Types one client may use, and characters of a type's name (RFC 9396 §2: a string the AS defines). */
  types: 20,
  typeChars: 128,
  /** Characters of one admin schema (JSON text) and its nesting of subschemas. */
  schemaChars: 16_384,
  schemaDepth: 12,
  /** Characters of one display template. */
  templateChars: 2000,
} as const;

/**
 * What is wrong with the shape of a parsed JSON value under LIMITS (too deep, too wide, a string too long), or null.
 * It never walks deeper than `depth` levels, so a value nested thousands deep costs no more than one nested `depth`.
 */
export function shapeProblem(value: unknown, depth: number = LIMITS.depth): string | null {
  if (typeof value === "string") return value.length > LIMITS.stringChars ? "a string is too long" : null;
  if (value === null || typeof value !== "object") return null;
  if (depth === 0) return "it is nested too deeply";
  const children = Array.isArray(value) ? value : Object.keys(value);
  if (Array.isArray(value) ? value.length > LIMITS.items : children.length > LIMITS.members)
    return Array.isArray(value) ? "an array has too many elements" : "an object has too many members";
  for (const [key, child] of Object.entries(value)) {
    if (!Array.isArray(value) && key.length > LIMITS.stringChars) return "a member name is too long";
    const problem = shapeProblem(child, depth - 1);
    if (problem) return problem;
  }
  return null;
}
