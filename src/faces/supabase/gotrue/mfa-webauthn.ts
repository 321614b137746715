import { z } from "zod";
import {
  authenticationCredential,
  challengeWebauthnFactor,
  type Factor,
  FactorError,
  registrationCredential,
  verifyWebauthnFactor,
  type WebauthnAnswer,
} from "../../../auth";
import type { UserRow } from "../../../db/schema";
import type { Deps } from "../../../http/deps";
import { GoTrueError } from "./errors";
import { factorRefusal } from "./mfa-wire";

/**
 * The `webauthn` branch of auth-js's `mfa.challenge` / `mfa.verify` (and so `mfa.webauthn.*`), over the core's
 * `webauthn` factors (src/auth/mfa/webauthn-factors.ts). The client's `rpId` and `rpOrigins` are read and ignored:
 * the relying party and its origins are the service's own settings (`AUTH_WEBAUTHN_RP_ID`, `…_RP_ORIGINS`), so a
 * page cannot have a key made for, or an assertion checked against, a relying party of its choosing.
 */

/** GoTrue's `WebAuthnParams`: what auth-js sends beside the challenge id. */
const webauthnParams = z.object({
  type: z.string().max(16).nullish(),
  rpId: z.string().max(256).nullish(),
  rpOrigins: z.array(z.string().max(2048)).max(16).nullish(),
  credential_response: z.unknown().optional(),
});

/** WebAuthn switched off: GoTrue's `mfa_webauthn_{enroll,verify}_not_enabled`. */
export function webauthnDisabled(deps: Deps, step: "enroll" | "verify"): void {
  if (deps.config.webauthn.enabled && deps.config.mfa.enabled) return;
  const word = step === "enroll" ? "enroll" : "verification";
  throw new GoTrueError(422, `mfa_webauthn_${step}_not_enabled`, `MFA ${word} is disabled for WebAuthn`);
}

/** GoTrue's challenge answer: `create` options for an unverified factor, `request` options for a verified one. */
export async function webauthnChallenge(deps: Deps, user: UserRow, factor: Factor) {
  webauthnDisabled(deps, "verify");
  const challenge = await challengeWebauthnFactor(deps, user, factor);
  return {
    id: challenge.id,
    type: "webauthn" as const,
    expires_at: Math.floor(challenge.expiresAt / 1000),
    webauthn: { type: challenge.type, credential_options: { publicKey: challenge.options } },
  };
}

/** The `webauthn` body checked as GoTrue checks it, the response against the core's own credential schemas. */
function answerOf(raw: unknown): WebauthnAnswer {
  const parsed = webauthnParams.safeParse(raw);
  if (raw === undefined || raw === null || !parsed.success) {
    throw new GoTrueError(400, "validation_failed", "WebAuthn config required");
  }
  const { type, credential_response: response } = parsed.data;
  if (type !== "create" && type !== "request") {
    throw new GoTrueError(400, "validation_failed", "WebAuthn type must be create or request");
  }
  if (response === undefined || response === null) {
    throw new GoTrueError(400, "validation_failed", "credential_response required");
  }
  const schema = type === "create" ? registrationCredential : authenticationCredential;
  const credential = schema.safeParse(response);
  if (!credential.success) throw new GoTrueError(400, "validation_failed", "Invalid credential_response");
  return { type, response: credential.data } as WebauthnAnswer;
}

/** The answer verified (the factor verified by a `create`); the caller then steps the session up. */
export async function verifyWebauthnAnswer(
  deps: Deps,
  user: UserRow,
  factor: Factor,
  body: { challenge_id: string; webauthn?: unknown },
): Promise<void> {
  webauthnDisabled(deps, "verify");
  const answer = answerOf(body.webauthn);
  await verifyWebauthnFactor(deps, user, factor, { challengeId: body.challenge_id, ...answer }).catch(
    (error: unknown) => {
      if (error instanceof FactorError && error.reason === "wrong-code") {
        throw new GoTrueError(400, "webauthn_verification_failed", "WebAuthn verification failed");
      }
      return factorRefusal(error, factor, body.challenge_id);
    },
  );
}
