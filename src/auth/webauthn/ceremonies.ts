import { isoBase64URL } from "@simplewebauthn/server/helpers";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import type { ResolvedSignUpOptions } from "../sign-up-options";

/** How long a browser may take between the options and the response (WebAuthn §5.4 `timeout` is advisory). */
export const CEREMONY_TIMEOUT_MS = 5 * 60 * 1000;

/** What a challenge was issued for; stored in its Durable Object until the response comes back. */
export type Ceremony =
  | { kind: "sign-up"; userId: string; email: string; options: ResolvedSignUpOptions }
  | { kind: "sign-in"; userId: string | null; emailGiven: boolean }
  | { kind: "elevate"; userId: string }
  // `upgradeSessionId`: an upgrade (upgrade.ts), for that session only.
  | { kind: "add-key"; userId: string; upgradeSessionId?: string }
  // A second factor's key (factor-keys.ts): made for an unverified factor, asserted for a verified one.
  | { kind: "factor-create"; userId: string; factorId: string }
  | { kind: "factor-request"; userId: string; factorId: string }
  // The second step of a sign-in (second-step-keys.ts): any key of the user, for one ticket (its hash).
  | { kind: "second-step"; userId: string; ticketHash: string };

function challengeObject(deps: Deps, challenge: string) {
  return deps.env.WEBAUTHN_CHALLENGES.get(deps.env.WEBAUTHN_CHALLENGES.idFromName(challenge));
}

export function assertWebauthnEnabled(deps: Deps): void {
  if (!deps.config.webauthn.enabled) throw new AppError("disabled-endpoint");
}

export async function startCeremony(deps: Deps, challenge: string, ceremony: Ceremony): Promise<void> {
  await challengeObject(deps, challenge).put(ceremony, deps.now() + CEREMONY_TIMEOUT_MS);
}

/**
 * What failed, for a face whose API names it (GoTrue's `webauthn_challenge_not_found`, `webauthn_credential_exists`,
 * `webauthn_verification_failed`): `challenge`, no challenge to answer (unknown, expired, used, issued for another
 * ceremony or another user); `registered`, the credential is already on an account; `response`, anything else.
 */
export type CeremonyStage = "challenge" | "registered" | "response";

/** Every failed ceremony is the same 400 on the Nhost API (contract §3.2); the precise reason goes to the log. */
export class CeremonyError extends AppError {
  constructor(
    reason: string,
    readonly stage: CeremonyStage,
    message = "invalid WebAuthn response",
  ) {
    super("invalid-request", message, reason);
  }
}

/**
 * The one failure the answer names (docs/passkeys.md): the credential is positively not one of the user's (their
 * shard was read and holds no such key, and they have no WebAuthn second factor it could be). The pages then tell
 * the password manager (`PublicKeyCredential.signalUnknownCredential`, WebAuthn L3 §5.1.10.1) so it stops offering
 * it. A credential id is random: naming it unknown says nothing about any account.
 */
export const UNKNOWN_CREDENTIAL_MESSAGE = "invalid WebAuthn response: unknown credential";
export const unknownCredential = () =>
  new CeremonyError("unknown credential", "response", UNKNOWN_CREDENTIAL_MESSAGE);

export const ceremonyFailed = (reason: string, stage: CeremonyStage = "response") =>
  new CeremonyError(reason, stage);

/**
 * The challenge a response answers is the one inside its `clientDataJSON`. It is taken (read and deleted) from its
 * Durable Object before anything is verified: an unknown, expired or already used challenge ends the ceremony, and
 * the library then checks that the signed client data carries exactly this challenge.
 */
export async function takeCeremony<K extends Ceremony["kind"]>(
  deps: Deps,
  clientDataJSON: string,
  kind: K,
): Promise<{ challenge: string; ceremony: Extract<Ceremony, { kind: K }> }> {
  let challenge: unknown;
  try {
    challenge = JSON.parse(isoBase64URL.toUTF8String(clientDataJSON)).challenge;
  } catch {
    throw ceremonyFailed("clientDataJSON is not base64url JSON");
  }
  if (typeof challenge !== "string" || challenge.length === 0 || challenge.length > 256) {
    throw ceremonyFailed("clientDataJSON has no challenge");
  }
  const ceremony = (await challengeObject(deps, challenge).take(deps.now())) as Ceremony | null;
  if (!ceremony) throw ceremonyFailed("unknown, expired or used challenge", "challenge");
  if (ceremony.kind !== kind) {
    throw ceremonyFailed(`challenge was issued for ${ceremony.kind}, not ${kind}`, "challenge");
  }
  return { challenge, ceremony: ceremony as Extract<Ceremony, { kind: K }> };
}

/**
 * What every response is checked against: the challenge it answers, one of the accepted origins (the RP's own and
 * its related origins, WebAuthn L3 §5.11), the relying party id. User verification is `preferred` in the options, so
 * it is not required here (WebAuthn §7.1 step 17).
 */
export function expectations(deps: Deps, challenge: string) {
  const { rpId, origins, relatedOrigins } = deps.config.webauthn;
  return {
    expectedChallenge: challenge,
    expectedOrigin: [...new Set([...origins, ...relatedOrigins])],
    expectedRPID: rpId,
    requireUserVerification: false,
  };
}

/** The library's own failures (bad signature, wrong origin, counter…) become the ceremony's 400. */
export async function verified<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    throw ceremonyFailed(error instanceof Error ? error.message : String(error));
  }
}
