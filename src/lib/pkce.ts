import { calculatePKCECodeChallenge } from "oauth4webapi";
import { z } from "zod";
import { timingSafeEqualString } from "./crypto";

/**
 * PKCE (RFC 7636), the one place its rules live: the OAuth2 token endpoint (`code_verifier`), the mailed links' exchange
 * codes (`codeVerifier`, client.md §15) and the challenge a client sends (`code_challenge`, `codeChallenge`). Only
 * S256: `plain` protects nothing once the challenge has been seen (RFC 9700 §2.1.1).
 */

/** RFC 7636 §4.1: a verifier is 43 to 128 characters of the unreserved set. */
export const CODE_VERIFIER_PATTERN = /^[A-Za-z0-9._~-]{43,128}$/;

/** RFC 7636 §4.2: an S256 challenge is the base64url SHA-256 of a verifier, 43 characters without padding. */
export const CODE_CHALLENGE_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export const codeVerifierSchema = z
  .string()
  .regex(CODE_VERIFIER_PATTERN, "must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~");

export const codeChallengeSchema = z
  .string()
  .regex(CODE_CHALLENGE_PATTERN, "must be the base64url SHA-256 of a code verifier (S256)");

/**
 * RFC 7636 §4.6: whether BASE64URL(SHA256(ASCII(verifier))) is `challenge`. A verifier of the wrong shape never
 * matches; the comparison is constant time, so an answer's timing says nothing about how much of it was right.
 */
export async function verifierMatches(verifier: string, challenge: string): Promise<boolean> {
  if (!CODE_VERIFIER_PATTERN.test(verifier)) return false;
  return timingSafeEqualString(await calculatePKCECodeChallenge(verifier), challenge);
}
