import { and, eq } from "drizzle-orm";
import { base64url } from "jose";
import { findUserById, resolveRedirectTo, type Session, startImpersonatedSession } from "../auth";
import { impersonations, organizations, orgMembers, type UserRow } from "../db/schema";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { encrypt, sha256Hex } from "../lib/crypto";
import { withQuery } from "../lib/redirect";

/**
 * Starting an impersonation (contract operators.md §1): a session of the user whose tokens say who acts (`act`,
 * `amr` `imp`) and end at its end; a one-time link that lands the app signed in as a provider sign-in lands; the
 * audit's record of who, why and until when. The session is the pipeline's `startImpersonatedSession`: no sign-in
 * (no factor was shown), so none of a sign-in's checks or after-effects; the start is audited here, the user mailed at
 * the end.
 */

/** Default and longest lifetime, seconds. */
export const DEFAULT_LIFETIME_S = 3_600;
export const MAX_LIFETIME_S = 8 * 3_600;
/** The landing link's life, ms: long enough to open it, too short to forward it around. */
export const LANDING_LIFETIME_MS = 60_000;

export interface ImpersonationAsk {
  userId: string;
  reason: string;
  actor: string;
  /** The Worker that asked through the service binding (`AuthAdmin`), or null through the admin API. */
  caller: string | null;
  /** Seconds; at most `MAX_LIFETIME_S`. */
  expiresIn?: number;
  /** Where the landing link sends the app (the `redirectTo` allow-list); the deployment's default without it. */
  redirectTo?: string;
  userAgent?: string;
}

export interface Started {
  session: Session;
  url: string;
  endsAt: number;
}

export async function startImpersonation(deps: Deps, ask: ImpersonationAsk): Promise<Started> {
  const { config } = deps;
  if (!config.impersonation.enabled)
    throw new AppError("disabled-endpoint", "impersonation is off (AUTH_IMPERSONATION_ENABLED)");
  // Checked before anything is made: a bad target refuses the whole start.
  const target = resolveRedirectTo(config, ask.redirectTo);
  const user = await findUserById(deps.shards, ask.userId);
  if (!user || user.deletedAt !== null) throw new AppError("not-found", "no user with this id");
  if (user.disabled)
    throw new AppError("invalid-request", "the user is disabled: a disabled user is not impersonated");
  await refuseProtected(deps, user);
  const now = deps.now();
  const endsAt = now + (ask.expiresIn ?? DEFAULT_LIFETIME_S) * 1000;
  const session = await startImpersonatedSession(deps, user, {
    impersonation: { actor: ask.actor, endsAt },
    userAgent: ask.userAgent,
  });
  const secret = base64url.encode(crypto.getRandomValues(new Uint8Array(32)));
  await deps.db.insert(impersonations).values({
    id: session.refreshTokenId,
    userId: user.id,
    actor: ask.actor,
    caller: ask.caller,
    reason: ask.reason,
    startedAt: now,
    endsAt,
    landingHash: await sha256Hex(secret),
    landingSealed: await encrypt(
      config.secrets.encryptionKey,
      JSON.stringify({ refreshToken: session.refreshToken, target }),
    ),
    landingExpiresAt: now + LANDING_LIFETIME_MS,
  });
  deps.audit({
    type: "admin.impersonation.start",
    userId: user.id,
    detail: {
      sessionId: session.refreshTokenId,
      actor: ask.actor,
      caller: ask.caller,
      reason: ask.reason,
      endsAt: new Date(endsAt).toISOString(),
    },
  });
  return { session, url: withQuery(config.urls.auth("/impersonation/land"), { ticket: secret }), endsAt };
}

/**
 * A user holding a protected role (`AUTH_IMPERSONATION_PROTECTED_ROLES`), or a member of an organization that
 * enforces SSO (its IdP, not this service, vouches for its people), is impersonated only where the deployment said
 * so (`AUTH_IMPERSONATION_PRIVILEGED`): support impersonating an admin would act with an admin's rights.
 */
async function refuseProtected(deps: Deps, user: UserRow): Promise<void> {
  const { protectedRoles, privileged } = deps.config.impersonation;
  if (privileged) return;
  const held = [user.defaultRole, ...user.roles].find((role) => protectedRoles.includes(role));
  if (held)
    throw new AppError(
      "forbidden",
      `the user holds the protected role ${held}: impersonating them needs AUTH_IMPERSONATION_PRIVILEGED=true`,
    );
  const enforced = await deps.db
    .select({ id: organizations.id })
    .from(orgMembers)
    .innerJoin(organizations, eq(organizations.id, orgMembers.orgId))
    .where(and(eq(orgMembers.userId, user.id), eq(organizations.enforceSso, true)))
    .get();
  if (enforced)
    throw new AppError(
      "forbidden",
      "the user is a member of an organization that enforces SSO: impersonating them needs AUTH_IMPERSONATION_PRIVILEGED=true",
    );
}
