import { z } from "zod";
import type { Config } from "../config";
import { AppError } from "../errors";
import { metadataSchema } from "../lib/json-metadata";
import { isRedirectAllowedBy } from "../lib/redirect";

/**
 * Display names: letters (with combining marks), digits, symbols, space , . ' - as the contract says, less the
 * characters that are markup in HTML (< > & " `): display names end up in mails and pages. Recorded in
 * docs/decisions.md. A client's name that breaks the rule is refused; a provider's is made to follow it.
 */
const DISPLAY_NAME_MAX = 32;
const DISPLAY_NAME_CHARACTER = /(?![<>&"`])[\p{L}\p{M}\p{N}\p{S} ,.'-]/u;

/** A provider's name under the same rule: other characters dropped, spaces collapsed, cut to the maximum length. */
export function conformingDisplayName(raw: string): string {
  const kept = Array.from(raw.normalize("NFC"))
    .filter((character) => DISPLAY_NAME_CHARACTER.test(character))
    .join("")
    .replace(/\s+/g, " ")
    .trim();
  // The schema counts UTF-16 units: cut there, without splitting a character.
  let cut = "";
  for (const character of kept) {
    if (cut.length + character.length > DISPLAY_NAME_MAX) break;
    cut += character;
  }
  return cut.trim();
}

/** SignUpOptions of contract §2; unknown keys are refused. */
export const signUpOptionsSchema = z.strictObject({
  allowedRoles: z.array(z.string().min(1).max(100)).max(50).optional(),
  defaultRole: z.string().min(1).max(100).optional(),
  displayName: z
    .string()
    .max(DISPLAY_NAME_MAX)
    .regex(
      new RegExp(`^(?:${DISPLAY_NAME_CHARACTER.source})*$`, "u"),
      "may hold letters, digits, symbols, spaces and , . ' -",
    )
    .optional(),
  locale: z.string().min(2).max(3).optional(),
  metadata: metadataSchema.optional(),
  redirectTo: z.string().max(2048).optional(),
});

export type SignUpOptions = z.infer<typeof signUpOptionsSchema>;

export interface ResolvedSignUpOptions {
  allowedRoles: string[];
  defaultRole: string;
  displayName: string;
  locale: string;
  metadata: Record<string, unknown>;
  redirectTo: string;
}

/** Applies the defaults of contract §2 and checks redirectTo, then roles, in the contract's order. */
export function resolveSignUpOptions(
  config: Config,
  options: SignUpOptions | undefined,
  fallbackDisplayName: string,
): ResolvedSignUpOptions {
  const redirectTo = resolveRedirectTo(config, options?.redirectTo);
  const allowedRoles = options?.allowedRoles ?? config.roles.allowed;
  if (!allowedRoles.every((role) => config.roles.allowed.includes(role))) {
    throw new AppError("role-not-allowed");
  }
  const defaultRole = options?.defaultRole ?? config.roles.default;
  if (!allowedRoles.includes(defaultRole)) throw new AppError("default-role-must-be-in-allowed-roles");
  const locale =
    options?.locale && config.locales.allowed.includes(options.locale)
      ? options.locale
      : config.locales.default;
  return {
    allowedRoles: [...new Set(allowedRoles)],
    defaultRole,
    displayName: options?.displayName || fallbackDisplayName,
    locale,
    metadata: options?.metadata ?? {},
    redirectTo,
  };
}

export function resolveRedirectTo(config: Config, redirectTo: string | undefined): string {
  if (redirectTo === undefined) return config.urls.defaultRedirect;
  if (!isRedirectAllowedBy(config, redirectTo)) {
    throw new AppError("redirectTo-not-allowed");
  }
  return redirectTo;
}
