import { eq } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { z } from "zod";
import type { Db } from "../db/client";
import { idForUser } from "../db/routed-ids";
import { sessions, type UserRow, users } from "../db/schema";
import { slotOfUser } from "../db/shards";
import type { Deps } from "../http/deps";
import { HASURA_IMPERSONATOR_CLAIM } from "../http/impersonation";
import { randomUuid } from "../lib/crypto";
import { expiryOf, type HasuraClaims, type Impersonation, signAccessToken } from "../signing-keys/jwt";
import { getKeySet } from "../signing-keys/keys";
import { revokeFamily, startFamily } from "../token-families";
import type { WireUserRow } from "./hot-queries";
import type { ActiveMembership } from "./org-membership";
import { type PasswordRehash, rehashColumns } from "./password-rehash";
import { withPlace } from "./recent-places";
import { type EndedSession, endFamiliesOf, sessionsBeyondCap } from "./session-cap";
import { accessTokenClaims, customClaims } from "./token-claims";
import { toWireUser, wireUserSchema } from "./users";

/**
 * The `method` of a session carried from Nhost by the import (src/move-in/token-writes.ts): no flow here began it;
 * the session list labels it, and enforced SSO's sweep ends it with the other sessions no IdP vouched for.
 */
export const IMPORTED_NHOST_METHOD = "import:nhost";
/** The same for a session carried from Supabase (src/move-in/supabase-sessions.ts). */
export const IMPORTED_SUPABASE_METHOD = "import:supabase";

/** The Session resource of contract §2. */
export const sessionSchema = z.object({
  accessToken: z
    .string()
    .describe(
      "A JWT (RS256) with the Hasura claims; send it as `Authorization: Bearer`, or as `Authorization: DPoP` with a " +
        "proof when the session is DPoP-bound (`cnf.jkt`: signed in or refreshed with a `DPoP` proof)",
    ),
  accessTokenExpiresIn: z.number().int().describe("Seconds"),
  refreshToken: z.string().describe("Single use: `POST /token` rotates it"),
  refreshTokenId: z.uuid(),
  user: wireUserSchema,
});

export type Session = z.infer<typeof sessionSchema>;

/** SessionPayload (contract §2): a session, or none yet (a verification or a second factor is needed). */
export const sessionPayloadSchema = z.object({
  session: sessionSchema.nullable(),
  mfa: z
    .object({ ticket: z.string().describe("`mfaTotp:<uuid>`, five minutes: POST /signin/mfa/totp") })
    .nullable()
    .optional(),
});

export const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Where a UUID's version digit is (`xxxxxxxx-xxxx-Vxxx-…`), and the version a session token in an org carries. */
const VERSION_AT = 14;
const IN_ORG_VERSION = "8";

/**
 * Session refresh tokens keep the contract's UUID shape (§5.2): 32 hex digits, 128 bits. Their first six hex digits
 * (24 bits) are the session's locator (src/token-families/), so a refresh needs no lookup to find its family, nor its
 * session's database (`sessionLocator`); the rest is a UUID's tail, whose version and variant digits are fixed
 * (6 bits): the other 98 bits are random, and they are the secret (hashed at rest, as the whole token).
 *
 * The version digit says whether the session acts in an organization (`inOrg`): `8` (RFC 9562's custom version)
 * when it does, `4` otherwise and for every token minted before (docs/decisions.md, "Issue 48: a refresh in an org in
 * one wave"). A hint of what the refresh reads beside its rotation, never a grant: it is part of the hashed token (a
 * token with the digit changed is unknown to its object: 401), and the membership is read in every refresh anyway.
 * No random bit is spent on it, and a token from before can never be taken for one in an org.
 */
export const newSessionToken = (locator: string, inOrg = false) => {
  const token = `${locator}${randomUuid().slice(6)}`;
  return inOrg ? `${token.slice(0, VERSION_AT)}${IN_ORG_VERSION}${token.slice(VERSION_AT + 1)}` : token;
};
export const locatorOf = (refreshToken: string) => refreshToken.slice(0, 6);

/** Whether a refresh token was minted for a session acting in an organization (see `newSessionToken`). */
export const mintedInOrg = (refreshToken: string) => refreshToken[VERSION_AT] === IN_ORG_VERSION;

/**
 * A new session's locator: its user's slot (three hex digits, which name the user's shard, src/db/shards.ts), then
 * three random ones. A refresh then reads the session's database beside the rotation, from the token alone
 * (sessions/read-beside.ts). The locator was never secret (access tokens carry it, `session_locator`); the slot
 * is a hash of the user id, so the families of a shard still spread over all 2^24 objects as evenly as users do.
 */
export const sessionLocator = (userId: string) =>
  `${slotOfUser(userId).toString(16).padStart(3, "0")}${randomUuid().slice(0, 3)}`;

