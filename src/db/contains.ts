import type { Column, SQL } from "drizzle-orm";
import { sql } from "drizzle-orm";

/**
 * A substring match, ASCII case-insensitive as LIKE is, with every character of the term literal. Not LIKE: D1
 * refuses LIKE patterns longer than 50 bytes ("LIKE or GLOB pattern too complex"), and an admin's search may be as
 * long as an email address (254) or a pasted sentence.
 */
export function contains(column: Column, term: string): SQL {
  return sql`instr(lower(${column}), lower(${term})) > 0`;
}
