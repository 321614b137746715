import { z } from "zod";
import { codeChallengeSchema } from "../lib/pkce";

/** Field schemas shared by several routes. */
export const emailField = z.email().max(254);
/** The contract bounds passwords at 50 by schema; the policy minimum is checked by the service for its own code. */
export const passwordField = z.string().min(1).max(50);
export const refreshTokenField = z.string().min(1).max(100);
/** `options` of the operations that only take a redirect (`OptionsRedirectTo`). */
export const redirectOptions = z.strictObject({ redirectTo: z.string().max(2048).optional() }).optional();
/** PKCE S256 challenge of the mailed links (client.md §15). */
export const codeChallengeField = codeChallengeSchema.optional();
