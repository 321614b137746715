import {
  generateRegistrationOptions,
  type PublicKeyCredentialCreationOptionsJSON,
  type RegistrationResponseJSON,
  verifyRegistrationResponse,
} from "@simplewebauthn/server";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { randomUuid } from "../../lib/crypto";
import { isEmailAllowed } from "../../lib/email-access";
import { completeSignUp } from "../accounts";
import type { Session } from "../new-sessions";
import { createUser, removeUser } from "../new-users";
import type { SignInScope } from "../sign-in";
import { resolveSignUpOptions, type SignUpOptions } from "../sign-up-options";
import { findUserByEmail, requireRegisteredUser } from "../users";
import { backupFlags } from "./backup-state";
import {
  assertWebauthnEnabled,
  CEREMONY_TIMEOUT_MS,
  ceremonyFailed,
  expectations,
  startCeremony,
  takeCeremony,
  verified,
} from "./ceremonies";
import { descriptors, keysOfUser, registerSecurityKey, type VerifiedCreation } from "./security-keys";
import { type UpgradeClaim, upgradeAllowed } from "./upgrade";
import { mailUpgradeAfterAnswer } from "./upgrade-mail";

/** The user handle is the user's id: stable, and reveals nothing (WebAuthn §14.6.1: no email in the handle). */
const userHandle = (userId: string) => new Uint8Array(new TextEncoder().encode(userId));

/**
 * A passkey is a discoverable credential (WebAuthn §6.2.2), found by the authenticator with no user named first; a
 * security key may be either. `preferred` lets an authenticator without resident storage register a key for
 * sign-in by email and elevation; `required` is for an API whose sign-in names nobody (GoTrue's passkeys).
 */
export type ResidentKey = "preferred" | "required";

function creationOptions(
  deps: Deps,
  user: { id: string; name: string; displayName: string },
  exclude: { id: string; transports?: string[] }[],
  residentKey: ResidentKey = "preferred",
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const { rpId, rpName } = deps.config.webauthn;
  return generateRegistrationOptions({
    rpName,
    rpID: rpId,
    userID: userHandle(user.id),
    userName: user.name,
    userDisplayName: user.displayName,
    timeout: CEREMONY_TIMEOUT_MS,
    attestationType: "none",
    excludeCredentials: exclude,
    // Discoverable where the authenticator can (passkeys), so sign-in works without typing an email.
    authenticatorSelection: { residentKey, userVerification: "preferred" },
  });
}

/**
 * `withoutPresence`: an upgrade's conditional create (upgrade.ts), where the authenticator may report user presence 0
 * (WebAuthn L3 §7.1 step 14 is skipped for it); every other registration requires it. The backup flags are kept
 * with the key (backup-state.ts); BE=0 with BS=1 is malformed (§6.1) and the library refuses it: the ceremony's 400.
 */
async function verifyCreation(
  deps: Deps,
  response: RegistrationResponseJSON,
  challenge: string,
  withoutPresence = false,
): Promise<VerifiedCreation> {
  const result = await verified(
    verifyRegistrationResponse({
      response,
      ...expectations(deps, challenge),
      requireUserPresence: !withoutPresence,
    }),
  );
  if (!result.verified) throw ceremonyFailed("registration not verified");
  return { credential: result.registrationInfo.credential, backup: backupFlags(result.registrationInfo) };
}

/** signUpWebauthn: the options to create a credential for a new account; the account exists only after verify. */
export async function signUpWebauthn(
  deps: Deps,
  input: { email: string; options?: SignUpOptions },
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  assertWebauthnEnabled(deps);
  const { config } = deps;
  const email = input.email.toLowerCase();
  if (config.signUp.disabled) throw new AppError("signup-disabled");
  if (!isEmailAllowed(email, config)) throw new AppError("invalid-email-password");
  const options = resolveSignUpOptions(config, input.options, email);
  if (await findUserByEmail(deps.shards, email)) throw new AppError("email-already-in-use");
  const userId = randomUuid();
  const creation = await creationOptions(
    deps,
    { id: userId, name: email, displayName: options.displayName },
    [],
  );
  await startCeremony(deps, creation.challenge, { kind: "sign-up", userId, email, options });
  return creation;
}

