import { and, eq, getTableColumns, gt, sql } from "drizzle-orm";
import { QueryBuilder } from "drizzle-orm/sqlite-core";
import { compileRead } from "../db/compiled-read";
import { sessions, type UserRow, users } from "../db/schema";

/** The columns the User resource is made of (and the other face's `app_metadata`): what the session check reads, and nothing secret. */
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
  // The Supabase face's `app_metadata` (its user object and its tokens' claim), read in the same row; the Nhost
  // User resource does not carry it (toWireUser).
  appMetadata: users.appMetadata,
} as const;

export type WireUserRow = Pick<UserRow, keyof typeof WIRE_USER_COLUMNS>;

const ALL_USER_COLUMNS = getTableColumns(users);
const query = new QueryBuilder();

/**
 * The reads of the two requests an app makes most (the session check and the refresh) and of the user by id,
 * compiled once (src/db/compiled-read.ts) so that each runs on the primary or on a nearby replica as its caller
 * decides, without Drizzle building the query again per request.
 */
export const userById = compileRead<{ id: string }, UserRow>(
  query
    .select(ALL_USER_COLUMNS)
    .from(users)
    .where(eq(users.id, sql.placeholder("id"))),
  ALL_USER_COLUMNS,
);

export const wireUserById = compileRead<{ id: string }, WireUserRow>(
  query
    .select(WIRE_USER_COLUMNS)
    .from(users)
    .where(eq(users.id, sql.placeholder("id"))),
  WIRE_USER_COLUMNS,
);

/**
 * What a refresh needs of its user: the User resource (the answer, and the claims, which are read off it), whether
 * the account is disabled, and the organization the session acts in (contract organizations.md §1), read in the same
 * row. No secret column (password hash, TOTP secret) is read on the hot path.
 */
export const SESSION_USER_COLUMNS = {
  ...WIRE_USER_COLUMNS,
  disabled: users.disabled,
  sessionOrgId: sessions.orgId,
  // For a face whose tokens list how the session began (GoTrue's `amr`), read in the same row.
  sessionMethod: sessions.method,
  sessionStartedAt: sessions.createdAt,
  sessionSecondFactorPending: sessions.secondFactorPending,
  // An impersonation's actor and end (contract operators.md §1): a refresh keeps them and stops at the end.
  sessionActor: sessions.actor,
  sessionEndsAt: sessions.endsAt,
} as const;
export type SessionUserRow = Pick<UserRow, keyof typeof WIRE_USER_COLUMNS | "disabled"> & {
  sessionOrgId: string | null;
  sessionMethod: string | null;
  sessionStartedAt: number;
  sessionSecondFactorPending: boolean;
  sessionActor: string | null;
  sessionEndsAt: number | null;
};

/** The session, if it is still live, joined with its user's current row. */
export const liveSessionUser = compileRead<{ sessionId: string; now: number }, SessionUserRow>(
  query
    .select(SESSION_USER_COLUMNS)
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(
      and(eq(sessions.id, sql.placeholder("sessionId")), gt(sessions.expiresAt, sql.placeholder("now"))),
    ),
  SESSION_USER_COLUMNS,
);
