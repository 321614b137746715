import { and, desc, eq, or, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { authzDocuments, authzRelationships } from "../db/schema";

/**
 * The permissions' rows in the home database (src/db/tables/permissions.ts): the schema and policy set, every version
 * kept, and the relationships. Every read here goes to the primary (`deps.db` is the binding itself, never a
 * replica): a replica's lag has no bound, and a change must be seen everywhere within one second.
 */

export type DocumentKind = "schema" | "policies";

/** What is in force: the newest schema and policy set, and the version of the newest change to either (0: none). */
export interface ActiveSet {
  version: number;
  schema: string | null;
  policies: string | null;
}

/** The newest change's id: what a cached set is compared with, one read of the primary key's end. */
export async function latestVersion(db: Db): Promise<number> {
  const row = await db.get<{ version: number | null }>(sql`SELECT max(id) AS version FROM authz_documents`);
  return row?.version ?? 0;
}

/** The schema and the policy set in force, and the version they stand at, in one statement. */
export async function loadActiveSet(db: Db): Promise<ActiveSet> {
  const rows = await db.all<{ id: number; kind: DocumentKind; text: string }>(
    sql`SELECT id, kind, text FROM authz_documents WHERE id IN (SELECT max(id) FROM authz_documents GROUP BY kind)`,
  );
  const of = (kind: DocumentKind) => rows.find((row) => row.kind === kind) ?? null;
  return {
    version: Math.max(0, ...rows.map((row) => row.id)),
    schema: of("schema")?.text ?? null,
    policies: of("policies")?.text ?? null,
  };
}

/**
 * Adds a version of the schema or the policy set, only while the newest change is still `expected` (the one the new
 * text was validated with): two admins writing at once cannot leave a policy set in force that was validated against
 * a schema that is no longer. Returns the new version, or null when another change came first.
 */
export async function addVersion(
  db: Db,
  kind: DocumentKind,
  text: string,
  expected: number,
  now: number,
): Promise<number | null> {
  const row = await db.get<{ id: number }>(
    sql`INSERT INTO authz_documents (kind, text, created_at)
        SELECT ${kind}, ${text}, ${now}
        WHERE coalesce((SELECT max(id) FROM authz_documents), 0) = ${expected}
        RETURNING id`,
  );
  return row?.id ?? null;
}

/** The versions of a kind, newest first (their number and time; the text of one by `documentVersion`). */
export async function listVersions(db: Db, kind: DocumentKind, limit: number) {
  return db
    .select({ version: authzDocuments.id, createdAt: authzDocuments.createdAt })
    .from(authzDocuments)
    .where(eq(authzDocuments.kind, kind))
    .orderBy(desc(authzDocuments.id))
    .limit(limit)
    .all();
}

/** One version's text, when it is of that kind. */
export async function documentVersion(db: Db, kind: DocumentKind, version: number) {
  return db
    .select({ version: authzDocuments.id, text: authzDocuments.text, createdAt: authzDocuments.createdAt })
    .from(authzDocuments)
    .where(and(eq(authzDocuments.kind, kind), eq(authzDocuments.id, version)))
    .get();
}

export interface Ref {
  type: string;
  id: string;
}

export interface Relationship {
  resource: Ref;
  relation: string;
  subject: Ref;
}

/** Stores a relationship; storing one that exists changes nothing. True when it was new. */
export async function addRelationship(db: Db, tuple: Relationship, now: number): Promise<boolean> {
  const rows = await db
    .insert(authzRelationships)
    .values({
      resourceType: tuple.resource.type,
      resourceId: tuple.resource.id,
      relation: tuple.relation,
      subjectType: tuple.subject.type,
      subjectId: tuple.subject.id,
      createdAt: now,
    })
    .onConflictDoNothing()
    .returning({ relation: authzRelationships.relation });
  return rows.length > 0;
}

/** Removes a relationship; true when there was one. */
export async function removeRelationship(db: Db, tuple: Relationship): Promise<boolean> {
  const rows = await db
    .delete(authzRelationships)
    .where(
      and(
        eq(authzRelationships.resourceType, tuple.resource.type),
        eq(authzRelationships.resourceId, tuple.resource.id),
        eq(authzRelationships.relation, tuple.relation),
        eq(authzRelationships.subjectType, tuple.subject.type),
        eq(authzRelationships.subjectId, tuple.subject.id),
      ),
    )
    .returning({ relation: authzRelationships.relation });
  return rows.length > 0;
}

/** A resource's relationships: `relation` and subject, by the primary key's prefix. */
export async function relationshipsOf(db: Db, resource: Ref) {
  return db
    .select({
      relation: authzRelationships.relation,
      subjectType: authzRelationships.subjectType,
      subjectId: authzRelationships.subjectId,
    })
    .from(authzRelationships)
    .where(
      and(eq(authzRelationships.resourceType, resource.type), eq(authzRelationships.resourceId, resource.id)),
    )
    .all();
}

/** Every relationship of an entity, as the subject or as the resource: what goes when a user does. */
export async function removeRelationshipsOf(db: Db, entity: Ref): Promise<void> {
  await db
    .delete(authzRelationships)
    .where(
      or(
        and(eq(authzRelationships.subjectType, entity.type), eq(authzRelationships.subjectId, entity.id)),
        and(eq(authzRelationships.resourceType, entity.type), eq(authzRelationships.resourceId, entity.id)),
      ),
    )
    .run();
}
