import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from "@simplewebauthn/server";
import { and, eq } from "drizzle-orm";
import { mfaFactors } from "../../db/schema";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { sha256Hex } from "../../lib/crypto";
import { onFaultPutBack } from "../../lib/put-back";
import type { Session } from "../new-sessions";
import { secondStepOf } from "../second-step";
import { type SignInScope, startSession } from "../sign-in";
import { secondStepOptions, verifySecondStepKey } from "../webauthn";
import { consumeTicket, takeTicketAttempt, ticketUser } from "./step-tickets";
import { factorKeys } from "./webauthn-factors";

/**
 * The passkey second step (issue 47): an `mfaWebauthn:` ticket, from a first factor of a user whose step is a key (a
 * passkey or security key chosen as `activeMfaType: "webauthn"`, or a `webauthn` factor), completed by an assertion of
 * any of the user's keys: `POST /signin/mfa/webauthn {ticket}` answers the request options, `/verify {ticket,
 * credential}` the session. The ceremony is bound to the ticket; the ticket gives five tries and is spent once.
 */

/** Request options for the ticket's user: every key of theirs allowed. 401 `invalid-ticket` for a dead ticket. */
export async function signInMfaWebauthn(
  deps: Deps,
  ticket: string,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const found = await ticketUser(deps, ticket, ["webauthn"]);
  if (!found) throw new AppError("invalid-ticket");
  const keys = await factorKeys(deps, found.user.id);
  return secondStepOptions(deps, found.user.id, [...keys.values()], await sha256Hex(ticket));
}

/**
 * The assertion: one try taken from the ticket first, the ceremony (this ticket's) taken and checked, a factor key's
 * new counter stored conditionally on the one checked (a cloned key racing its original loses), then the ticket
 * consumed (of two right answers one gets the session). With user verification the session is `mfa-passkey`, which
 * counts as phishing-resistant; without, `mfa-webauthn` (a second factor, never `phr`).
 */
export async function verifySignInMfaWebauthn(
  scope: SignInScope,
  input: { ticket: string; credential: AuthenticationResponseJSON },
): Promise<{ session: Session }> {
  const { deps } = scope;
  const taken = await takeTicketAttempt(deps, input.ticket, ["webauthn"]);
  const { user } = taken;
  // The step is the user's current one: a key removed since the ticket is no step.
  if ((await secondStepOf(deps, user))?.kind !== "webauthn") throw new AppError("invalid-ticket");
  const answered = await verifySecondStepKey(
    deps,
    { userId: user.id, ticketHash: taken.ticketHash },
    input.credential,
    await factorKeys(deps, user.id),
  );
  if (answered.kind === "factor" && (answered.counter !== 0 || answered.key.counter !== 0)) {
    const moved = await taken.db
      .update(mfaFactors)
      .set({ secret: JSON.stringify({ ...answered.key, counter: answered.counter }) })
      .where(and(eq(mfaFactors.id, answered.factorId), eq(mfaFactors.secret, JSON.stringify(answered.key))))
      .returning({ id: mfaFactors.id })
      .get();
    if (!moved) throw new AppError("invalid-request", "invalid WebAuthn response");
  }
  const consumed = await consumeTicket(taken);
  const method = answered.userVerified ? "mfa-passkey" : "mfa-webauthn";
  // A fault from here on puts the ticket back: a new ceremony answers it, without the password again.
  return onFaultPutBack(consumed, async () => ({
    session: (await startSession(scope, { user, method })).session,
  }));
}
