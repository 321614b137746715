import { and, eq, gt, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { sessions, type UserRow, users } from "../../db/schema";

/** The columns the User resource is made of: what the session check reads, and nothing secret. */
export const WIRE_USER_COLUMNS = {
  id: users.id,
  createdAt: users.createdAt,
  displayName: users.displayName,
  avatarUrl: users.avatarUrl,
  locale: users.locale,
  email: users.email,
  emailVerified: users.emailVerified,
  phoneNumber: users.phoneNumber,
  phoneNumberVerified: users.phoneNumberVerified,
  defaultRole: users.defaultRole,
  roles: users.roles,
  isAnonymous: users.isAnonymous,
  activeMfaType: users.activeMfaType,
  metadata: users.metadata,
} as const;

export type WireUserRow = Pick<UserRow, keyof typeof WIRE_USER_COLUMNS>;

/**
 * The reads of the two requests an app makes most (the session check and the refresh), built once per database
 * instead of on every request: a profile of `GET /user` (docs/performance.md) showed Drizzle's query building as the
 * largest cost of ours after the JWT signature, about 8 % of the Worker's CPU. A prepared query keeps its SQL and
 * binds new values per call.
 */
function build(db: Db) {
  return {
    userById: db
      .select()
      .from(users)
      .where(eq(users.id, sql.placeholder("id")))
      .prepare(),
    wireUserById: db
      .select(WIRE_USER_COLUMNS)
      .from(users)
      .where(eq(users.id, sql.placeholder("id")))
      .prepare(),
    /** The session, if it is still live, joined with its user's current row. */
    liveSessionUser: db
      .select({ user: users })
      .from(sessions)
      .innerJoin(users, eq(users.id, sessions.userId))
      .where(
        and(eq(sessions.id, sql.placeholder("sessionId")), gt(sessions.expiresAt, sql.placeholder("now"))),
      )
      .prepare(),
  };
}

const prepared = new WeakMap<Db, ReturnType<typeof build>>();

export function hotQueries(db: Db): ReturnType<typeof build> {
  let queries = prepared.get(db);
  if (!queries) {
    queries = build(db);
    prepared.set(db, queries);
  }
  return queries;
}
