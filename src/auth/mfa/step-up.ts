import type { UserRow } from "../../db/schema";
import type { Session } from "../new-sessions";
import { revokeSession } from "../revocation";
import { type SignInScope, startSession } from "../sign-in";
import type { Factor } from "./factors";

const STEP_UP_METHOD = {
  totp: "mfa-totp",
  phone: "mfa-sms",
  webauthn: "mfa-webauthn",
  email: "mfa-email",
} as const;

/**
 * A session stepped up by a second factor just verified (`verifyFactor`): a new session begun by that factor
 * (`mfa-totp`, `mfa-sms`, `mfa-webauthn`: GoTrue's `aal2`, which the Nhost face renews as its own TOTP sign-ins), and the session it
 * replaces ended, so no first-factor token of it lives on beside the new one.
 */
export async function stepUpSession(
  scope: SignInScope,
  user: UserRow,
  factor: Factor,
  replacedSessionId: string,
): Promise<Session> {
  const { session } = await startSession(scope, {
    user,
    method: STEP_UP_METHOD[factor.type],
  });
  await revokeSession(scope.deps, replacedSessionId);
  return session;
}
