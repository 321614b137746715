import { factorsOf, findUserById } from "../../../auth";
import type { Deps } from "../../../http/deps";
import { GoTrueError } from "./errors";
import { aalOf } from "./tokens";

/**
 * A verified second factor: TOTP turned on, or a verified factor of the list (phone, `webauthn`). A passkey is none:
 * having one asks for no aal2 (docs/decisions.md, "Issue 43: webauthn factors").
 */
export async function hasSecondFactor(deps: Deps, user: { id: string; activeMfaType: string | null }) {
  if (user.activeMfaType) return true;
  const row = await findUserById(deps.shards, user.id);
  return row !== undefined && (await factorsOf(deps, row)).some((factor) => factor.status === "verified");
}

/**
 * GoTrue's rule for `PUT /user` (its UserUpdate): on an account with a second factor, a session that began with the
 * first factor alone (aal1: the password, a mailed link or code) changes neither the password, nor the email, nor
 * the phone. Otherwise whoever holds the password, or reads the mailbox, takes the account from its owner, second
 * factor and all. The level is the session row's (how it began), never the token's word.
 */
export async function requireAal2ForCredentials(
  deps: Deps,
  live: { id: string; activeMfaType: string | null; sessionMethod: string | null },
): Promise<void> {
  if (aalOf(live.sessionMethod) === "aal2" || !(await hasSecondFactor(deps, live))) return;
  throw new GoTrueError(
    401,
    "insufficient_aal",
    "AAL2 session is required to update email or password when MFA is enabled.",
  );
}
