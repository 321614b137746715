import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from "@simplewebauthn/server";
import { isoBase64URL } from "@simplewebauthn/server/helpers";
import type { Deps } from "../../http/deps";
import {
  assertWebauthnEnabled,
  CEREMONY_TIMEOUT_MS,
  ceremonyFailed,
  expectations,
  startCeremony,
  takeCeremony,
  verified,
} from "./ceremonies";
import { descriptors, keysOfUser } from "./security-keys";

/**
 * WebAuthn keys that are second factors only (GoTrue's `webauthn` factors, contract supabase.md §2): the core's
 * ceremonies (options from the core's relying party, the challenge in its WebauthnChallenge object, taken once), but
 * the key is kept by its factor (src/auth/mfa/webauthn-factors.ts), never among the security keys: it is not a
 * passkey, signs nobody in, and each assertion is checked against that one factor's key.
 */

/** A factor's key, as its factor stores it: the public key only, and the signature counter. */
export interface FactorKey {
  credentialId: string;
  publicKey: string;
  counter: number;
  transports: string[];
}

/** The user handle, as registration.ts makes it: the user's id. */
const userHandle = (userId: string) => new Uint8Array(new TextEncoder().encode(userId));

/**
 * Creation options for a factor's key: excluding the user's security keys and other factors' keys (`others`), so an
 * authenticator that holds one of them says so instead of registering it twice.
 */
export async function factorCreationOptions(
  deps: Deps,
  user: { id: string; name: string; displayName: string },
  factorId: string,
  others: FactorKey[],
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  assertWebauthnEnabled(deps);
  const { rpId, rpName } = deps.config.webauthn;
  const keys = await keysOfUser(deps.shards.ofUser(user.id), user.id);
  const options = await generateRegistrationOptions({
    rpName,
    rpID: rpId,
    userID: userHandle(user.id),
    userName: user.name,
    userDisplayName: user.displayName,
    timeout: CEREMONY_TIMEOUT_MS,
    attestationType: "none",
    excludeCredentials: [
      ...descriptors(keys),
      ...others.map((key) => ({ id: key.credentialId, transports: key.transports })),
    ] as { id: string }[],
    authenticatorSelection: { residentKey: "discouraged", userVerification: "preferred" },
  });
  await startCeremony(deps, options.challenge, { kind: "factor-create", userId: user.id, factorId });
  return options;
}

/** Request options naming the factor's one key. */
export async function factorRequestOptions(
  deps: Deps,
  userId: string,
  factorId: string,
  key: FactorKey,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  assertWebauthnEnabled(deps);
  const options = await generateAuthenticationOptions({
    rpID: deps.config.webauthn.rpId,
    allowCredentials: [{ id: key.credentialId, transports: key.transports as never }],
    timeout: CEREMONY_TIMEOUT_MS,
    userVerification: "preferred",
  });
  await startCeremony(deps, options.challenge, { kind: "factor-request", userId, factorId });
  return options;
}

/** The challenge a response answers (inside its client data), for a face that names it beside the response. */
export function answeredChallenge(clientDataJSON: string): string | null {
  try {
    const challenge = JSON.parse(isoBase64URL.toUTF8String(clientDataJSON)).challenge;
    return typeof challenge === "string" && challenge.length > 0 && challenge.length <= 256
      ? challenge
      : null;
  } catch {
    return null;
  }
}

/** The ceremony taken once, and held to its user and factor: another's challenge is no challenge. */
async function takeFactorCeremony(
  deps: Deps,
  clientDataJSON: string,
  kind: "factor-create" | "factor-request",
  owner: { userId: string; factorId: string },
): Promise<string> {
  const { challenge, ceremony } = await takeCeremony(deps, clientDataJSON, kind);
  if (ceremony.userId !== owner.userId || ceremony.factorId !== owner.factorId) {
    throw ceremonyFailed("challenge belongs to another factor", "challenge");
  }
  return challenge;
}

/** The new key of an unverified factor, from the response to its creation options. */
export async function verifyFactorCreation(
  deps: Deps,
  owner: { userId: string; factorId: string },
  response: RegistrationResponseJSON,
): Promise<FactorKey> {
  assertWebauthnEnabled(deps);
  const challenge = await takeFactorCeremony(deps, response.response.clientDataJSON, "factor-create", owner);
  const result = await verified(verifyRegistrationResponse({ response, ...expectations(deps, challenge) }));
  if (!result.verified) throw ceremonyFailed("registration not verified");
  const { credential } = result.registrationInfo;
  return {
    credentialId: credential.id,
    publicKey: isoBase64URL.fromBuffer(credential.publicKey),
    counter: credential.counter,
    transports: credential.transports ?? [],
  };
}

/**
 * An assertion by the factor's own key (another key of the same user is refused, WebAuthn §7.2 step 5), whose user
 * handle, when sent, names the user. Answers the new signature counter, which the factor stores conditionally on the
 * one checked here (the library refuses a counter that did not grow: a cloned authenticator).
 */
export async function verifyFactorAssertion(
  deps: Deps,
  owner: { userId: string; factorId: string },
  response: AuthenticationResponseJSON,
  key: FactorKey,
): Promise<number> {
  assertWebauthnEnabled(deps);
  const challenge = await takeFactorCeremony(deps, response.response.clientDataJSON, "factor-request", owner);
  return (await assertByFactorKey(deps, challenge, owner.userId, response, key)).counter;
}

/**
 * An assertion answering `challenge` by one factor's key (another key is refused, WebAuthn §7.2 step 5), whose user
 * handle, when sent, names `userId`: the new signature counter, and whether the authenticator verified the user.
 */
export async function assertByFactorKey(
  deps: Deps,
  challenge: string,
  userId: string,
  response: AuthenticationResponseJSON,
  key: FactorKey,
): Promise<{ counter: number; userVerified: boolean }> {
  if (response.id !== key.credentialId) throw ceremonyFailed("assertion by another key than the factor's");
  const handle = response.response.userHandle;
  if (handle && answeredHandle(handle) !== userId) throw ceremonyFailed("userHandle names another user");
  const result = await verified(
    verifyAuthenticationResponse({
      response,
      credential: {
        id: key.credentialId,
        publicKey: isoBase64URL.toBuffer(key.publicKey),
        counter: key.counter,
        transports: key.transports as never,
      },
      ...expectations(deps, challenge),
    }),
  );
  if (!result.verified) throw ceremonyFailed("assertion not verified");
  return {
    counter: result.authenticationInfo.newCounter,
    userVerified: result.authenticationInfo.userVerified,
  };
}

function answeredHandle(handle: string): string | null {
  try {
    return isoBase64URL.toUTF8String(handle);
  } catch {
    return null;
  }
}
