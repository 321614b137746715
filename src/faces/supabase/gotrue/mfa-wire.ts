import { type Factor, FactorError, factorsOf, findUserById, type Session } from "../../../auth";
import type { UserRow } from "../../../db/schema";
import type { Deps } from "../../../http/deps";
import { GoTrueError } from "./errors";
import { type GoTrueSession, goTrueSession } from "./wire";

/** GoTrue's factor object and its refusals (contract supabase.md §2, "Factors"), shaped from the core's. */

export interface GoTrueFactor {
  id: string;
  friendly_name: string;
  factor_type: Factor["type"];
  status: Factor["status"];
  phone?: string;
  created_at: string;
  updated_at: string;
}

export function goTrueFactor(factor: Factor): GoTrueFactor {
  return {
    id: factor.id,
    friendly_name: factor.friendlyName ?? "",
    factor_type: factor.type,
    status: factor.status,
    // GoTrue keeps numbers without their `+`, as in its user object (wire.ts).
    ...(factor.phone ? { phone: factor.phone.replace(/^\+/, "") } : {}),
    created_at: new Date(factor.createdAt).toISOString(),
    updated_at: new Date(factor.updatedAt).toISOString(),
  };
}

/** GoTrue's `factors` of a user object: present when the user has any (its `omitempty`). */
export async function factorsField(deps: Deps, user: UserRow): Promise<{ factors?: GoTrueFactor[] }> {
  const factors = await factorsOf(deps, user);
  return factors.length ? { factors: factors.map(goTrueFactor) } : {};
}

/**
 * A session with its user's `factors`, as GoTrue answers every grant: auth-js's `getAuthenticatorAssuranceLevel()`
 * reads them from the stored session to tell an app that an `aal1` session should step up.
 */
export async function sessionWithFactors(deps: Deps, session: Session): Promise<GoTrueSession> {
  const shaped = goTrueSession(session, deps.now());
  const user = await findUserById(deps.shards, session.user.id);
  return user ? { ...shaped, user: { ...shaped.user, ...(await factorsField(deps, user)) } } : shaped;
}

/** The core's refusal of a factor, in GoTrue's words (internal/api/mfa.go); anything else goes on. */
export function factorRefusal(error: unknown, factor?: Factor, challengeId?: string): never {
  if (!(error instanceof FactorError)) throw error;
  switch (error.reason) {
    case "name-conflict":
      throw new GoTrueError(
        422,
        "mfa_factor_name_conflict",
        "A factor with the friendly name for this user already exists",
      );
    case "too-many":
      throw new GoTrueError(
        422,
        "too_many_enrolled_mfa_factors",
        "Maximum number of verified factors reached, unenroll to continue",
      );
    case "verified-exists":
      throw new GoTrueError(
        422,
        "mfa_verified_factor_exists",
        "A verified phone factor already exists, unenroll the existing factor to continue",
      );
    case "invalid-phone":
      throw new GoTrueError(400, "validation_failed", "Invalid phone number format (E.164 required)");
    case "challenge-not-found":
      throw new GoTrueError(
        422,
        "mfa_factor_not_found",
        "MFA factor with the provided challenge ID not found",
      );
    case "challenge-expired":
      throw new GoTrueError(
        422,
        "mfa_challenge_expired",
        `MFA challenge ${challengeId} has expired, verify against another challenge or create a new challenge.`,
      );
    case "wrong-code":
      throw new GoTrueError(
        422,
        "mfa_verification_failed",
        factor?.type === "phone" ? "Invalid MFA Phone code entered" : "Invalid TOTP code entered",
      );
  }
}
