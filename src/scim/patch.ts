import { type Filter, parse } from "scim2-parse-filter";
import { z } from "zod";
import { ScimError } from "./errors";
import { MAX_PATCH_OPERATIONS, PATCH_OP_SCHEMA } from "./schemas";

/**
 * RFC 7644 §3.5.2 PATCH, applied to a resource's JSON: `add`, `replace`, `remove`, with or without `path`, paths with
 * a value filter (`emails[type eq "work"].value`) and extension URNs. The caller then stores the result as it would
 * a PUT, so one set of rules (what may change, what must hold) covers both. Entra's and Okta's dialects are taken
 * as they come: capitalised ops (`Replace`), a path-less value whose keys are paths (`{"name.givenName": "…"}`),
 * `members` removed by value, and booleans as strings (`"False"`, coerced where the resource is validated).
 */

export type Resource = Record<string, unknown>;

export const patchRequestSchema = z.looseObject({
  schemas: z.array(z.string()).optional(),
  Operations: z
    .array(
      z.looseObject({
        op: z.string().max(20),
        path: z.string().max(500).optional(),
        value: z.unknown().optional(),
      }),
    )
    .min(1)
    .max(MAX_PATCH_OPERATIONS),
});
export type PatchRequest = z.infer<typeof patchRequestSchema>;
type Operation = PatchRequest["Operations"][number];

interface Path {
  /** An extension schema's URN (its attributes live in an object under that key), or none for the core schema. */
  urn?: string;
  attribute: string;
  filter?: Filter;
  sub?: string;
}

