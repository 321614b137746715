import type { EntityJson } from "@cedar-policy/cedar-wasm/web";
import { wellFormedText } from "../lib/well-formed";
import type { EntityRef } from "./engine";
import type { Entity } from "./request";
import type { SubjectFacts } from "./subjects";

/**
 * The Cedar entities of a check (contract platform.md §2): the service's `User` with its attributes and its parents
 * (`Role::"<role>"`, `OrgRole::"<org>/<role>"` per active membership, each `OrgRole` a child of its `Org`), and the
 * request's resource with its properties and its stored relationships as attributes.
 */

export const userRef = (id: string): EntityRef => ({ type: "User", id });
export const orgRoleId = (orgId: string, role: string) => `${orgId}/${role}`;

/**
 * A value of the service's own data as Cedar takes it: nulls and fractions (which Cedar has no type for) left out,
 * and Cedar's escapes (`__entity`, `__extn`) dropped, so that what a user writes into their own metadata can never
 * become an entity reference. Strings and keys are made well-formed: a lone surrogate a user stored in their metadata
 * would make Cedar refuse every check about them, and every subject search that meets them.
 */
export function cedarValue(value: unknown): unknown {
  if (value === null || value === undefined) return undefined;
  if (typeof value === "number") return Number.isSafeInteger(value) ? value : undefined;
  if (typeof value === "string") return wellFormedText(value);
  if (typeof value === "boolean") return value;
  if (Array.isArray(value)) return value.map(cedarValue).filter((item) => item !== undefined);
  if (typeof value === "object") {
    const record: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      if (key === "__entity" || key === "__extn") continue;
      const converted = cedarValue(item);
      if (converted !== undefined) record[wellFormedText(key)] = converted;
    }
    return record;
  }
  return undefined;
}

/** The user as Cedar's principal, with the request's extra subject properties (never one of the service's). */
export function userEntities(facts: SubjectFacts, extra: Record<string, unknown> = {}): EntityJson[] {
  const attrs = {
    ...extra,
    ...(facts.email ? { email: facts.email } : {}),
    emailVerified: facts.emailVerified,
    roles: facts.roles,
    defaultRole: facts.defaultRole,
    metadata: cedarValue(facts.metadata) ?? {},
  };
  const orgRoles = facts.memberships.map(({ orgId, role }) => ({
    uid: { type: "OrgRole", id: orgRoleId(orgId, role) },
    attrs: {},
    parents: [{ type: "Org", id: orgId }],
  }));
  const user: EntityJson = {
    uid: userRef(facts.id),
    attrs: attrs as unknown as EntityJson["attrs"],
    parents: [
      ...facts.roles.map((role) => ({ type: "Role", id: role })),
      ...orgRoles.map((entity) => entity.uid),
    ],
  };
  return [user, ...orgRoles];
}

export interface StoredRelation {
  relation: string;
  subjectType: string;
  subjectId: string;
}

/**
 * The request's resource: its properties, then each stored relation as a set of entities (`resource.editors`). A
 * property that names a stored relation is refused by the caller (`relationClash`) before this is built.
 */
export function resourceEntity(resource: Entity, relations: readonly StoredRelation[]): EntityJson {
  const attrs: Record<string, unknown> = { ...(resource.properties ?? {}) };
  for (const { relation, subjectType, subjectId } of relations) {
    const members = (attrs[relation] as unknown[] | undefined) ?? [];
    members.push({ __entity: { type: subjectType, id: subjectId } });
    attrs[relation] = members;
  }
  const parents =
    resource.type === "OrgRole" && resource.id.includes("/")
      ? [{ type: "Org", id: resource.id.slice(0, resource.id.indexOf("/")) }]
      : [];
  return { uid: { type: resource.type, id: resource.id }, attrs: attrs as EntityJson["attrs"], parents };
}

/** The first property of the request's resource that names one of its stored relations, if any. */
export function relationClash(resource: Entity, relations: readonly StoredRelation[]): string | undefined {
  const names = new Set(relations.map((row) => row.relation));
  return Object.keys(resource.properties ?? {}).find((name) => names.has(name));
}
