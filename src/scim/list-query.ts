import { ScimError } from "./errors";
import { LIST_RESPONSE_SCHEMA, MAX_RESULTS } from "./schemas";

/** A list request's query (RFC 7644 §3.4.2): `filter`, 1-based `startIndex`, `count`, and the attribute choices. */
export interface ListQuery {
  filter?: string;
  startIndex: number;
  count: number;
  attributes?: string[];
  excludedAttributes?: string[];
}

function integer(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === "") return fallback;
  if (!/^-?\d{1,9}$/.test(raw)) throw new ScimError(400, `${name}: must be an integer`, "invalidValue");
  return Number(raw);
}

const names = (raw: string | undefined) =>
  raw
    ? raw
        .split(",")
        .map((name) => name.trim())
        .filter(Boolean)
    : undefined;

/**
 * RFC 7644 §3.4.2.4: a `startIndex` below 1 counts as 1, a negative `count` as 0; `count` above the maximum is cut to
 * it (ServiceProviderConfig says how many).
 */
export function listQueryOf(query: Record<string, string | undefined>): ListQuery {
  return {
    ...(query.filter !== undefined ? { filter: query.filter } : {}),
    startIndex: Math.max(1, integer("startIndex", query.startIndex, 1)),
    count: Math.min(MAX_RESULTS, Math.max(0, integer("count", query.count, 100))),
    attributes: names(query.attributes),
    excludedAttributes: names(query.excludedAttributes),
  };
}

/** The top-level attribute a requested one is part of (`name.givenName` → `name`, URN-qualified → the same). */
function topLevel(name: string): string {
  const withoutUrn = /^urn:/i.test(name)
    ? name.replace(/^urn:ietf:params:scim:schemas:core:2\.0:(User|Group):/i, "")
    : name;
  return withoutUrn.split(".")[0]!.toLowerCase();
}

/**
 * `attributes` and `excludedAttributes` (RFC 7644 §3.4.2.5), at the top level: `id` and `schemas` are always
 * returned; asking for `name.givenName` returns all of `name`.
 */
export function projected(
  resource: Record<string, unknown>,
  query: Pick<ListQuery, "attributes" | "excludedAttributes">,
): Record<string, unknown> {
  const keep = query.attributes?.map(topLevel);
  const drop = query.excludedAttributes?.map(topLevel);
  return Object.fromEntries(
    Object.entries(resource).filter(([key]) => {
      const lower = key.toLowerCase();
      if (lower === "id" || lower === "schemas") return true;
      if (keep) return keep.includes(lower);
      return !drop?.includes(lower);
    }),
  );
}

export function listResponse(items: Record<string, unknown>[], total: number, query: ListQuery) {
  return {
    schemas: [LIST_RESPONSE_SCHEMA],
    totalResults: total,
    startIndex: query.startIndex,
    itemsPerPage: items.length,
    Resources: items.map((item) => projected(item, query)),
  };
}