const CORE_URN = /^urn:ietf:params:scim:schemas:core:2\.0:(User|Group)$/i;
/** A schema's URN (as opposed to one of its attributes' paths): it ends with the resource type's name. */
const SCHEMA_URN = /^urn:[^[]*:(User|Group)$/i;
const PATH_SHAPE = /^([A-Za-z][\w$-]*)(?:\[(.+)\])?(?:\.([A-Za-z][\w$-]*))?$/s;

function invalidPath(path: string): ScimError {
  return new ScimError(400, `path: "${path.slice(0, 100)}" is not a valid attribute path`, "invalidPath");
}

/** `attr`, `attr.sub`, `attr[filter]`, `attr[filter].sub`, each optionally behind a schema URN and `:`. */
export function parsePath(path: string): Path {
  const bracket = path.indexOf("[");
  const head = bracket === -1 ? path : path.slice(0, bracket);
  let urn: string | undefined;
  let rest = path;
  if (/^urn:/i.test(head)) {
    const colon = head.lastIndexOf(":");
    urn = head.slice(0, colon);
    rest = path.slice(colon + 1);
    if (CORE_URN.test(urn)) urn = undefined;
  }
  const match = PATH_SHAPE.exec(rest);
  if (!match) throw invalidPath(path);
  let filter: Filter | undefined;
  if (match[2] !== undefined) {
    try {
      filter = parse(match[2]);
    } catch {
      throw invalidPath(path);
    }
  }
  return { urn, attribute: match[1]!, filter, sub: match[3] };
}

/** The key of `name` in `object`, matched regardless of case (RFC 7643 §2.1), else `name` itself. */
function keyOf(object: Resource, name: string): string {
  return Object.keys(object).find((key) => key.toLowerCase() === name.toLowerCase()) ?? name;
}

function isObject(value: unknown): value is Resource {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Does one element of a multi-valued attribute pass a value filter (eq, and, or, not, pr; strings ignore case)? */
function elementMatches(element: unknown, filter: Filter): boolean {
  const f = filter as {
    op: string;
    attrPath?: string;
    compValue?: unknown;
    filters?: Filter[];
    filter?: Filter;
  };
  switch (f.op) {
    case "and":
      return f.filters!.every((part) => elementMatches(element, part));
    case "or":
      return f.filters!.some((part) => elementMatches(element, part));
    case "not":
      return !elementMatches(element, f.filter!);
    case "eq":
    case "ne":
    case "pr": {
      const actual = isObject(element) ? element[keyOf(element, f.attrPath!)] : undefined;
      if (f.op === "pr") return actual !== undefined && actual !== null;
      const same =
        typeof actual === "string" && typeof f.compValue === "string"
          ? actual.toLowerCase() === f.compValue.toLowerCase()
          : actual === f.compValue;
      return f.op === "eq" ? same : !same;
    }
    default:
      throw new ScimError(
        400,
        `path: the operator "${f.op}" is not supported in a value filter`,
        "invalidFilter",
      );
  }
}

/** The attributes an `eq` value filter pins (`type eq "work"` → `{type: "work"}`), to create the element it names. */
function pinned(filter: Filter): Resource | undefined {
  const f = filter as { op: string; attrPath?: string; compValue?: unknown; filters?: Filter[] };
  if (f.op === "eq") return { [f.attrPath!]: f.compValue };
  if (f.op === "and") {
    const parts = f.filters!.map(pinned);
    return parts.every(Boolean) ? Object.assign({}, ...parts) : undefined;
  }
  return undefined;
}

/** The same value for set-like comparisons of multi-valued elements (`members` by `value`). */
function sameElement(a: unknown, b: unknown): boolean {
  if (isObject(a) && isObject(b) && "value" in a && "value" in b) return a.value === b.value;
  return JSON.stringify(a) === JSON.stringify(b);
}

function addTo(container: Resource, key: string, value: unknown): void {
  const existing = container[key];
  if (Array.isArray(existing)) {
    const added = Array.isArray(value) ? value : [value];
    container[key] = [
      ...existing,
      ...added.filter((item) => !existing.some((old) => sameElement(old, item))),
    ];
  } else if (isObject(existing) && isObject(value)) {
    container[key] = { ...existing, ...value };
  } else {
    container[key] = value;
  }
}

function applyAt(
  resource: Resource,
  op: "add" | "replace" | "remove",
  rawPath: string,
  value: unknown,
): void {
  const path = parsePath(rawPath);
  let container = resource;
  if (path.urn) {
    const urnKey = keyOf(resource, path.urn);
    if (!isObject(resource[urnKey])) {
      if (op === "remove") return;
      resource[urnKey] = {};
    }
    container = resource[urnKey] as Resource;
  }
  const key = keyOf(container, path.attribute);
  if (path.filter) {
    const list = container[key];
    const elements = Array.isArray(list) ? [...list] : [];
    const hits = elements.filter((element) => elementMatches(element, path.filter!));
    if (op === "remove") {
      container[key] = path.sub
        ? elements.map((element) => {
            if (!hits.includes(element) || !isObject(element)) return element;
            const { [keyOf(element, path.sub!)]: _, ...kept } = element;
            return kept;
          })
        : elements.filter((element) => !hits.includes(element));
      return;
    }
    if (hits.length === 0) {
      // Entra's `emails[type eq "work"].value` for a user without one: create the element the filter names.
      const base = pinned(path.filter);
      if (!base) throw new ScimError(400, `path: no value matches "${rawPath.slice(0, 100)}"`, "noTarget");
      elements.push(
        path.sub ? { ...base, [path.sub]: value } : { ...base, ...(isObject(value) ? value : {}) },
      );
      container[key] = elements;
      return;
    }
    container[key] = elements.map((element) => {
      if (!hits.includes(element)) return element;
      if (path.sub) return { ...(element as Resource), [keyOf(element as Resource, path.sub)]: value };
      return isObject(element) && isObject(value) ? { ...element, ...value } : value;
    });
    return;
  }
  if (path.sub) {
    const parent = isObject(container[key]) ? { ...(container[key] as Resource) } : {};
    if (op === "remove") delete parent[keyOf(parent, path.sub)];
    else parent[keyOf(parent, path.sub)] = value;
    container[key] = parent;
    return;
  }
  if (op === "remove") {
    // Entra removes group members with a value: those elements go, the others stay.
    if (Array.isArray(container[key]) && value !== undefined && value !== null) {
      const gone = Array.isArray(value) ? value : [value];
      container[key] = (container[key] as unknown[]).filter(
        (item) => !gone.some((g) => sameElement(item, g)),
      );
    } else {
      delete container[key];
    }
    return;
  }
  if (op === "add") addTo(container, key, value);
  else if (isObject(container[key]) && isObject(value))
    container[key] = { ...(container[key] as Resource), ...value };
  else container[key] = value;
}

function opName(operation: Operation): "add" | "replace" | "remove" {
  const name = operation.op.toLowerCase();
  if (name === "add" || name === "replace" || name === "remove") return name;
  throw new ScimError(
    400,
    `op: "${operation.op.slice(0, 20)}" is not add, replace or remove`,
    "invalidSyntax",
  );
}

/** The resource after the request's operations, in order; the input is not changed. */
export function applyPatch(current: Resource, request: PatchRequest): Resource {
  if (request.schemas && !request.schemas.includes(PATCH_OP_SCHEMA)) {
    throw new ScimError(400, `schemas: a PATCH names ${PATCH_OP_SCHEMA}`, "invalidSyntax");
  }
  const resource = structuredClone(current);
  for (const operation of request.Operations) {
    const op = opName(operation);
    if (operation.path !== undefined && operation.path !== "") {
      if (op !== "remove" && operation.value === undefined)
        throw new ScimError(400, `value: ${op} needs a value`, "invalidValue");
      applyAt(resource, op, operation.path, operation.value);
      continue;
    }
    if (op === "remove") throw new ScimError(400, "path: remove needs a path", "noTarget");
    if (!isObject(operation.value))
      throw new ScimError(400, `value: ${op} without a path takes an object`, "invalidValue");
    // Each key is an attribute, or (Entra) a path such as "name.givenName" or an extension's URN-qualified one.
    for (const [attribute, value] of Object.entries(operation.value)) {
      if (SCHEMA_URN.test(attribute) && isObject(value)) {
        // A whole schema's attributes: the core one's are the resource's own, an extension's sit under its URN.
        for (const [inner, innerValue] of Object.entries(value)) {
          applyAt(resource, op, CORE_URN.test(attribute) ? inner : `${attribute}:${inner}`, innerValue);
        }
      } else {
        applyAt(resource, op, attribute, value);
      }
    }
  }
  return resource;
}
