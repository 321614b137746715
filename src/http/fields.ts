import { z } from "zod";

/** Field schemas shared by several routes. */
export const emailField = z.email().max(254);
/** The contract bounds passwords at 50 by schema; the policy minimum is checked by the service for its own code. */
export const passwordField = z.string().min(1).max(50);
export const refreshTokenField = z.string().min(1).max(100);
/** `options` of the operations that only take a redirect (`OptionsRedirectTo`). */
export const redirectOptions = z.strictObject({ redirectTo: z.string().max(2048).optional() }).optional();
/** PKCE S256 challenge (RFC 7636 §4.2): base64url of a SHA-256 digest, 43 characters. */
export const codeChallengeField = z
  .string()
  .regex(/^[A-Za-z0-9_-]{43}$/, "must be the base64url SHA-256 of a code verifier (S256)")
  .optional();
