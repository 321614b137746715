import { and } from "drizzle-orm";
import { users } from "../db/schema";
import type { Deps } from "../http/deps";
import { MAX_USER_ROWS, type UserFilters, userConditions, userOrder } from "./user-filters";
import { toAdminUser } from "./users";
import type { AdminUser } from "./wire";

/** The console's user list (filters, orders, pages) and its CSV export, over the same conditions. */

export async function listUsersFiltered(
  deps: Deps,
  filters: UserFilters,
  page: { limit: number; offset: number },
): Promise<{ items: AdminUser[]; hasMore: boolean }> {
  const offset = Math.min(Math.max(0, page.offset), MAX_USER_ROWS);
  const rows = await deps.db
    .select()
    .from(users)
    .where(and(...userConditions(filters)))
    .orderBy(...userOrder(filters.sort))
    .limit(page.limit + 1)
    .offset(offset)
    .all();
  return { items: rows.slice(0, page.limit).map(toAdminUser), hasMore: rows.length > page.limit };
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
  const rows = await deps.db
    .select()
    .from(users)
    .where(and(...userConditions(filters)))
    .orderBy(...userOrder(filters.sort))
    .limit(MAX_USER_ROWS)
    .all();
  const lines = [COLUMNS.join(",")];
  for (const row of rows) {
    const user = toAdminUser(row) as unknown as Record<string, unknown>;
    lines.push(COLUMNS.map((column) => field(user[column])).join(","));
  }
  return { csv: `${lines.join("\r\n")}\r\n`, rows: rows.length };
}
