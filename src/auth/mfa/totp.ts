import { encodeBase32UpperCaseNoPadding } from "@oslojs/encoding";
import { createTOTPKeyURI, generateHOTP } from "@oslojs/otp";
import { timingSafeEqualString } from "../../lib/crypto";

/**
 * TOTP of RFC 6238 as every authenticator app does it: HMAC-SHA-1, 6 digits, 30-second steps. The clock is a
 * parameter (never `Date.now()` inside), so the checks are exact under test.
 */
const PERIOD_SECONDS = 30;
const DIGITS = 6;
/** ±1 step: RFC 6238 §5.2 recommends at most one step of network and clock delay either way. */
const DRIFT_STEPS = 1n;

/** 160-bit secret (RFC 4226 §4 recommends 160 bits) from the platform CSPRNG. */
export function generateTotpSecret(): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(20));
}

/** The secret as authenticator apps take it when typed in: base32 without padding. */
export const totpSecretText = (secret: Uint8Array): string => encodeBase32UpperCaseNoPadding(secret);

export function totpStep(nowMs: number): bigint {
  return BigInt(Math.floor(nowMs / 1000 / PERIOD_SECONDS));
}

export function totpCode(secret: Uint8Array, step: bigint): string {
  return generateHOTP(secret, step, DIGITS);
}

/** The time step whose code `code` is, within the drift window around `nowMs`; null when none matches. */
export function matchTotp(secret: Uint8Array, code: string, nowMs: number): bigint | null {
  if (!/^\d{6}$/.test(code)) return null;
  const current = totpStep(nowMs);
  let matched: bigint | null = null;
  // Every candidate is compared, so the time taken does not tell which step matched.
  for (let step = current - DRIFT_STEPS; step <= current + DRIFT_STEPS; step++) {
    if (timingSafeEqualString(totpCode(secret, step), code) && matched === null) matched = step;
  }
  return matched;
}

/** The `otpauth://totp/…` URI (Key Uri Format) that the QR code carries. */
export function totpUri(issuer: string, accountName: string, secret: Uint8Array): string {
  return createTOTPKeyURI(issuer, accountName, secret, PERIOD_SECONDS, DIGITS);
}
