import { z } from "zod";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { isWellFormedText } from "../lib/well-formed";
import { forgetRelationships } from "./evaluate";
import { CEDAR_TYPE, USER_ATTRIBUTES } from "./request";
import { addRelationship, type Relationship, removeRelationship } from "./store";

/**
 * Writing and deleting a relationship, one flow for the admin API and `AuthAdmin` (contract platform.md §2): the
 * tuple checked, stored in the home database, and this isolate's cached relationships of the resource forgotten (other
 * isolates see the change within FRESHNESS_MS).
 */

const ref = z.object({
  type: z.string().regex(CEDAR_TYPE, "a Cedar entity type name (identifiers joined by ::)"),
  id: z.string().min(1).max(512).refine(isWellFormedText, "well-formed Unicode (no lone surrogate)"),
});

export const relationshipSchema = z.object({
  resource: ref,
  relation: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, "an identifier: letters, digits and _"),
  subject: ref,
});

/** A user's own attributes are the service's: no relationship may stand in for one. */
function refuseServiceAttribute(tuple: Relationship): void {
  if (tuple.resource.type === "User" && USER_ATTRIBUTES.has(tuple.relation)) {
    throw new AppError("invalid-request", `${tuple.relation} is an attribute the service supplies for User`);
  }
}

/** Stores the relationship; `created` is false when it was there already. */
export async function writeRelationship(
  deps: Pick<Deps, "db" | "now">,
  tuple: Relationship,
): Promise<{ relationship: Relationship; created: boolean }> {
  refuseServiceAttribute(tuple);
  const created = await addRelationship(deps.db, tuple, deps.now());
  forgetRelationships(tuple.resource.type, tuple.resource.id);
  return { relationship: tuple, created };
}

/** Deletes the relationship; `not-found` when there was none. */
export async function deleteRelationship(deps: Pick<Deps, "db">, tuple: Relationship): Promise<void> {
  const removed = await removeRelationship(deps.db, tuple);
  forgetRelationships(tuple.resource.type, tuple.resource.id);
  if (!removed) throw new AppError("not-found", "no such relationship");
}