/** The access tokens' claim naming the session's family object (its locator): see `buildSession`. */
export const SESSION_LOCATOR_CLAIM = "session_locator";

export const refreshLifetimeMs = (deps: Deps) => deps.config.tokens.refreshTtl * 1000;

/**
 * What an access token is made of, for a face that shapes its own (src/faces/supabase/: GoTrue's claims over the same
 * session): the user as the session check reads it, the session, the Hasura claims the service computed (custom
 * claims and the hook included) and the binding. The Nhost face's token is `signAccessToken`'s.
 */
export interface AccessTokenFacts {
  user: WireUserRow;
  sessionId: string;
  claims: HasuraClaims;
  /** Claims at the top level (`org_id`). */
  topLevel: Record<string, string> | undefined;
  dpopJkt: string | null | undefined;
  now: number;
  /** How the session began (sign-in/method.ts) and when, for a face that lists the methods (`amr`). */
  method: string | null;
  startedAt: number;
  /** A first-factor session of a user with a verified second factor (GoTrue's `aal1`, `sessions.second_factor_pending`). */
  secondFactorPending: boolean;
  /** An impersonation's actor and end: the face's token carries `act`, `amr` `imp`, and ends no later. */
  impersonation?: Impersonation | null;
}

/** A face's own access token over the same session; none: the Nhost face's. */
export type AccessTokenMinter = (deps: Deps, facts: AccessTokenFacts) => Promise<string>;

export interface SessionClaims {
  /** Claims for this access token only (the elevated claim). */
  extraClaims?: HasuraClaims;
  /** The custom claims, when computed before anything was written (src/auth/token-claims.ts). */
  custom?: HasuraClaims;
  /** The organization the session acts in, its membership checked (contract organizations.md §1). */
  org?: ActiveMembership;
  /** The DPoP key the session's token family is bound to: the access token carries it as `cnf.jkt`. */
  dpopJkt?: string | null;
  /** When `custom` is not given: how the token came to be, for the custom-access-token hook (`refresh`). */
  authenticationMethod?: string;
  /** The face's own token (AccessTokenMinter), with the session's method and start. */
  mint?: {
    minter: AccessTokenMinter;
    method: string | null;
    startedAt: number;
    secondFactorPending: boolean;
  };
  /** An impersonated session (contract operators.md §1): its tokens say who acts and end no later than it. */
  impersonation?: Impersonation | null;
}

export async function buildSession(
  deps: Deps,
  user: WireUserRow,
  sessionId: string,
  refreshToken: string,
  now: number,
  { extraClaims, custom, org, dpopJkt, authenticationMethod, mint, impersonation }: SessionClaims = {},
): Promise<Session> {
  const wire = toWireUser(user);
  const computed = await accessTokenClaims(deps, user, extraClaims, wire, custom, org, authenticationMethod);
  // Hasura sees who acts inside its own namespace (permissions may refuse it), set after the custom claims so no
  // hook can hide it.
  const claims = impersonation ? { ...computed, [HASURA_IMPERSONATOR_CLAIM]: impersonation.actor } : computed;
  // `org_id` at the top level too, for consumers that don't read Hasura's namespace. `session_locator`: the object
  // of the session's token family (the refresh token's first six hex digits, not part of its secret), so the
  // service binding's `live` check asks that one object whether the session stands, with no D1 read
  // (src/platform/liveness.ts, docs/workers.md "Costs").
  const topLevel = {
    ...(org ? { org_id: org.orgId } : {}),
    [SESSION_LOCATOR_CLAIM]: locatorOf(refreshToken),
  };
  const accessToken = mint
    ? await mint.minter(deps, {
        user,
        sessionId,
        claims,
        topLevel,
        dpopJkt,
        now,
        method: mint.method,
        startedAt: mint.startedAt,
        secondFactorPending: mint.secondFactorPending,
        impersonation,
      })
    : await signAccessToken(deps.config, user.id, claims, now, sessionId, topLevel, dpopJkt, impersonation);
  const iat = Math.floor(now / 1000);
  return {
    accessToken,
    accessTokenExpiresIn: expiryOf(iat, deps.config.tokens.accessTtl, impersonation) - iat,
    refreshToken,
    refreshTokenId: sessionId,
    user: wire,
  };
}

/**
 * A face's reads of the signed-in user, run in the batch that writes the session (`writeSession`): the face's answer
 * carries what they read and the sign-in pays no D1 round trip more for it (issue 43, "Speed"). Their rows are left
 * in `results`, in their order.
 */
export interface ReadsAlongside {
  reads: (db: Db, userId: string) => BatchItem<"sqlite">[];
  results?: unknown[];
}

