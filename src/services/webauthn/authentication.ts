import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  type PublicKeyCredentialRequestOptionsJSON,
  verifyAuthenticationResponse,
} from "@simplewebauthn/server";
import { eq } from "drizzle-orm";
import { securityKeys, type UserRow } from "../../db/schema";
import { AppError } from "../../errors";
import type { Deps } from "../deps";
import { createSession, type Session } from "../sessions";
import { findUserByEmail, findUserById } from "../users";
import {
  assertWebauthnEnabled,
  CEREMONY_TIMEOUT_MS,
  type Ceremony,
  ceremonyFailed,
  expectations,
  startCeremony,
  takeCeremony,
  verified,
} from "./ceremonies";
import { asCredential, descriptors, keyByCredentialId, keysOfUser } from "./security-keys";

async function requestOptions(
  deps: Deps,
  allow: { id: string; transports?: string[] }[],
  ceremony: Ceremony,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const options = await generateAuthenticationOptions({
    rpID: deps.config.webauthn.rpId,
    allowCredentials: allow,
    timeout: CEREMONY_TIMEOUT_MS,
    userVerification: "preferred",
  });
  await startCeremony(deps, options.challenge, ceremony);
  return options;
}

/**
 * Verifies an assertion against the stored key and stores the new signature counter. The library refuses a counter
 * that did not grow (WebAuthn §6.1.1: a cloned authenticator); the UPDATE only moves the counter forward.
 */
async function verifyAssertion(
  deps: Deps,
  response: AuthenticationResponseJSON,
  challenge: string,
): Promise<{ userId: string }> {
  const key = await keyByCredentialId(deps.db, response.id);
  if (!key) throw ceremonyFailed("unknown credential");
  const result = await verified(
    verifyAuthenticationResponse({
      response,
      credential: asCredential(key),
      ...expectations(deps, challenge),
    }),
  );
  if (!result.verified) throw ceremonyFailed("assertion not verified");
  await deps.db
    .update(securityKeys)
    .set({ counter: result.authenticationInfo.newCounter })
    .where(eq(securityKeys.id, key.id));
  return { userId: key.userId };
}

/**
 * signInWebauthn: with an email, the user's keys are allowed; without, any discoverable credential (passkey). An
 * unknown email gets options like any other (no enumeration) that no key can satisfy.
 */
export async function signInWebauthn(
  deps: Deps,
  email?: string,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  assertWebauthnEnabled(deps);
  if (!email) return requestOptions(deps, [], { kind: "sign-in", userId: null, emailGiven: false });
  const user = await findUserByEmail(deps.db, email);
  const keys = user ? await keysOfUser(deps.db, user.id) : [];
  return requestOptions(deps, descriptors(keys), {
    kind: "sign-in",
    userId: user?.id ?? null,
    emailGiven: true,
  });
}

function checkSignInAllowed(deps: Deps, user: UserRow | undefined): UserRow {
  if (!user) throw ceremonyFailed("the key's user no longer exists");
  if (user.disabled) throw new AppError("disabled-user");
  if (deps.config.AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED && user.email && !user.emailVerified) {
    throw new AppError("unverified-user");
  }
  return user;
}

/** verifySignInWebauthn: the key signs in its user (the one named by email at the start, if one was). */
export async function verifySignInWebauthn(
  deps: Deps,
  credential: AuthenticationResponseJSON,
  userAgent?: string,
): Promise<{ session: Session }> {
  assertWebauthnEnabled(deps);
  const { challenge, ceremony } = await takeCeremony(deps, credential.response.clientDataJSON, "sign-in");
  const { userId } = await verifyAssertion(deps, credential, challenge);
  if (ceremony.emailGiven && ceremony.userId !== userId) throw ceremonyFailed("key of another user");
  const user = checkSignInAllowed(deps, await findUserById(deps.db, userId));
  return { session: await createSession(deps, user, userAgent) };
}

/** elevateWebauthn: the signed-in user proves presence with one of their keys (contract §6). */
export async function elevateWebauthn(
  deps: Deps,
  userId: string,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  assertWebauthnEnabled(deps);
  const keys = await keysOfUser(deps.db, userId);
  if (keys.length === 0)
    throw new AppError("invalid-request", "the user has no security key to elevate with");
  return requestOptions(deps, descriptors(keys), { kind: "elevate", userId });
}

/**
 * verifyElevateWebauthn: a new session whose first access token carries `x-hasura-auth-elevated` = the user id.
 * Only that token is elevated: refreshing it gives plain tokens, so elevation lasts one access-token lifetime.
 */
export async function verifyElevateWebauthn(
  deps: Deps,
  userId: string,
  credential: AuthenticationResponseJSON,
  userAgent?: string,
): Promise<{ session: Session }> {
  assertWebauthnEnabled(deps);
  const { challenge, ceremony } = await takeCeremony(deps, credential.response.clientDataJSON, "elevate");
  if (ceremony.userId !== userId) throw ceremonyFailed("challenge belongs to another user");
  const verifiedKey = await verifyAssertion(deps, credential, challenge);
  if (verifiedKey.userId !== userId) throw ceremonyFailed("key of another user");
  const user = checkSignInAllowed(deps, await findUserById(deps.db, userId));
  return { session: await createSession(deps, user, userAgent, { "x-hasura-auth-elevated": user.id }) };
}
