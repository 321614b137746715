import { type Filter, parse } from "scim2-parse-filter";
import { ScimError } from "./errors";

/**
 * SCIM filters (RFC 7644 §3.4.2.2), parsed by `scim2-parse-filter`, narrowed to what the IdPs send and what an index
 * answers: a conjunction (`and`) of `eq` terms on the resource's attributes, at least one of them on an attribute the
 * database can look up (`userName`, `externalId`, `id`, `emails[value eq …]` …). Anything else is 400 `invalidFilter`
 * rather than a scan of the whole organization.
 */

export interface Term {
  /** Lower-cased attribute path without the core schema's URN: `username`, `emails.value`, `members.value`. */
  path: string;
  value: string | boolean;
  /** Set on the terms of one value filter (`emails[type eq "work" and value eq "…"]`): they hold for one element. */
  within?: string;
}

export interface FilterSpec {
  /** Attributes an index answers, lower-cased. */
  indexed: readonly string[];
  /** Further attributes a term may test (in memory, on the candidates the indexed ones found). */
  tested: readonly string[];
  /** Attributes whose strings compare case-sensitively (RFC 7643: `caseExact`); every other string ignores case. */
  caseExact: readonly string[];
}

const CORE_PREFIX = /^urn:ietf:params:scim:schemas:core:2\.0:(User|Group):/i;
const MAX_FILTER_LENGTH = 1000;

function normalPath(path: string): string {
  return path.replace(CORE_PREFIX, "").toLowerCase();
}

function termsOf(filter: Filter, prefix: string, into: Term[]): void {
  switch (filter.op) {
    case "and":
      for (const part of (filter as { filters: Filter[] }).filters) termsOf(part, prefix, into);
      return;
    case "eq": {
      const { attrPath, compValue } = filter as { attrPath: string; compValue: unknown };
      if (typeof compValue !== "string" && typeof compValue !== "boolean") {
        throw new ScimError(400, `filter: ${attrPath} eq takes a string or a boolean`, "invalidFilter");
      }
      const within = prefix ? { within: prefix.slice(0, -1) } : {};
      into.push({ path: prefix + normalPath(attrPath), value: compValue, ...within });
      return;
    }
    case "[]": {
      if (prefix) throw new ScimError(400, "filter: nested value filters are not supported", "invalidFilter");
      const { attrPath, valFilter } = filter as { attrPath: string; valFilter: Filter };
      termsOf(valFilter, `${normalPath(attrPath)}.`, into);
      return;
    }
    default:
      throw new ScimError(
        400,
        `filter: the operator "${filter.op}" is not supported; use eq terms joined by and`,
        "invalidFilter",
      );
  }
}

/** The filter's terms; 400 `invalidFilter` for syntax this service doesn't answer. */
export function parseFilter(text: string, spec: FilterSpec): Term[] {
  if (text.length > MAX_FILTER_LENGTH) throw new ScimError(400, "filter: too long", "invalidFilter");
  let ast: Filter;
  try {
    ast = parse(text);
  } catch {
    throw new ScimError(400, "filter: not a SCIM filter (RFC 7644 §3.4.2.2)", "invalidFilter");
  }
  const terms: Term[] = [];
  termsOf(ast, "", terms);
  for (const term of terms) {
    if (!spec.indexed.includes(term.path) && !spec.tested.includes(term.path))
      throw new ScimError(400, `filter: can't filter on "${term.path}"`, "invalidFilter");
  }
  if (!terms.some((term) => spec.indexed.includes(term.path))) {
    throw new ScimError(
      400,
      `filter: needs an eq term on one of ${spec.indexed.join(", ")}`,
      "invalidFilter",
    );
  }
  return terms;
}

/** The values at a lower-cased dotted path of a resource, through multi-valued attributes; keys match any case. */
function valuesAt(value: unknown, path: string[]): unknown[] {
  if (Array.isArray(value)) return value.flatMap((item) => valuesAt(item, path));
  if (path.length === 0) return [value];
  if (!value || typeof value !== "object") return [];
  const key = Object.keys(value).find((candidate) => candidate.toLowerCase() === path[0]);
  return key === undefined ? [] : valuesAt((value as Record<string, unknown>)[key], path.slice(1));
}

function equal(actual: unknown, expected: string | boolean, caseExact: boolean): boolean {
  if (typeof expected === "boolean" || typeof actual !== "string") return actual === expected;
  return caseExact ? actual === expected : actual.toLowerCase() === expected.toLowerCase();
}

function holds(value: unknown, term: Term, path: string[], spec: FilterSpec): boolean {
  return valuesAt(value, path).some((actual) =>
    equal(actual, term.value, spec.caseExact.includes(term.path)),
  );
}

/**
 * Whether a resource passes every term. The terms of one value filter (`emails[type eq "work" and value eq "…"]`)
 * must hold for one and the same element of the attribute (RFC 7644 §3.4.2.2).
 */
export function matches(resource: Record<string, unknown>, terms: Term[], spec: FilterSpec): boolean {
  const plain = terms.filter((term) => !term.within);
  const groups = new Set(terms.flatMap((term) => (term.within ? [term.within] : [])));
  return (
    plain.every((term) => holds(resource, term, term.path.split("."), spec)) &&
    [...groups].every((attribute) => {
      const own = terms.filter((term) => term.within === attribute);
      return valuesAt(resource, [attribute]).some((element) =>
        own.every((term) => holds(element, term, term.path.split(".").slice(1), spec)),
      );
    })
  );
}

/** The string values the filter names for an indexed attribute (each term narrows the candidates). */
export function lookups(terms: Term[], path: string): string[] {
  return terms
    .filter((term) => term.path === path && typeof term.value === "string")
    .map((t) => t.value as string);
}
