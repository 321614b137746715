import { eq, inArray, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Db } from "../db/client";
import { eventMutes, eventOutbox, eventSequences } from "../db/schema";
import type { StreamEventType } from "./types";

type Statement = BatchItem<"sqlite">;

/**
 * `statements` wrapped so that the changes they make write no event: the subjects go into `event_mutes` first and
 * out again last, all in the one batch (a transaction), so nothing outside it is muted. For the Nhost import only
 * (contract move-in §2: it sends no per-user events; `mirror-resync` is there for consumers that need every row).
 */
export function withoutEvents(db: Db, subjects: string[], statements: Statement[]): Statement[] {
  const unique = [...new Set(subjects)];
  if (unique.length === 0 || statements.length === 0) return statements;
  return [
    db
      .insert(eventMutes)
      .values(unique.map((subject) => ({ subject })))
      .onConflictDoNothing(),
    ...statements,
    db.delete(eventMutes).where(inArray(eventMutes.subject, unique)),
  ];
}

/**
 * The statements that write one event that no table change stands for (`import.completed`), numbered in its
 * subject's stream like the triggers' events, to run in one batch.
 */
export function eventStatements(
  db: Db,
  type: StreamEventType,
  subject: string,
  data: Record<string, unknown>,
): [Statement, Statement, Statement] {
  return [
    db.insert(eventSequences).values({ subject, last: 0 }).onConflictDoNothing(),
    db
      .update(eventSequences)
      .set({ last: sql`${eventSequences.last} + 1` })
      .where(eq(eventSequences.subject, subject)),
    db.insert(eventOutbox).values({
      type,
      subject,
      sequence: sql`(SELECT last FROM event_sequences WHERE subject = ${subject})`,
      data,
    }),
  ];
}