/**
 * Writes a new session (token family) for a user who has just authenticated; every sign-in reaches it through
 * ./sign-in/pipeline.ts, which ran the checks before it and runs the after-session hooks. `extraClaims` go into this
 * first access token only (the elevated claim): a refresh issues plain tokens. `org`: a session that starts inside
 * an organization (an enterprise sign-in), whose membership the caller has just checked or made.
 */
export async function writeSession(
  deps: Deps,
  user: UserRow,
  {
    method,
    userAgent,
    extraClaims,
    org,
    dpopJkt,
    minter,
    secondFactorPending = false,
    alongside,
    impersonation,
    passwordRehash,
  }: {
    /** The password's hash replaced in the batch's update of the user (./password-rehash.ts). */
    passwordRehash?: PasswordRehash;
    /** An impersonation (src/impersonation/): the session records who acts and ends at its end, not later. */
    impersonation?: Impersonation;
    alongside?: ReadsAlongside;
    /** A first-factor session short of the user's second factor (only a face with a `minter` asks for one). */
    secondFactorPending?: boolean;
    /** How it began (sign-in/method.ts). */
    method: string | null;
    /** The face's own access token (src/faces/); none: the Nhost face's. */
    minter?: AccessTokenMinter;
    userAgent?: string;
    extraClaims?: HasuraClaims;
    org?: ActiveMembership;
    /** The request's DPoP key (RFC 9449), checked before anything was written: the family is bound to it. */
    dpopJkt: string | null;
  },
): Promise<Session> {
  // First: custom claims that fail refuse the sign-in (503) before a session or an audit event exists; so does a
  // key set that cannot be read (D1 down at a cold isolate): nothing is written that the answer could not carry.
  const [custom] = await Promise.all([customClaims(deps, user, method ?? "other"), getKeySet(deps.config)]);
  const now = deps.now();
  // The session's id carries its user's slot: a refresh, which knows only the family (this id), finds the shard.
  const sessionId = idForUser(user.id);
  const db = deps.shards.ofUser(user.id);
  const locator = sessionLocator(user.id);
  // A session that starts in an org says so in its token: its refreshes read the membership beside the rotation.
  const refreshToken = newSessionToken(locator, org !== undefined);
  const lifetimeMs = impersonation
    ? Math.min(impersonation.endsAt - now, refreshLifetimeMs(deps))
    : refreshLifetimeMs(deps);
  const halves = await Promise.allSettled([
    db.batch([
      db.insert(sessions).values({
        id: sessionId,
        userId: user.id,
        createdAt: now,
        lastUsedAt: now,
        expiresAt: now + lifetimeMs,
        userAgent,
        locator,
        method,
        orgId: org?.orgId ?? null,
        dpopJkt,
        secondFactorPending,
        // Where it began, for the user's session list (contract §13).
        ip: deps.visitor.address,
        place: deps.visitor.place,
        actor: impersonation?.actor ?? null,
        endsAt: impersonation?.endsAt ?? null,
      }),
      db
        .update(users)
        // Where the user signed in from, in the same statement (./recent-places.ts); not an operator's place.
        .set({
          lastSeen: now,
          recentPlaces: impersonation ? undefined : withPlace(user.recentPlaces, deps.visitor.signals, now),
          ...(passwordRehash ? rehashColumns(passwordRehash, now) : {}),
        })
        .where(eq(users.id, user.id)),
      sessionsBeyondCap(db, user.id, sessionId, deps.config.tokens.maxSessionsPerUser),
      ...(alongside?.reads(db, user.id) ?? []),
    ]),
    startFamily(deps, locator, sessionId, refreshToken, lifetimeMs, { dpopJkt }),
  ]);
  const [row, family] = halves;
  if (row.status === "rejected" || family.status === "rejected") {
    // Half a session is none: a row no token refreshes would sit in the user's session list, a family without its
    // row refreshes nothing. The half that was made goes (after the answer, best effort: its binding may be down
    // too), and the client's retry makes a whole one (docs/operations.md, "When a binding fails").
    if (row.status === "fulfilled")
      deps.background(db.delete(sessions).where(eq(sessions.id, sessionId)).run());
    if (family.status === "fulfilled") deps.background(revokeFamily(deps, locator, sessionId));
    throw row.status === "rejected" ? row.reason : (family as PromiseRejectedResult).reason;
  }
  // The sessions the cap ended, ended in their objects after the answer (their rows are gone: no refresh of theirs).
  const beyondCap = row.value[2] as EndedSession[];
  if (beyondCap.length) deps.background(endFamiliesOf(deps, beyondCap, lifetimeMs));
  // After the session's writes: the face's reads, read in the same transaction.
  if (alongside) alongside.results = row.value.slice(3);
  return buildSession(deps, user, sessionId, refreshToken, now, {
    extraClaims,
    custom,
    org,
    dpopJkt,
    mint: minter && { minter, method, startedAt: now, secondFactorPending },
    impersonation,
  });
}
