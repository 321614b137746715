import { isoBase64URL } from "@simplewebauthn/server/helpers";
import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { mfaFactors } from "../../db/schema";
import type { Deps } from "../../http/deps";
import { keysOfUser } from "./security-keys";

/**
 * What the pages tell the browser through the Signal API (WebAuthn L3 §5.1.10: `signalAllAcceptedCredentials`,
 * `signalCurrentUserDetails`), so the password manager keeps in step with the account. The one danger is a list that
 * leaves out a working credential: the password manager would delete it. So `allAcceptedCredentialIds` is given only
 * when it is the whole list for the RP ID: the user's security keys and passkeys, and no WebAuthn second factor
 * (the Supabase face's `webauthn` factors are credentials of the same RP ID, held elsewhere: with any, no list).
 */
export interface CredentialSignals {
  rpId: string;
  /** The user handle (registration.ts: the user id's UTF-8), base64url, as the authenticator holds it. */
  userId: string;
  name: string;
  displayName: string;
  /** Absent when the list would not be complete for the RP ID. */
  allAcceptedCredentialIds?: string[];
}

/** Whether the user has a WebAuthn second factor (a credential of the same RP ID outside `security_keys`). */
export async function hasWebauthnFactor(db: Db, userId: string): Promise<boolean> {
  const factor = await db
    .select({ id: mfaFactors.id })
    .from(mfaFactors)
    .where(and(eq(mfaFactors.userId, userId), eq(mfaFactors.factorType, "webauthn")))
    .get();
  return factor !== undefined;
}

export async function credentialSignals(
  deps: Deps,
  user: { id: string; email: string | null; phoneNumber: string | null; displayName: string },
): Promise<CredentialSignals> {
  const db = deps.shards.ofUser(user.id);
  const [keys, factor] = await Promise.all([keysOfUser(db, user.id), hasWebauthnFactor(db, user.id)]);
  // The name a passkey was made with (registration.ts `addSecurityKey`), as it is now.
  const name = user.email ?? user.phoneNumber ?? user.id;
  return {
    rpId: deps.config.webauthn.rpId,
    userId: isoBase64URL.fromUTF8String(user.id),
    name,
    displayName: user.displayName || name,
    ...(factor ? {} : { allAcceptedCredentialIds: keys.map((key) => key.credentialId) }),
  };
}
