import { and, asc, type Column, desc, eq, gt, lt, or, type SQL, sql } from "drizzle-orm";
import { base64url } from "jose";
import { type UserRow, users } from "../db/schema";
import { compareText } from "./across-shards";

/**
 * The orders of the user lists as keysets: one column (the sort key) and the id after it. A position in the list is
 * a row's key and id, so every shard can read on from the same place and the merge (across-shards.ts) keeps the
 * order. `reversed` reads the list backwards from a position (the console's previous page).
 */

export const USER_SORTS = ["newest", "oldest", "email", "last-seen"] as const;
export type UserSort = (typeof USER_SORTS)[number];
type Key = number | string | null;
export interface Position {
  key: Key;
  id: string;
}
type Direction = "asc" | "desc";

interface Order {
  column: Column;
  keyOf: (row: UserRow) => Key;
  /** Users without the key (no email, never seen) come last; a NOT NULL column needs no such term (its index sorts). */
  nullable: boolean;
  direction: Direction;
  idDirection: Direction;
}

const ORDERS: Record<UserSort, Order> = {
  newest: {
    column: users.createdAt,
    keyOf: (row) => row.createdAt,
    nullable: false,
    direction: "desc",
    idDirection: "desc",
  },
  oldest: {
    column: users.createdAt,
    keyOf: (row) => row.createdAt,
    nullable: false,
    direction: "asc",
    idDirection: "asc",
  },
  email: {
    column: users.email,
    keyOf: (row) => row.email,
    nullable: true,
    direction: "asc",
    idDirection: "asc",
  },
  "last-seen": {
    column: users.lastSeen,
    keyOf: (row) => row.lastSeen,
    nullable: true,
    direction: "desc",
    idDirection: "asc",
  },
};

const flip = (direction: Direction, reversed: boolean): Direction =>
  reversed ? (direction === "asc" ? "desc" : "asc") : direction;

/** The ORDER BY of a sort, id last so that equal keys keep one order across pages and shards. */
export function userOrder(sort: UserSort, reversed = false): SQL[] {
  const order = ORDERS[sort];
  const by = (direction: Direction) => (flip(direction, reversed) === "asc" ? asc : desc);
  return [
    ...(order.nullable ? [reversed ? sql`${order.column} is null desc` : sql`${order.column} is null`] : []),
    by(order.direction)(order.column),
    by(order.idDirection)(users.id),
  ];
}

/** The rows strictly past `position` in the sort (before it, in the list's own order, when `reversed`). */
export function pastPosition(sort: UserSort, position: Position, reversed = false): SQL {
  const order = ORDERS[sort];
  const { column } = order;
  const beyond = flip(order.direction, reversed) === "asc" ? gt : lt;
  const beyondId = flip(order.idDirection, reversed) === "asc" ? gt : lt;
  const sameKeyBeyond = (key: Key) => and(eq(column, key), beyondId(users.id, position.id))!;
  if (position.key === null) {
    // Rows without the key come last: past one of them are only the others after it by id; before it, every row
    // with the key too.
    return reversed
      ? or(sql`${column} is not null`, beyondId(users.id, position.id))!
      : and(sql`${column} is null`, beyondId(users.id, position.id))!;
  }
  // `column < key` is not true of NULL: a reversed read skips the rows without the key, as it must.
  const past = or(beyond(column, position.key), sameKeyBeyond(position.key))!;
  return order.nullable && !reversed ? or(sql`${column} is null`, past)! : past;
}

/** The sort's order in JavaScript, exactly as the shards' ORDER BY sorts (the merge relies on it). */
export function compareUsers(sort: UserSort, reversed = false): (a: UserRow, b: UserRow) => number {
  const order = ORDERS[sort];
  const sign = (direction: Direction) => (direction === "asc" ? 1 : -1);
  return (a, b) => {
    const x = order.keyOf(a);
    const y = order.keyOf(b);
    let result: number;
    if (x === null || y === null) result = x === y ? 0 : x === null ? 1 : -1;
    else
      result =
        sign(order.direction) *
        (typeof x === "number" && typeof y === "number" ? x - y : compareText(String(x), String(y)));
    if (result === 0) result = sign(order.idDirection) * compareText(a.id, b.id);
    return reversed ? -result : result;
  };
}

export const positionOf = (sort: UserSort, row: UserRow): Position => ({
  key: ORDERS[sort].keyOf(row),
  id: row.id,
});

/** A position as the console's paging links carry it, opaque: the sort, the key and the id. */
export function encodePosition(sort: UserSort, position: Position): string {
  return base64url.encode(JSON.stringify([sort, position.key, position.id]));
}

/** The position a paging link carries, or undefined for one of another sort or none at all (a view ignores it). */
export function decodePosition(sort: UserSort, cursor: string | undefined): Position | undefined {
  if (!cursor || cursor.length > 1000) return undefined;
  try {
    const [cursorSort, key, id] = JSON.parse(new TextDecoder().decode(base64url.decode(cursor))) as unknown[];
    const keyType = ORDERS[sort].column === users.email ? "string" : "number";
    const keyFits = key === null ? ORDERS[sort].nullable : typeof key === keyType;
    if (cursorSort === sort && keyFits && typeof id === "string") return { key: key as Key, id };
  } catch {}
  return undefined;
}