/** verifySignUpWebauthn: creates the user and its first key; then as any sign-up (verification mail or session). */
export async function verifySignUpWebauthn(
  scope: SignInScope,
  input: { credential: RegistrationResponseJSON; options?: SignUpOptions; nickname?: string },
): Promise<{ session: Session | null }> {
  const { deps } = scope;
  assertWebauthnEnabled(deps);
  const { challenge, ceremony } = await takeCeremony(
    deps,
    input.credential.response.clientDataJSON,
    "sign-up",
  );
  const made = await verifyCreation(deps, input.credential, challenge);
  const options = input.options
    ? resolveSignUpOptions(deps.config, input.options, ceremony.email)
    : ceremony.options;
  const user = await createUser(deps, {
    admission: "ceremony",
    method: scope.method,
    id: ceremony.userId,
    email: ceremony.email,
    options,
  });
  if (!user) throw new AppError("email-already-in-use");
  try {
    await registerSecurityKey(deps.shards.ofUser(user.id), user.id, made, input.nickname, deps.now());
  } catch (error) {
    await removeUser(deps, user.id);
    throw error;
  }
  return completeSignUp(scope, user, { redirectTo: options.redirectTo });
}

/**
 * addSecurityKey: creation options for the signed-in user, excluding the keys they already have. With
 * `upgrade` (the caller's session, the access token's `sid`), an upgrade's, when `upgradeAllowed`: a discoverable
 * passkey, for that session only.
 */
export async function addSecurityKey(
  deps: Deps,
  userId: string,
  residentKey: ResidentKey = "preferred",
  upgrade?: UpgradeClaim,
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  assertWebauthnEnabled(deps);
  const upgradeSessionId = upgrade && (await upgradeAllowed(deps, userId, upgrade));
  const user = await requireRegisteredUser(deps, userId);
  const name = user.email ?? user.phoneNumber ?? user.id;
  const keys = await keysOfUser(deps.shards.ofUser(user.id), user.id);
  const creation = await creationOptions(
    deps,
    { id: user.id, name, displayName: user.displayName },
    descriptors(keys),
    upgradeSessionId ? "required" : residentKey,
  );
  await startCeremony(deps, creation.challenge, {
    kind: "add-key",
    userId: user.id,
    ...(upgradeSessionId ? { upgradeSessionId } : {}),
  });
  return creation;
}

/**
 * verifyAddSecurityKey: the new key, for the user who asked for the options and no one else. An upgrade's options
 * are answered only from the session that asked for them, still within its window (upgrade.ts); its key records the
 * session, and the user is mailed.
 */
export async function verifyAddSecurityKey(
  deps: Deps,
  userId: string,
  input: { credential: RegistrationResponseJSON; nickname?: string },
  claim?: UpgradeClaim,
): Promise<{ id: string; nickname?: string }> {
  assertWebauthnEnabled(deps);
  const { challenge, ceremony } = await takeCeremony(
    deps,
    input.credential.response.clientDataJSON,
    "add-key",
  );
  if (ceremony.userId !== userId) throw ceremonyFailed("challenge belongs to another user", "challenge");
  const upgrade = ceremony.upgradeSessionId;
  if (upgrade) {
    if (!claim || upgrade !== claim.sessionId) {
      throw ceremonyFailed("an upgrade's challenge of another session", "challenge");
    }
    await upgradeAllowed(deps, userId, claim);
  }
  const made = await verifyCreation(deps, input.credential, challenge, upgrade !== undefined);
  const key = await registerSecurityKey(
    deps.shards.ofUser(userId),
    userId,
    made,
    input.nickname,
    deps.now(),
    upgrade,
  );
  deps.audit({
    type: "security-key.added",
    userId,
    detail: { keyId: key.id, nickname: key.nickname ?? null, ...(upgrade ? { upgrade: true } : {}) },
  });
  if (upgrade) mailUpgradeAfterAnswer(deps, userId, key.createdAt);
  return key.nickname ? { id: key.id, nickname: key.nickname } : { id: key.id };
}
