import type { UserRow } from "../../db/schema";
import { hashPassword, type PasswordCheck } from "../../lib/password";
import { rehashAlone } from "../password-rehash";
import { type SignInResult, type SignInScope, startSession } from "../sign-in";

/**
 * The session of a sign-in whose password the stored hash just proved (by email: ./sign-in.ts; by number:
 * ./phone-password.ts). A hash not at the current cost (an argon2id of before issue 48, bcrypt from Nhost, an
 * imported format) is replaced by the same password's at it, in the batch that writes the session: no write or round
 * trip of its own, and only while the row still holds the hash just verified (../password-rehash.ts). Its CPU (one
 * hash) is paid once per user; the next sign-in finds the hash at the current cost and leaves it.
 */
export async function startPasswordSession(
  scope: SignInScope,
  user: UserRow,
  password: string,
  check: PasswordCheck,
): Promise<SignInResult> {
  const { deps } = scope;
  const passwordRehash =
    user.passwordHash && check.needsRehash
      ? { from: user.passwordHash, to: await hashPassword(password, deps.config.passwordHashCost) }
      : undefined;
  let inBatch = false;
  try {
    const result = await startSession(scope, { user, mfaGate: true, passwordRehash });
    inBatch = result.session !== null;
    return result;
  } finally {
    // No session written, hence no batch (a second factor's ticket; a refusal after the password was proven, such as
    // `mfa-reset-required`; a failed write): the password was proven all the same, so it is replaced after the answer.
    if (passwordRehash && !inBatch)
      deps.background(rehashAlone(deps.shards, user.id, passwordRehash, deps.now()));
  }
}
