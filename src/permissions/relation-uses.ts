import { policySetTextToParts, policyToJson } from "@cedar-policy/cedar-wasm/web";
import { cedar } from "./engine";
import type { StoredRelation } from "./entities";
import { orgRoleId } from "./entities";
import type { SubjectFacts } from "./subjects";

/**
 * Which of a resource's stored relationships a check hands to Cedar. Cedar takes the entities as a JavaScript value on
 * every call, and each entity reference costs it about 50–65 µs to take in (docs/performance.md, "Issue 45"): a
 * document shared with 100 users cost 5.5 ms of CPU per check, all of it spent on members that cannot matter to
 * `principal in resource.editors`. Such a test is true only through a member that is the principal or one of its
 * parents (its roles, org roles and orgs: the only ancestors the service gives a user), so the other members may be
 * left out, and the decision is the same, for every relation the policy set reads only that way (or tests with `has`,
 * for which the attribute stays, empty). A relation read any other way (`contains`, `isEmpty`, `==`, another entity
 * `in` it…) keeps all its members, as does every relation when the set cannot be analysed.
 */

/** The relations the set reads other than as `principal in resource.<r>` / `resource has <r>`; null: all of them. */
let analysed: { version: number; readOtherwise: Set<string> | null } | null = null;

const isVar = (node: unknown, name: string) =>
  typeof node === "object" && node !== null && (node as { Var?: unknown }).Var === name;

/** `resource.<attr>`'s attribute, or undefined. */
function resourceAttribute(node: unknown): string | undefined {
  const dot = (node as { "."?: { left?: unknown; attr?: unknown } } | null)?.["."];
  return dot && isVar(dot.left, "resource") && typeof dot.attr === "string" ? dot.attr : undefined;
}

/** Walks a policy's JSON form (Cedar's EST), adding every attribute of `resource` read other than as allowed. */
function collect(node: unknown, readOtherwise: Set<string>): void {
  if (typeof node !== "object" || node === null) return;
  if (Array.isArray(node)) {
    for (const item of node) collect(item, readOtherwise);
    return;
  }
  const record = node as Record<string, unknown>;
  const membership = record.in as { left?: unknown; right?: unknown } | undefined;
  if (membership && isVar(membership.left, "principal") && resourceAttribute(membership.right)) return;
  const has = record.has as { left?: unknown; attr?: unknown } | undefined;
  if (has && Object.keys(has).length === 2 && isVar(has.left, "resource") && typeof has.attr === "string")
    return;
  const attribute = resourceAttribute(node);
  if (attribute !== undefined) readOtherwise.add(attribute);
  for (const value of Object.values(record)) collect(value, readOtherwise);
}

function analyse(policies: string): Set<string> | null {
  cedar();
  const parts = policySetTextToParts(policies);
  if (parts.type !== "success" || parts.policy_templates.length > 0) return null;
  const readOtherwise = new Set<string>();
  for (const text of parts.policies) {
    const json = policyToJson(text);
    if (json.type !== "success") return null;
    collect(json.json, readOtherwise);
  }
  return readOtherwise;
}

/**
 * The stored relationships of the resource that can matter to this check under the set of `version`, and the names of
 * every stored relation (each stays an attribute, empty if none of its members is kept, so that `has` answers alike).
 */
export function relationsForCheck(
  set: { version: number; policies: string },
  subject: SubjectFacts,
  relations: readonly StoredRelation[],
): { kept: StoredRelation[]; names: string[] } {
  if (analysed?.version !== set.version) {
    analysed = { version: set.version, readOtherwise: analyse(set.policies) };
  }
  const names = [...new Set(relations.map((row) => row.relation))];
  const { readOtherwise } = analysed;
  if (!readOtherwise) return { kept: [...relations], names };
  const principalOrParent = new Set([
    `User\u0000${subject.id}`,
    ...subject.roles.map((role) => `Role\u0000${role}`),
    ...subject.memberships.flatMap(({ orgId, role }) => [
      `OrgRole\u0000${orgRoleId(orgId, role)}`,
      `Org\u0000${orgId}`,
    ]),
  ]);
  const kept = relations.filter(
    (row) =>
      readOtherwise.has(row.relation) || principalOrParent.has(`${row.subjectType}\u0000${row.subjectId}`),
  );
  return { kept, names };
}
