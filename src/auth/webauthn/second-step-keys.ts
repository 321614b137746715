import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  type PublicKeyCredentialRequestOptionsJSON,
} from "@simplewebauthn/server";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { verifyAssertion } from "./authentication";
import {
  assertWebauthnEnabled,
  CEREMONY_TIMEOUT_MS,
  ceremonyFailed,
  startCeremony,
  takeCeremony,
} from "./ceremonies";
import { assertByFactorKey, type FactorKey } from "./factor-keys";
import { descriptors, keysOfUser } from "./security-keys";

/**
 * The passkey second step of a sign-in (issue 47, `POST /signin/mfa/webauthn` and `/verify`): after a first factor,
 * any key of the user's proves the second: a passkey or security key (`security_keys`), or a `webauthn` factor's key
 * (the Supabase face's, ./factor-keys.ts). One ceremony per request for options, held to its user and its ticket (the
 * ticket's hash), taken once. User verification is asked as `AUTH_MFA_WEBAUTHN_USER_VERIFICATION` says; whether it
 * happened is answered, so the session counts as phishing-resistant (`phr`) only when it did.
 */

/** Request options allowing every key of the user; 400 `mfa-type-not-found` when the user has none. */
export async function secondStepOptions(
  deps: Deps,
  userId: string,
  factorKeys: readonly FactorKey[],
  ticketHash: string,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  assertWebauthnEnabled(deps);
  const keys = await keysOfUser(deps.shards.ofUser(userId), userId);
  const allow = [
    ...descriptors(keys),
    ...factorKeys.map((key) => ({ id: key.credentialId, transports: key.transports })),
  ] as { id: string }[];
  if (allow.length === 0) throw new AppError("mfa-type-not-found", "the user has no key for this step");
  const options = await generateAuthenticationOptions({
    rpID: deps.config.webauthn.rpId,
    allowCredentials: allow,
    timeout: CEREMONY_TIMEOUT_MS,
    userVerification: deps.config.mfa.webauthnUserVerification,
  });
  await startCeremony(deps, options.challenge, { kind: "second-step", userId, ticketHash });
  return options;
}

/** Which key answered: a security key (its counter already moved), or a factor's (the caller stores its counter). */
export type SecondStepKey =
  | { kind: "security-key"; userVerified: boolean }
  | { kind: "factor"; factorId: string; key: FactorKey; counter: number; userVerified: boolean };

async function securityKeyAnswer(
  deps: Deps,
  response: AuthenticationResponseJSON,
  challenge: string,
  userId: string,
): Promise<SecondStepKey> {
  const asserted = await verifyAssertion(deps, response, challenge, { before: true, userId });
  // A user handle naming someone else leads to that user's key: it is no key of this user's.
  if (asserted.userId !== userId) throw ceremonyFailed("key of another user");
  return { kind: "security-key", userVerified: asserted.userVerified };
}

/**
 * The assertion of the second step: its ceremony taken (issued for this user and this ticket, else no challenge), then
 * checked against the factor key it names or the user's own security key (a key of another user is refused by its
 * shard and user handle, authentication.ts). Without user verification under `required`, refused.
 */
export async function verifySecondStepKey(
  deps: Deps,
  owner: { userId: string; ticketHash: string },
  response: AuthenticationResponseJSON,
  factorKeys: ReadonlyMap<string, FactorKey>,
): Promise<SecondStepKey> {
  assertWebauthnEnabled(deps);
  const { challenge, ceremony } = await takeCeremony(deps, response.response.clientDataJSON, "second-step");
  if (ceremony.userId !== owner.userId || ceremony.ticketHash !== owner.ticketHash) {
    throw ceremonyFailed("challenge belongs to another ticket", "challenge");
  }
  const factor = [...factorKeys].find(([, key]) => key.credentialId === response.id);
  const answered: SecondStepKey = factor
    ? {
        kind: "factor",
        factorId: factor[0],
        key: factor[1],
        ...(await assertByFactorKey(deps, challenge, owner.userId, response, factor[1])),
      }
    : await securityKeyAnswer(deps, response, challenge, owner.userId);
  if (deps.config.mfa.webauthnUserVerification === "required" && !answered.userVerified) {
    throw ceremonyFailed("user verification required");
  }
  return answered;
}
