import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  type PublicKeyCredentialRequestOptionsJSON,
  verifyAuthenticationResponse,
} from "@simplewebauthn/server";
import { isoBase64URL } from "@simplewebauthn/server/helpers";
import { and, eq } from "drizzle-orm";
import { securityKeys, type UserRow } from "../../db/schema";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { hmacSubkey } from "../../lib/subkeys";
import type { Session } from "../new-sessions";
import { type SignInScope, startSession } from "../sign-in";
import { findUserByEmail, findUserById } from "../users";
import { backupColumns, backupFlags, backupMoved, checkBackupEligibility } from "./backup-state";
import {
  assertWebauthnEnabled,
  CEREMONY_TIMEOUT_MS,
  type Ceremony,
  ceremonyFailed,
  expectations,
  startCeremony,
  takeCeremony,
  unknownCredential,
  verified,
} from "./ceremonies";
import { asCredential, descriptors, keyByCredentialId, keysOfUser } from "./security-keys";
import { hasWebauthnFactor } from "./signals";
import { phishingResistantUse } from "./upgrade";

/** How stale a key's `last_used_at` may be (the console shows it, src/admin/console/pages-passkeys.ts). */
const LAST_USED_ACCURACY_MS = 60 * 60 * 1000;

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
 * WebAuthn §7.2 step 6: the `userHandle` of the response, when present, must name the key's owner (our user handle
 * is the user id, registration.ts); when no user was identified before the ceremony (discoverable sign-in) it
 * must be present. Otherwise an assertion could say one user while the key belongs to another.
 */
function checkUserHandle(
  response: AuthenticationResponseJSON,
  ownerId: string,
  identifiedBefore: boolean,
): void {
  const handle = response.response.userHandle;
  if (!handle) {
    if (!identifiedBefore) throw ceremonyFailed("discoverable sign-in without a userHandle");
    return;
  }
  let named: string;
  try {
    named = isoBase64URL.toUTF8String(handle);
  } catch {
    throw ceremonyFailed("userHandle is not base64url");
  }
  if (named !== ownerId) throw ceremonyFailed("userHandle names another user than the key's owner");
}

/**
 * The user the `userHandle` names (our user handle is the user id, registration.ts): the shard to look for the key in,
 * ahead of the user identified before the ceremony. The handle is not signed, so it is only where to look:
 * `checkUserHandle` holds it against the key's owner, and the signature is checked against that key.
 */
function namedOwner(response: AuthenticationResponseJSON): string | null {
  const handle = response.response.userHandle;
  if (!handle) return null;
  try {
    return isoBase64URL.toUTF8String(handle);
  } catch {
    // checkUserHandle refuses it once the key is found.
    return null;
  }
}

/**
 * Verifies an assertion against the stored key and stores the new signature counter. The library refuses a counter
 * that did not grow (WebAuthn §6.1.1: a cloned authenticator). The UPDATE is conditional on the counter it was
 * checked against, so of two assertions carrying the same counter (a clone racing the original) one is refused.
 * Authenticators that keep no counter always send 0; there is nothing to move then.
 */
export async function verifyAssertion(
  deps: Deps,
  response: AuthenticationResponseJSON,
  challenge: string,
  identified: { before: boolean; userId: string | null },
): Promise<{ userId: string; userVerified: boolean; phishingResistant: boolean }> {
  const identifiedBefore = identified.before;
  const owner = namedOwner(response) ?? identified.userId;
  if (owner === null && !identifiedBefore) throw ceremonyFailed("discoverable sign-in without a userHandle");
  // A key is looked for in its user's shard only, so one shard's key can never sign in a user of another.
  const db = owner === null ? undefined : deps.shards.ofUser(owner);
  const key = db && (await keyByCredentialId(db, response.id));
  if (!db) throw ceremonyFailed("unknown credential");
  if (!key) {
    // Positive only when read from the owner's shard, and no second-factor key of theirs could be it.
    throw (await hasWebauthnFactor(db, owner!)) ? ceremonyFailed("unknown credential") : unknownCredential();
  }
  checkUserHandle(response, key.userId, identifiedBefore);
  const result = await verified(
    verifyAuthenticationResponse({
      response,
      credential: asCredential(key),
      ...expectations(deps, challenge),
    }),
  );
  if (!result.verified) throw ceremonyFailed("assertion not verified");
  const { newCounter } = result.authenticationInfo;
  // The backup flags (backup-state.ts): BE as registered, or refused; BS as this assertion says, kept with the key.
  const backup = backupFlags(result.authenticationInfo);
  checkBackupEligibility(key, backup);
  const now = deps.now();
  if (newCounter !== 0 || key.counter !== 0) {
    const moved = await db
      .update(securityKeys)
      .set({ counter: newCounter, lastUsedAt: now, ...backupColumns(backup) })
      .where(and(eq(securityKeys.id, key.id), eq(securityKeys.counter, key.counter)))
      .returning({ id: securityKeys.id })
      .get();
    if (!moved) throw ceremonyFailed("the signature counter moved during the ceremony");
  } else if (
    backupMoved(key, backup) ||
    key.lastUsedAt === null ||
    now - key.lastUsedAt > LAST_USED_ACCURACY_MS
  ) {
    // A key without a counter (most passkeys): its last use and backup state are no check, so written after the
    // answer: once an hour, or when BS moved (a passkey synced since its last use).
    deps.background(
      db
        .update(securityKeys)
        .set({ lastUsedAt: now, ...backupColumns(backup) })
        .where(eq(securityKeys.id, key.id))
        .run(),
    );
  }
  const { userVerified } = result.authenticationInfo;
  return {
    userId: key.userId,
    userVerified,
    phishingResistant: await phishingResistantUse(deps, key, userVerified),
  };
}

