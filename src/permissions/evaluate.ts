import type { EntityJson } from "@cedar-policy/cedar-wasm/web";
import type { Deps } from "../http/deps";
import { activeSet } from "./active-set";
import { loadCedar } from "./cedar";
import type { CedarQuery } from "./engine";
import { relationClash, resourceEntity, type StoredRelation, userEntities, userRef } from "./entities";
import { checkEvaluation, type EvaluationRequest, PermissionRequestError } from "./request";
import { ShortCache } from "./short-cache";
import { relationshipsOf } from "./store";
import { findSubject } from "./subjects";

/** What a check needs: the home database (policies, relationships, memberships), the users' shards, a clock. */
export type PermissionDeps = Pick<Deps, "db" | "shards" | "now">;

/** A decision and, when some policy decided it, which (Cedar's policy ids: `policy0`, … or their `@id`). */
export interface Decision {
  decision: boolean;
  reasons?: string[];
}

/** AuthZEN's `options.evaluations_semantic` (§"Evaluations semantics"). */
export type EvaluationsSemantic = "execute_all" | "deny_on_first_deny" | "permit_on_first_permit";
export const SEMANTICS: readonly EvaluationsSemantic[] = [
  "execute_all",
  "deny_on_first_deny",
  "permit_on_first_permit",
];

/** A resource's stored relationships, for FRESHNESS_MS per isolate (a new one is seen within that second). */
const relationships = new ShortCache<StoredRelation[]>(5000);
const resourceKey = (type: string, id: string) => `${type}\u0000${id}`;

/** Forgets a resource's cached relationships: this isolate's own write is seen at once. */
export function forgetRelationships(type: string, id: string): void {
  relationships.forget(resourceKey(type, id));
}

/** The relationships of the request's resource: once per request (`seen`), then from the short cache, then D1. */
async function relationsOf(
  deps: PermissionDeps,
  type: string,
  id: string,
  seen: Map<string, StoredRelation[]>,
): Promise<StoredRelation[]> {
  const key = resourceKey(type, id);
  const inRequest = seen.get(key);
  if (inRequest) return inRequest;
  const now = deps.now();
  const rows = relationships.get(key, now) ?? (await relationshipsOf(deps.db, { type, id }));
  relationships.set(key, rows, now);
  seen.set(key, rows);
  return rows;
}

/** Merges the request's resource into the entities, onto the service's own entity when it is one (a User). */
function withResource(entities: EntityJson[], resource: EntityJson): EntityJson[] {
  const same = (entity: EntityJson) =>
    "type" in entity.uid &&
    "type" in resource.uid &&
    entity.uid.type === resource.uid.type &&
    entity.uid.id === resource.uid.id;
  const existing = entities.find(same);
  if (!existing) return [...entities, resource];
  existing.attrs = { ...existing.attrs, ...resource.attrs };
  return entities;
}

async function decide(
  deps: PermissionDeps,
  request: EvaluationRequest,
  seen: Map<string, StoredRelation[]>,
): Promise<Decision> {
  const set = await activeSet(deps);
  const subject = await findSubject(deps, request.subject.id);
  // No such user (or deleted, or disabled): nothing is allowed about nobody. No policies: Cedar denies by default.
  if (!subject || !set.policies) return { decision: false };
  const { resource } = request;
  const relations = await relationsOf(deps, resource.type, resource.id, seen);
  const clash = relationClash(resource, relations);
  if (clash) {
    throw new PermissionRequestError(
      `resource.properties.${clash} is a stored relationship: it may not be sent`,
    );
  }
  let entities = userEntities(subject, request.subject.properties);
  if (resource.type === "User") {
    const owner = await findSubject(deps, resource.id);
    if (owner) for (const entity of userEntities(owner)) entities = withResource(entities, entity);
  }
  const { authorize, relationsForCheck } = await loadCedar();
  // Only the members that can matter to this check cross into Cedar (relation-uses.ts: the cost is per member).
  const { kept, names } = relationsForCheck(
    { version: set.version, policies: set.policies },
    subject,
    relations,
  );
  const entity = resourceEntity(resource, kept);
  for (const name of names) entity.attrs[name] ??= [];
  entities = withResource(entities, entity);
  const outcome = authorize(
    { version: set.version, policies: set.policies },
    {
      principal: userRef(subject.id),
      action: { type: "Action", id: request.action.name },
      resource: { type: resource.type, id: resource.id },
      context: (request.context ?? {}) as CedarQuery["context"],
      entities,
    },
  );
  if ("refused" in outcome) throw new PermissionRequestError(outcome.refused);
  return outcome.reasons.length > 0
    ? { decision: outcome.allowed, reasons: outcome.reasons }
    : { decision: outcome.allowed };
}

/**
 * May this subject do this action on this resource? (contract platform.md §2) The request is checked first (a bad
 * one throws PermissionRequestError); the policies, the subject and the resource's relationships come from this
 * isolate's caches while they are fresh (active-set.ts), so a check on a hot path makes no D1 query.
 */
export async function evaluate(deps: PermissionDeps, request: unknown): Promise<Decision> {
  return decide(deps, checkEvaluation(request), new Map());
}

/**
 * Several evaluations, in order, with AuthZEN's semantics: `execute_all` answers each; `deny_on_first_deny` stops
 * after the first false, `permit_on_first_permit` after the first true (the answers end there, as its §"Evaluations
 * semantics" short-circuits). Every request is checked before any is evaluated: one bad request refuses them all.
 * A resource's relationships are read once for the whole batch.
 */
export async function evaluateMany(
  deps: PermissionDeps,
  requests: readonly unknown[],
  semantic: EvaluationsSemantic = "execute_all",
): Promise<Decision[]> {
  const checked = requests.map(checkEvaluation);
  const seen = new Map<string, StoredRelation[]>();
  const decisions: Decision[] = [];
  for (const request of checked) {
    const decision = await decide(deps, request, seen);
    decisions.push(decision);
    if (semantic === "deny_on_first_deny" && !decision.decision) break;
    if (semantic === "permit_on_first_permit" && decision.decision) break;
  }
  return decisions;
}
