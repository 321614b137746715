import { and, type Column, eq, gt, lt, or, type SQL } from "drizzle-orm";
import { base64url } from "jose";
import { z } from "zod";
import { AppError } from "../errors";

/** Paging of every admin list (contract §10): `limit` 1–500, default 50, and the opaque `cursor`. */
export const pageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().max(500).optional(),
});

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** A page of `item`, as the document shows it: `nextCursor` goes back as `cursor` for the next page. */
export const pageSchema = <T extends z.ZodType>(item: T) =>
  z.object({ items: z.array(item), nextCursor: z.string().nullable() });

/** Where a page ends, opaque to the caller: the last row's ordering time and id. */
export function encodeCursor(at: number, id: string): string {
  return base64url.encode(JSON.stringify([at, id]));
}

export function decodeCursor(cursor: string): [number, string] {
  try {
    const [at, id] = JSON.parse(new TextDecoder().decode(base64url.decode(cursor))) as unknown[];
    if (typeof at === "number" && typeof id === "string") return [at, id];
  } catch {}
  throw new AppError("invalid-request", "cursor: not a cursor this API gave out");
}

/** Cuts the `limit + 1` rows a query fetched into a page, with the cursor of its last row if more follow. */
export function toPage<Row, T>(
  rows: Row[],
  limit: number,
  position: (row: Row) => [number, string],
  toItem: (row: Row) => T,
): Page<T> {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return {
    items: items.map(toItem),
    nextCursor: rows.length > limit && last ? encodeCursor(...position(last)) : null,
  };
}

/**
 * The rows after the cursor's row in a list ordered by `(time, id)`: older ones for a newest-first list (`desc`),
 * newer ones for an oldest-first list (`asc`). Undefined without a cursor.
 */
export function pastCursor(
  cursor: string | undefined,
  time: Column,
  id: Column,
  order: "asc" | "desc",
): SQL | undefined {
  if (!cursor) return undefined;
  const [at, lastId] = decodeCursor(cursor);
  const beyond = order === "desc" ? lt : gt;
  return or(beyond(time, at), and(eq(time, at), beyond(id, lastId)));
}