/**
 * A credential id that no authenticator holds, the same every time for one address: what an address without keys
 * (unknown, or a user who has none) is offered, so the options look like a real user's (WebAuthn §14.6.2,
 * "username enumeration"). Keyed HMAC: nobody can tell it from a real id or compute it for another address.
 */
async function decoyCredential(deps: Deps, email: string) {
  const key = await hmacSubkey(deps.config.secrets.encryptionKey, "webauthn-decoys");
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(email.toLowerCase()));
  return { id: isoBase64URL.fromBuffer(new Uint8Array(mac)), transports: ["internal", "hybrid"] };
}

/**
 * signInWebauthn: with an email, the user's keys are allowed; without, any discoverable credential (passkey). An
 * address without keys gets a decoy credential id: its options cannot be told from those of a user with a key,
 * and no authenticator can satisfy them.
 */
export async function signInWebauthn(
  deps: Deps,
  email?: string,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  assertWebauthnEnabled(deps);
  if (!email) return requestOptions(deps, [], { kind: "sign-in", userId: null, emailGiven: false });
  const user = await findUserByEmail(deps.shards, email);
  const keys = user ? await keysOfUser(deps.shards.ofUser(user.id), user.id) : [];
  const allow = keys.length > 0 ? descriptors(keys) : [await decoyCredential(deps, email)];
  return requestOptions(deps, allow, { kind: "sign-in", userId: user?.id ?? null, emailGiven: true });
}

function checkSignInAllowed(deps: Deps, user: UserRow | undefined): UserRow {
  if (!user) throw ceremonyFailed("the key's user no longer exists");
  if (user.disabled) throw new AppError("disabled-user");
  if (deps.config.signUp.emailVerifiedRequired && user.email && !user.emailVerified) {
    throw new AppError("unverified-user");
  }
  return user;
}

/** verifySignInWebauthn: the key signs in its user (the one named by email at the start, if one was). */
export async function verifySignInWebauthn(
  scope: SignInScope,
  credential: AuthenticationResponseJSON,
): Promise<{ session: Session }> {
  const { deps } = scope;
  assertWebauthnEnabled(deps);
  const { challenge, ceremony } = await takeCeremony(deps, credential.response.clientDataJSON, "sign-in");
  const { userId, phishingResistant } = await verifyAssertion(deps, credential, challenge, {
    before: ceremony.emailGiven,
    userId: ceremony.userId,
  });
  if (ceremony.emailGiven && ceremony.userId !== userId) throw ceremonyFailed("key of another user");
  const user = checkSignInAllowed(deps, await findUserById(deps.shards, userId));
  // An upgrade's passkey not yet used with user verification signs in, but is recorded as what it is worth
  // (upgrade.ts): never `phr` (src/browser/acr.ts reads the method).
  const recorded = phishingResistant ? scope : { ...scope, method: "webauthn-upgrade" as const };
  return { session: (await startSession(recorded, { user })).session };
}

/** elevateWebauthn: the signed-in user proves presence with one of their keys (contract §6). */
export async function elevateWebauthn(
  deps: Deps,
  userId: string,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  assertWebauthnEnabled(deps);
  const keys = await keysOfUser(deps.shards.ofUser(userId), userId);
  if (keys.length === 0)
    throw new AppError("invalid-request", "the user has no security key to elevate with");
  return requestOptions(deps, descriptors(keys), { kind: "elevate", userId });
}

/**
 * verifyElevateWebauthn: a new session whose first access token carries `x-hasura-auth-elevated` = the user id.
 * Only that token is elevated: refreshing it gives plain tokens, so elevation lasts one access-token lifetime.
 */
export async function verifyElevateWebauthn(
  scope: SignInScope,
  userId: string,
  credential: AuthenticationResponseJSON,
): Promise<{ session: Session }> {
  const { deps } = scope;
  assertWebauthnEnabled(deps);
  const { challenge, ceremony } = await takeCeremony(deps, credential.response.clientDataJSON, "elevate");
  if (ceremony.userId !== userId) throw ceremonyFailed("challenge belongs to another user", "challenge");
  const verifiedKey = await verifyAssertion(deps, credential, challenge, { before: true, userId });
  if (verifiedKey.userId !== userId) throw ceremonyFailed("key of another user");
  // An elevated token counts as a passkey's proof (`phr`, src/browser/step-up-sessions.ts): an upgrade's passkey
  // gives it only once used with user verification (upgrade.ts).
  if (!verifiedKey.phishingResistant) {
    throw ceremonyFailed("an upgrade's passkey elevates only with user verification");
  }
  const user = checkSignInAllowed(deps, await findUserById(deps.shards, userId));
  return { session: (await startSession(scope, { user, elevated: true })).session };
}
