import { and } from "drizzle-orm";
import type { Db } from "../db/client";
import { type UserRow, users } from "../db/schema";
import type { Deps } from "../http/deps";
import { mergeAcross } from "./across-shards";
import { MAX_USER_ROWS, type UserFilters, userConditions } from "./user-filters";
import {
  compareUsers,
  decodePosition,
  encodePosition,
  type Position,
  pastPosition,
  positionOf,
  userOrder,
} from "./user-order";
import { toAdminUser } from "./users";
import type { AdminUser } from "./wire";

/**
 * The console's user list (filters, orders, pages) and its CSV export, over the same conditions, in every shard:
 * each shard reads on from the same position in the order, and the merge keeps it (across-shards.ts).
 */

/** Users matching `filters` in their order (backwards when `reversed`), `limit` at most, past `from`. */
function readUsers(filters: UserFilters, from: Position | undefined, reversed: boolean) {
  const { sort } = filters;
  return (db: Db, after: UserRow | undefined, limit: number) => {
    const position = after ? positionOf(sort, after) : from;
    return db
      .select()
      .from(users)
      .where(and(...userConditions(filters), position ? pastPosition(sort, position, reversed) : undefined))
      .orderBy(...userOrder(sort, reversed))
      .limit(limit)
      .all();
  };
}

export interface UsersPage {
  items: AdminUser[];
  /** The console's paging links: `after` the last row, `before` the first; null where the list ends. */
  next: string | null;
  previous: string | null;
}

/** A page of the filtered list: the first, the one `after` a link's position, or the one `before` it. */
export async function listUsersFiltered(
  deps: Deps,
  filters: UserFilters,
  page: { limit: number; after?: string; before?: string },
): Promise<UsersPage> {
  const { sort } = filters;
  const before = decodePosition(sort, page.before);
  const after = before ? undefined : decodePosition(sort, page.after);
  const reversed = before !== undefined;
  const rows = await mergeAcross(deps.shards, {
    read: readUsers(filters, before ?? after, reversed),
    compare: compareUsers(sort, reversed),
    take: page.limit + 1,
  });
  const more = rows.length > page.limit;
  const items = rows.slice(0, page.limit);
  if (reversed) items.reverse();
  const link = (row: UserRow | undefined) => (row ? encodePosition(sort, positionOf(sort, row)) : null);
  return {
    items: items.map(toAdminUser),
    // Read backwards, the rows after the page are the ones the link came from; read forwards from a link, the rows
    // before it are.
    next: reversed || more ? link(items.at(-1)) : null,
    previous: (reversed ? more : after !== undefined) ? link(items[0]) : null,
  };
}

const COLUMNS = [
  "id",
  "email",
  "phoneNumber",
  "displayName",
  "createdAt",
  "lastSeen",
  "disabled",
  "emailVerified",
  "isAnonymous",
  "defaultRole",
  "roles",
  "activeMfaType",
] as const;

/**
 * A value a spreadsheet would run as a formula (OWASP, CSV injection): one starting with tab or CR, or with `=`,
 * `+`, `-`, `@`, also after leading white space (spreadsheets trim it before they look) and in their full-width
 * forms `＝ ＋ － ＠` (which East Asian spreadsheet locales read as the ASCII ones).
 */
const FORMULA_START = /^[\t\r]|^\s*[=+\-@\uFF1D\uFF0B\uFF0D\uFF20]/;

/**
 * One CSV field (RFC 4180 quoting). A formula is prefixed with `'`: user-chosen names must not become code in the
 * operator's spreadsheet.
 */
function field(value: unknown): string {
  let text =
    value === null || value === undefined ? "" : Array.isArray(value) ? value.join(" ") : String(value);
  if (FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export async function usersCsv(deps: Deps, filters: UserFilters): Promise<{ csv: string; rows: number }> {
  const rows = await mergeAcross(deps.shards, {
    read: readUsers(filters, undefined, false),
    compare: compareUsers(filters.sort),
    take: MAX_USER_ROWS,
    chunk: 1000,
  });
  const lines = [COLUMNS.join(",")];
  for (const row of rows) {
    const user = toAdminUser(row) as unknown as Record<string, unknown>;
    lines.push(COLUMNS.map((column) => field(user[column])).join(","));
  }
  return { csv: `${lines.join("\r\n")}\r\n`, rows: rows.length };
}
