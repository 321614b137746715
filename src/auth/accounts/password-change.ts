import { eq } from "drizzle-orm";
import { users } from "../../db/schema";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { hashPassword } from "../../lib/password";
import { spentUnlessPutBack } from "../../lib/put-back";
import type { AccessTokenPayload } from "../../signing-keys/jwt";
import { dropFactorsFromBeforeProof, endOutstandingGrants, proveEmail } from "../credential-reset";
import { consumeTicket } from "../links";
import { forgetDevices } from "../lockout";
import { findUserById, requireRegisteredUser } from "../users";
import { checkPasswordPolicy } from "./password-policy";

/**
 * changeUserPassword (contract §3.4): with a bearer, the caller's own password; without one, a single-use
 * `passwordReset:` ticket names the user. Improvement: every other session of the user is revoked, since a changed
 * password usually means someone else may know the old one (OWASP Session Management, "renewal after privilege
 * change"). With a bearer the caller's own session (`sid`) stays; a reset by ticket has no session of its own, so
 * every session ends. `signOutOthers: false` (contract §13; default true) keeps the other sessions, except on the
 * first proof of a never-proven address, which ends everything (pre-hijacking, credential-reset.ts `proveEmail`).
 * Outstanding link tickets and PATs end in every case: a reset link or a PAT someone else obtained must not outlive
 * the reset (credential-reset.ts).
 */
export async function changeUserPassword(
  deps: Deps,
  input: { newPassword: string; ticket?: string; signOutOthers?: boolean },
  auth: Pick<AccessTokenPayload, "sub" | "sid"> | null,
): Promise<void> {
  let userId: string;
  let keepSessionId: string | undefined;
  if (auth) {
    userId = (await requireRegisteredUser(deps, auth.sub)).id;
    keepSessionId = auth.sid;
    await checkPasswordPolicy(deps, input.newPassword);
  } else {
    if (!input.ticket)
      throw new AppError("invalid-ticket", "a passwordReset ticket or an access token is required");
    // Check the policy before consuming the ticket, so a too-short password does not burn the user's link.
    await checkPasswordPolicy(deps, input.newPassword);
    const consumed = await consumeTicket(deps, input.ticket, "passwordReset");
    if (!consumed) throw new AppError("invalid-ticket");
    userId = consumed.userId;
    // A fault from here on puts the ticket back for the 503's retry (each step is safe to run again); anything else
    // spends it, its claimed row deleted after the answer.
    return spentUnlessPutBack(deps.background, "ticket", consumed, async () => {
      // The ticket was mailed to the address: on an account whose address was never proven, this is its first proof.
      const owner = await findUserById(deps.shards, userId);
      if (owner) await proveEmail(deps, owner, "inbox");
      await dropFactorsFromBeforeProof(deps, userId);
      await finishPasswordChange(deps, userId, input, undefined, false);
    });
  }
  await finishPasswordChange(deps, userId, input, keepSessionId, true);
}

async function finishPasswordChange(
  deps: Deps,
  userId: string,
  input: { newPassword: string; signOutOthers?: boolean },
  keepSessionId: string | undefined,
  signedIn: boolean,
) {
  const signOutOthers = input.signOutOthers ?? true;
  await setPassword(deps, userId, input.newPassword, keepSessionId, signOutOthers);
  deps.audit({ type: signedIn ? "password.change" : "password.reset", userId, detail: { signOutOthers } });
}

async function setPassword(
  deps: Deps,
  userId: string,
  newPassword: string,
  keepSessionId?: string,
  signOutOthers = true,
) {
  const passwordHash = await hashPassword(newPassword, deps.config.passwordHashCost);
  await deps.shards
    .ofUser(userId)
    .update(users)
    .set({ passwordHash, passwordChangedAt: deps.now(), updatedAt: deps.now() })
    .where(eq(users.id, userId));
  await endOutstandingGrants(deps, userId, keepSessionId, signOutOthers);
  // The lockout's known devices go with the old password: a browser someone else signed in on before the reset
  // counts with the account again (auth/lockout/known-devices.ts).
  await forgetDevices(deps, userId);
}

/**
 * A new password chosen on the OAuth2 page after a reset link landed there (the link proved the inbox and signed the
 * browser in as `sessionId`): the same policy and the same ending of every other session and grant as the API's.
 */
export async function resetPasswordInSession(
  deps: Deps,
  userId: string,
  sessionId: string,
  newPassword: string,
): Promise<void> {
  await requireRegisteredUser(deps, userId);
  await checkPasswordPolicy(deps, newPassword);
  await setPassword(deps, userId, newPassword, sessionId);
  deps.audit({ type: "password.reset", userId, detail: { via: "oauth2-page" } });
}
